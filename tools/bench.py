"""``make bench``: Rodada side by side with a boardgame.io reference, in one sitting.

Throughput (issues 15 and 22): for each number of concurrent matches (10
and 50) and of players a match (solo and duel), the boardgame.io 0.50
reference at its best (``bench/reference``: its server, and a driver on raw
socket.io-client sockets, WebSocket only, reused across matches) and
Rodada's paths, driven by lean Node load generators of the same runtime
(``bench/rodada``) with the same game, move mix and match counts:

- **gRPC**: the Yatzy service's own MatchService over bare HTTP/2
  (``node:http2``; CreateMatch, then Act by each seat), no gateway: the
  "gRPC path" the targets name.
- **gRPC via the gateway**: the same over the gateway's PlatformService, as a
  mobile app plays (guests, CreateTable, StartTable, Act). Shown for
  reference; the targets are for the two other paths.
- **web**: the gateway's HTTP API over bare HTTP/1.1 keep-alive
  (by hand on ``node:net``) with a WebSocket feed per seat (``ws``).

Every driver plays a warm-up (BENCH_WARMUP seconds) first and announces its
window; every process's CPU is read from ``/proc/<pid>/stat`` at the window's
edges. Each row has moves/s, p50/p99, CPU per move of every process (drivers
included) and the ratio to the reference run at the same match count and
players, and "CPU × ref": the
reference's CPU per move (every process, drivers included) over the row's, the
ratio two cores would allow if CPU were the only limit, which holds up on a
busy machine where moves/s do not. Then the scale-out phase: the gRPC and
web paths at the largest match count on two service replicas behind two
gateways (the drivers deal their seats over both), and on one replica of
two processes sharing its port (WORKERS=2), each against the one-replica
row of the same run. Then the floors (``tools.bench_floors``,
same run): a bare grpc.aio unary echo, a bare ASGI request on the gateway's
server stack and a Redis EVALSHA, and every path's server CPU per move as a
multiple of its floor. Then, in process,
every game's engine apply median; the Redis memory of active matches and
their events (``MEMORY USAGE``); and a burst of casual tickets formed into
tables on one gateway of one worker, then of two (WORKERS), each checked to
seat every ticket exactly once.

Every stack is our own on loopback (``tools.stack.Stack``) and stopped at
the end. Environment: BENCH_SECONDS (10), BENCH_WARMUP (2), BENCH_MATCHES
("10,50"), BENCH_PLAYERS ("1,2": solo and duel rows), BENCH_THROWS (3),
BENCH_TICKETS (5000), BENCH_TICKET_WORKERS ("1,2": the matchmaking burst
on a gateway of that many processes each), BENCH_PATHS ("reference,grpc,platform,web"),
BENCH_FLOORS (1; 0 skips them), BENCH_SCALE (1; 0 skips the scale-out
phase), BENCH_JSON (a file to write every result
to), BENCH_BASELINE (another checkout of the code, e.g. ``git archive`` of an
earlier commit with this one's ``gen/``: its Rodada rows run in the same
sitting, interleaved, marked "before"). A row during which other processes took more than 5 % of the window's
CPU is marked: the machine was not quiet.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gateway.settings import GatewaySettings
from services.core.tokens import Identity
from tools import bench_engine, bench_floors, bench_matchmaking, bench_memory
from tools.sockets_held import listens
from tools.stack import Stack

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "bench" / "reference"
DRIVERS = ROOT / "bench" / "rodada"
TICKS = os.sysconf("SC_CLK_TCK")
# Production checks every move against ACTION_LIMIT (60 in any 10 s); a
# bench seat moves up to about 200 times a second, so the bench's limit is
# wider but kept the same way: a sliding window of at most a second's moves.
BENCH_ACTION_LIMIT = "1000/1"
PATH_NAMES = {
    "reference": "boardgame.io 0.50.2",
    "grpc": "Rodada gRPC (service)",
    "platform": "Rodada gRPC via gateway",
    "web": "Rodada web + feeds",
}


@dataclass
class Settings:
    seconds: float = 10.0
    matches: tuple[int, ...] = (10, 50)
    players: tuple[int, ...] = (1, 2)
    throws: int = 3
    tickets: int = 5000
    ticket_workers: tuple[int, ...] = (1, 2)
    paths: tuple[str, ...] = ("reference", "grpc", "platform", "web")
    warmup: float = 2.0
    floors: bool = True
    scale: bool = True
    baseline: Path | None = None

    @classmethod
    def from_env(cls) -> Settings:
        env = os.environ
        paths = tuple(p for p in env.get("BENCH_PATHS", ",".join(PATH_NAMES)).split(",") if p)
        unknown = set(paths) - set(PATH_NAMES)
        if unknown:
            raise SystemExit(f"BENCH_PATHS: unknown {sorted(unknown)}; known: {', '.join(PATH_NAMES)}")
        return cls(
            seconds=float(env.get("BENCH_SECONDS", "10")),
            warmup=float(env.get("BENCH_WARMUP", "2")),
            matches=tuple(int(m) for m in env.get("BENCH_MATCHES", "10,50").split(",") if m),
            players=tuple(int(p) for p in env.get("BENCH_PLAYERS", "1,2").split(",") if p),
            floors=env.get("BENCH_FLOORS", "1") not in ("", "0"),
            scale=env.get("BENCH_SCALE", "1") not in ("", "0"),
            baseline=Path(env["BENCH_BASELINE"]) if env.get("BENCH_BASELINE") else None,
            throws=int(env.get("BENCH_THROWS", "3")),
            tickets=int(env.get("BENCH_TICKETS", "5000")),
            ticket_workers=tuple(int(w) for w in env.get("BENCH_TICKET_WORKERS", "1,2").split(",") if w),
            paths=paths,
        )


@dataclass
class Row:
    path: str
    matches: int
    players: int
    result: dict[str, Any]
    # CPU ms per move, by process (servers, then the driver).
    cpu: dict[str, float] = field(default_factory=dict)
    other_cpu_s: float = 0.0
    before: bool = False  # measured on the baseline's code
    layout: str = ""  # the scale-out phase's: what served the row ("" for one of each)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def machine_busy_seconds() -> float:
    """Busy CPU seconds of the whole machine: the cores are shared."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = (
        int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:9]
    )
    return (user + nice + system + irq + softirq + steal) / TICKS


def npm_ci(directory: Path) -> None:
    """The drivers' pinned packages (the Makefile does this too)."""
    stamp = directory / "node_modules" / ".package-lock.json"
    lock = directory / "package-lock.json"
    if not stamp.exists() or stamp.stat().st_mtime < lock.stat().st_mtime:
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=directory, check=True)


def last_json(output: str, key: str) -> dict[str, Any]:
    for line in reversed(output.splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and key in value:
            return value
    raise RuntimeError(f"no JSON line with {key!r} in:\n{output[-2000:]}")


def run_driver(
    args: list[str], timeout: float, pids: Mapping[str, int]
) -> tuple[dict[str, Any], dict[str, float]]:
    """Run a Node driver; its JSON line and the CPU seconds each of ``pids``
    spent during its window (read when it announces the window's start and
    end; the warm-up before is not counted), and "other": the rest of the
    machine's."""
    proc = subprocess.Popen(
        ["node", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1
    )
    lines: list[str] = []
    before: dict[str, float] = {}
    spent: dict[str, float] = {}
    busy = 0.0
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    try:
        while True:
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise RuntimeError(f"{args[0]} gave no result in {timeout:.0f} s")
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if '"window"' not in line:
                continue
            edge = json.loads(line)["window"]
            if edge == "start":
                busy = machine_busy_seconds()
                before = {name: cpu_seconds(pid) for name, pid in pids.items()}
            elif edge == "end":
                spent = {name: cpu_seconds(pid) - before[name] for name, pid in pids.items()}
                busy = machine_busy_seconds() - busy
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = proc.stderr.read() if proc.stderr else ""
    if proc.returncode != 0:
        raise RuntimeError(f"{args[0]} exited {proc.returncode}: {stderr[-2000:]}")
    if not spent:
        raise RuntimeError(f"{args[0]} announced no window: {''.join(lines)[-2000:]}")
    result = last_json("".join(lines), "moves")
    spent["other"] = busy - sum(spent.values()) - result["driver_cpu_s"]
    return result, spent


def per_move(seconds: float, moves: int) -> float:
    return round(seconds * 1000 / moves, 3) if moves else float("nan")


class Reference:
    """The boardgame.io reference server (``bench/reference/server.js``,
    NODE_ENV=production as deployed), started once for its rows."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.process = subprocess.Popen(
            ["node", str(REFERENCE / "server.js"), "0"],
            env={**os.environ, "NODE_ENV": "production"},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], 30)
        line = self.process.stdout.readline() if ready else ""
        if not line:
            self.stop()
            raise RuntimeError("the reference server did not start")
        self.url = f"http://127.0.0.1:{json.loads(line)['port']}"

    def row(self, matches: int, players: int) -> Row:
        s = self.settings
        args = [
            str(REFERENCE / "driver.js"),
            *("--server", self.url, "--matches", str(matches), "--seconds", str(s.seconds)),
            *("--warmup", str(s.warmup), "--players", str(players), "--throws", str(s.throws)),
        ]
        result, spent = run_driver(args, s.warmup + s.seconds + 120, {"server": self.process.pid})
        moves = result["moves"]
        cpu = {"server": per_move(spent["server"], moves), "driver": per_move(result["driver_cpu_s"], moves)}
        return Row("reference", matches, players, result, cpu, round(max(0.0, spent["other"]), 2))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def reference_row(settings: Settings, matches: int, players: int = 1) -> Row:
    """One reference row on a server of its own."""
    reference = Reference(settings)
    try:
        return reference.row(matches, players)
    finally:
        reference.stop()


@dataclass(frozen=True)
class Layout:
    """How many of each server a platform runs: Yatzy service replicas (each
    a pod), gateway replicas, and processes per replica and per gateway
    (their WORKERS)."""

    replicas: int = 1
    gateways: int = 1
    workers: int = 1
    gateway_workers: int = 1

    def __str__(self) -> str:
        if self == Layout():
            return "1 replica, 1 gateway"
        each = f" of {self.workers} workers" if self.workers > 1 else ""
        gateway_each = f" of {self.gateway_workers} workers" if self.gateway_workers > 1 else ""
        return (
            f"{self.replicas} replica{'s' if self.replicas > 1 else ''}{each}, "
            f"{self.gateways} gateway{'s' if self.gateways > 1 else ''}{gateway_each}"
        )


# The scale-out phase: two replicas behind two gateways (the drivers deal
# their seats over both), one replica of two processes on one port, and one
# gateway of two processes on its ports.
SCALE_LAYOUTS = (Layout(replicas=2, gateways=2), Layout(workers=2), Layout(gateway_workers=2))


def worker_pids(
    stack: Stack, name: str, workers: int, port: int | None = None, timeout: float = 30.0
) -> list[int]:
    """The worker processes of a replica run with WORKERS (its supervisor's
    children), once every one of them serves: a game's say so in its log; a
    gateway's listen on ``port``."""
    supervisor = stack.processes[name].pid
    deadline = time.monotonic() + timeout
    while True:
        children = [
            int(pid) for pid in Path(f"/proc/{supervisor}/task/{supervisor}/children").read_text().split()
        ]
        if len(children) == workers and (
            all(listens(pid, port) for pid in children)
            if port is not None
            else stack.log_path(name).read_text().count("serving gRPC") >= workers
        ):
            return children
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name}: {workers} workers not serving in {timeout:.0f} s")
        time.sleep(0.1)


class Rodada:
    """One loopback platform (its Redis, the Yatzy service, one gateway, or
    as ``layout`` says) for every Rodada row, so rows compare at the same
    state."""

    def __init__(
        self, root: Path, settings: Settings, source: Path | None = None, layout: Layout = Layout()
    ) -> None:
        self.settings = settings
        self.before = source is not None
        self.layout = layout
        # The stack's test settings, but the deadline clock at production's
        # cycle (the tests' 0.2 s made it 2 % of a busy gateway), and every
        # move checked against an action limit as in production (a Redis
        # round trip a move), at a count the bench's bots never reach.
        env = {
            "CLOCK_CYCLE_SECONDS": str(GatewaySettings().clock_cycle_seconds),
            "ACTION_LIMIT": BENCH_ACTION_LIMIT,
        }
        if layout.workers > 1:
            env["WORKERS"] = str(layout.workers)
        self.stack = Stack(
            root,
            games=["yatzy"],
            source=source,
            replicas={"yatzy": layout.replicas},
            env=env,
            gateway_workers=layout.gateway_workers,
        )
        try:
            self.gateway_urls = [self.stack.gateway(i) for i in range(layout.gateways)]
            self.platforms = [self.stack.platform_grpc(i) for i in range(layout.gateways)]
            self.services = [self.stack.service("yatzy", i) for i in range(layout.replicas)]
        except BaseException:  # a process that did not come up: stop what did (its Redis too)
            self.stack.stop()
            raise
        assert self.stack.redis and self.stack.redis.process
        self.pids: dict[str, int] = {}
        for replica in range(layout.replicas):
            name = "yatzy" if replica == 0 else f"yatzy-{replica}"
            self.pids[name] = self.stack.processes[name].pid
            if layout.workers > 1:  # the supervisor's, then each worker's
                for worker, pid in enumerate(worker_pids(self.stack, name, layout.workers)):
                    self.pids[f"{name}/w{worker}"] = pid
        for replica in range(layout.gateways):
            name = "gateway" if replica == 0 else f"gateway-{replica}"
            self.pids[name] = self.stack.processes[name].pid
            if layout.gateway_workers > 1:
                port = self.stack.gateway_ports[replica]
                for worker, pid in enumerate(worker_pids(self.stack, name, layout.gateway_workers, port)):
                    self.pids[f"{name}/w{worker}"] = pid
        self.pids["redis"] = self.stack.redis.process.pid
        # Seats for the direct path: the platform's token and one user per seat.
        most = max(settings.matches) * 2
        self.tokens = root / "tokens.json"
        users = [Identity(f"u_bench{i:04d}", f"bench{i}", "user") for i in range(most)]
        self.tokens.write_text(
            json.dumps(
                {
                    "platform": self.stack.platform_metadata()[0][1].removeprefix("Bearer "),
                    "users": [{"user_id": u.user_id, "token": self.stack.token(u)} for u in users],
                }
            )
        )

    def row(self, path: str, matches: int, players: int | None = None) -> Row:
        s = self.settings
        seats = players or s.players[0]
        common = ["--matches", str(matches), "--seconds", str(s.seconds), "--players", str(seats)]
        common += ["--throws", str(s.throws), "--warmup", str(s.warmup)]
        if path == "grpc":
            args = [
                str(DRIVERS / "grpc_driver.js"),
                "--target",
                "service",
                "--address",
                ",".join(self.services),
            ]
            args += ["--tokens", str(self.tokens), *common]
            pids = {k: v for k, v in self.pids.items() if not k.startswith("gateway")}
        elif path == "platform":
            args = [
                str(DRIVERS / "grpc_driver.js"),
                "--target",
                "platform",
                "--address",
                ",".join(self.platforms),
                *common,
            ]
            pids = dict(self.pids)
        else:
            args = [str(DRIVERS / "web_driver.js"), "--gateway", ",".join(self.gateway_urls), *common]
            pids = dict(self.pids)
        result, spent = run_driver(args, s.warmup + s.seconds + 120, pids)
        moves = result["moves"]
        cpu = {name: per_move(seconds, moves) for name, seconds in spent.items() if name != "other"}
        cpu["driver"] = per_move(result["driver_cpu_s"], moves)
        other = round(max(0.0, spent["other"]), 2)
        layout = "" if self.layout == Layout() else str(self.layout)
        return Row(path, matches, seats, result, cpu, other, self.before, layout)

    def stop(self) -> None:
        self.stack.stop()


def ratio(value: float | None, reference: float | None) -> str:
    if not value or not reference:
        return "–"
    return f"{value / reference:.2f}×"


def faults(result: dict[str, Any]) -> str:
    counted = {k: result.get(k, 0) for k in ("unanswered", "mismatched", "errors", "feeds_missing_end")}
    text = ", ".join(f"{k} {v}" for k, v in counted.items() if v)
    return text or "none"


# Other processes may take this share of a window's CPU before the row is
# marked as measured on a machine that was not quiet.
QUIET_SHARE = 0.05


def quiet(row: Row) -> bool:
    return row.other_cpu_s <= QUIET_SHARE * 2 * max(row.result.get("seconds") or 0.0, 1e-9)


def server_cpu(row: Row) -> float:
    """CPU ms per move of the row's servers (every process but the driver)."""
    return sum(ms for name, ms in row.cpu.items() if name != "driver")


def table(rows: list[Row]) -> str:
    """The side-by-side table, in Markdown."""
    references = {(row.matches, row.players): row for row in rows if row.path == "reference"}
    lines = [
        "| system | matches | players | moves/s | × ref | p50 ms | p99 ms | p99 × ref | "
        "CPU ms/move by process | server CPU ms/move | CPU × ref | other CPU s | faults |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|",
    ]
    for row in rows:
        reference = references.get((row.matches, row.players))
        r, ref = row.result, reference.result if reference else {}
        # The reference's CPU per move (every process, drivers included) over
        # this row's: the throughput ratio two cores would allow if CPU were
        # the only limit. It holds up on a busy machine, where moves/s do not.
        cpu_ratio = ratio(sum(reference.cpu.values()) if reference else None, sum(row.cpu.values()))
        cpu = " · ".join(f"{name} {ms:.3f}" for name, ms in row.cpu.items())
        extra = ""
        if r.get("feed_p99_ms") is not None:
            extra = f" (feed p50 {r['feed_p50_ms']:.2f}, p99 {r['feed_p99_ms']:.1f})"
        other = f"{row.other_cpu_s:.1f}" + ("" if quiet(row) else " (not quiet)")
        name = PATH_NAMES[row.path] + (" (before)" if row.before else "")
        lines.append(
            f"| {name} | {row.matches} | {row.players} | {r['moves_per_second']:,.0f} | "
            f"{ratio(r['moves_per_second'], ref.get('moves_per_second'))} | {r['p50_ms']:.2f} | "
            f"{r['p99_ms']:.1f}{extra} | {ratio(r['p99_ms'], ref.get('p99_ms'))} | {cpu} | "
            f"{server_cpu(row):.3f} | {cpu_ratio} | {other} | {faults(r)} |"
        )
    return "\n".join(lines)


def quiet_note(rows: list[Row]) -> str:
    """Says whether the machine was quiet during the rows."""
    noisy = [row for row in rows if not quiet(row)]
    if not noisy:
        return "machine: quiet during every row (other processes took under 5 % of each window's CPU)"
    worst = max(row.other_cpu_s for row in noisy)
    return (
        f"machine: NOT QUIET during {len(noisy)} of {len(rows)} rows (other processes took up to "
        f"{worst:.1f} CPU s of a window): the moves/s and latencies are low and their ratios unsure; "
        "CPU per move is the steadier figure"
    )


def throughput(settings: Settings, root: Path) -> tuple[list[Row], bench_memory.Memory | None]:
    """Every row of the table, and the Redis memory of active matches on the
    same platform afterwards."""
    if "reference" in settings.paths:
        npm_ci(REFERENCE)
    npm_ci(DRIVERS)
    ours = set(settings.paths) - {"reference"}
    rodada = Rodada(root / "rodada", settings) if ours else None
    baseline = Rodada(root / "baseline", settings, settings.baseline) if ours and settings.baseline else None
    reference = Reference(settings) if "reference" in settings.paths else None
    rows: list[Row] = []
    try:
        # Interleaved, so a busy spell on the shared machine hits every system alike.
        for matches in settings.matches:
            for players in settings.players:
                for path in settings.paths:
                    print(
                        f"bench: {PATH_NAMES[path]}, {matches} matches of {players}, "
                        f"{settings.warmup:g} s warm-up + {settings.seconds:g} s",
                        flush=True,
                    )
                    if path == "reference":
                        assert reference is not None
                        rows.append(reference.row(matches, players))
                        continue
                    assert rodada is not None
                    if baseline is not None:
                        rows.append(baseline.row(path, matches, players))
                    rows.append(rodada.row(path, matches, players))
        return rows, bench_memory.measure(rodada.stack) if rodada is not None else None
    finally:
        if reference is not None:
            reference.stop()
        if baseline is not None:
            baseline.stop()
        if rodada is not None:
            rodada.stop()


def scale_out(settings: Settings, root: Path) -> list[Row]:
    """The scale-out phase: the gRPC and web paths at the largest match
    count, on each of :data:`SCALE_LAYOUTS` (a platform of its own each,
    stopped before the next starts)."""
    matches, players = max(settings.matches), settings.players[0]
    rows: list[Row] = []
    for n, layout in enumerate(SCALE_LAYOUTS):
        platform = Rodada(root / f"scale{n}", settings, layout=layout)
        try:
            for path in ("grpc", "web"):
                if path in settings.paths:
                    print(
                        f"bench: {PATH_NAMES[path]} on {layout}, {matches} matches of {players}, "
                        f"{settings.warmup:g} s warm-up + {settings.seconds:g} s",
                        flush=True,
                    )
                    rows.append(platform.row(path, matches, players))
        finally:
            platform.stop()
    return rows


def scale_table(scaled: list[Row], rows: list[Row]) -> str:
    """The scale-out rows against the same path's row on one replica in the
    same run (throughput, and server CPU per move: what the extra processes
    cost), in Markdown."""
    ones = {(row.path, row.matches, row.players): row for row in rows if not row.before}
    lines = [
        "| path | servers | matches | players | moves/s | × one | p50 ms | p99 ms | "
        "CPU ms/move by process | server CPU ms/move | × one | other CPU s |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for path in dict.fromkeys(row.path for row in scaled):
        of_path = [row for row in scaled if row.path == path]
        one = ones.get((path, of_path[0].matches, of_path[0].players))
        for each in [one, *of_path] if one is not None else of_path:
            r = each.result
            cpu = " · ".join(f"{name} {ms:.3f}" for name, ms in each.cpu.items())
            other = f"{each.other_cpu_s:.1f}" + ("" if quiet(each) else " (not quiet)")
            mps = ratio(r["moves_per_second"], one.result["moves_per_second"] if one else None)
            server = ratio(server_cpu(each), server_cpu(one) if one else None)
            lines.append(
                f"| {PATH_NAMES[each.path]} | {each.layout or Layout()} | {each.matches} | {each.players} | "
                f"{r['moves_per_second']:,.0f} | {mps} | {r['p50_ms']:.2f} | {r['p99_ms']:.1f} | {cpu} | "
                f"{server_cpu(each):.3f} | {server} | {other} |"
            )
    return "\n".join(lines)


def main() -> None:
    settings = Settings.from_env()
    report: dict[str, Any] = {"settings": settings.__dict__}
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rows, memory = throughput(settings, root)
        report["throughput"] = [row.__dict__ for row in rows]
        print("\n" + table(rows))
        print(quiet_note(rows))
        if settings.scale:
            scaled = scale_out(settings, root)
            report["scale_out"] = [row.__dict__ for row in scaled]
            print("\nscale-out, each against one replica and one gateway in this run:")
            print(scale_table(scaled, rows))
            print(quiet_note(scaled))
        if settings.floors:
            floors = bench_floors.measure(root / "floors", settings.seconds, settings.warmup)
            report["floors"] = floors
            print("\n" + bench_floors.describe(floors, rows))
        if memory is not None:
            report["memory"] = memory.__dict__
            print("\n" + bench_memory.describe(memory))
        engine = bench_engine.engine_medians()
        report["engine_us"] = engine
        print(
            "\nengine apply, median µs per move (in process; goal ≤ 20): "
            + ", ".join(f"{name} {micros:.1f}" for name, micros in engine.items())
        )
        bursts: dict[int, dict[str, Any]] = {}
        for workers in settings.ticket_workers if settings.tickets else ():
            burst = bench_matchmaking.measure(root / f"matchmaking{workers}", settings.tickets, workers)
            bursts[workers] = {k: v for k, v in burst.items() if k != "results"}
            print("\n" + bench_matchmaking.describe(burst, bursts.get(1) if workers != 1 else None))
            print(bench_matchmaking.details(burst))
        if bursts:
            report["matchmaking"] = bursts[min(bursts)]
            report["matchmaking_by_gateway_workers"] = bursts
    print(f"\nbench: done in {time.monotonic() - started:.0f} s")
    if os.environ.get("BENCH_JSON"):
        Path(os.environ["BENCH_JSON"]).write_text(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
