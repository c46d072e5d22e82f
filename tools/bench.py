"""``make bench``: Rodada side by side with a boardgame.io reference, in one sitting.

Throughput (issue 15): for each number of concurrent matches (10 and 50), the
boardgame.io 0.50 reference (``bench/reference``: its server and Node driver)
and Rodada's paths, driven by Node load generators of the same runtime
(``bench/rodada``) with the same game, move mix and match counts:

- **gRPC**: the Yatzy service's own MatchService over ``@grpc/grpc-js``
  (CreateMatch, then Act by each seat), no gateway: issue 15's "gRPC path",
  the row its first table measured.
- **gRPC via the gateway**: the same over the gateway's PlatformService, as a
  mobile app plays (guests, CreateTable, StartTable, Act). Shown for
  reference; the targets are for the two other paths.
- **web**: the gateway's HTTP API (``undici``) with a WebSocket feed per seat
  (``ws``).

Each row has moves/s, p50/p99, CPU per move of every process (the servers
from ``/proc/<pid>/stat`` before and after the driver; the drivers' own) and
the ratio to the reference run at the same match count, and "CPU × ref": the
reference's CPU per move (every process, drivers included) over the row's, the
ratio two cores would allow if CPU were the only limit, which holds up on a
busy machine where moves/s do not. Then, in process,
every game's engine apply median; the Redis memory of active matches and
their events (``MEMORY USAGE``); and a burst of casual tickets formed into
tables on one gateway, checked to seat every ticket exactly once.

Every stack is our own on loopback (``tools.stack.Stack``) and stopped at
the end. Environment: BENCH_SECONDS (10), BENCH_MATCHES ("10,50"),
BENCH_PLAYERS (1: solo, as the reference's default; 2: duel),
BENCH_THROWS (3), BENCH_TICKETS (5000), BENCH_PATHS
("reference,grpc,platform,web"), BENCH_JSON (a file to write every result to).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.kit.tokens import Identity
from tools import bench_engine, bench_matchmaking, bench_memory
from tools.stack import Stack

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "bench" / "reference"
DRIVERS = ROOT / "bench" / "rodada"
TICKS = os.sysconf("SC_CLK_TCK")
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
    players: int = 1
    throws: int = 3
    tickets: int = 5000
    paths: tuple[str, ...] = ("reference", "grpc", "platform", "web")

    @classmethod
    def from_env(cls) -> Settings:
        env = os.environ
        paths = tuple(p for p in env.get("BENCH_PATHS", ",".join(PATH_NAMES)).split(",") if p)
        unknown = set(paths) - set(PATH_NAMES)
        if unknown:
            raise SystemExit(f"BENCH_PATHS: unknown {sorted(unknown)}; known: {', '.join(PATH_NAMES)}")
        return cls(
            seconds=float(env.get("BENCH_SECONDS", "10")),
            matches=tuple(int(m) for m in env.get("BENCH_MATCHES", "10,50").split(",") if m),
            players=int(env.get("BENCH_PLAYERS", "1")),
            throws=int(env.get("BENCH_THROWS", "3")),
            tickets=int(env.get("BENCH_TICKETS", "5000")),
            paths=paths,
        )


@dataclass
class Row:
    path: str
    matches: int
    result: dict[str, Any]
    # CPU ms per move, by process (servers, then the driver).
    cpu: dict[str, float] = field(default_factory=dict)
    other_cpu_s: float = 0.0


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
    spent while it ran (and "other": the rest of the machine's)."""
    busy = machine_busy_seconds()
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    proc = subprocess.run(["node", *args], capture_output=True, text=True, timeout=timeout, check=False)
    spent = {name: cpu_seconds(pid) - before[name] for name, pid in pids.items()}
    if proc.returncode != 0:
        raise RuntimeError(f"{args[0]} exited {proc.returncode}: {proc.stderr[-2000:]}")
    result = last_json(proc.stdout, "moves")
    spent["other"] = machine_busy_seconds() - busy - sum(spent.values()) - result["driver_cpu_s"]
    return result, spent


def per_move(seconds: float, moves: int) -> float:
    return round(seconds * 1000 / moves, 3) if moves else float("nan")


def reference_row(settings: Settings, matches: int) -> Row:
    args = [
        str(REFERENCE / "bench.js"),
        *("--matches", str(matches), "--seconds", str(settings.seconds)),
        *("--players", str(settings.players), "--throws", str(settings.throws)),
    ]
    proc = subprocess.run(
        ["node", *args], capture_output=True, text=True, timeout=settings.seconds + 120, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"reference bench exited {proc.returncode}: {proc.stderr[-2000:]}")
    result = last_json(proc.stdout, "moves")
    return Row(
        "reference",
        matches,
        result,
        {"server": result["server_cpu_ms_per_move"], "driver": result["driver_cpu_ms_per_move"]},
        result["other_cpu_s"],
    )


class Rodada:
    """One loopback platform (its Redis, the Yatzy service, one gateway) for
    every Rodada row, so rows compare at the same state."""

    def __init__(self, root: Path, settings: Settings) -> None:
        self.settings = settings
        self.stack = Stack(root, games=["yatzy"])
        self.gateway_url = self.stack.gateway()
        self.platform = self.stack.platform_grpc()
        assert self.stack.redis and self.stack.redis.process
        self.pids = {
            "yatzy": self.stack.processes["yatzy"].pid,
            "gateway": self.stack.processes["gateway"].pid,
            "redis": self.stack.redis.process.pid,
        }
        # Seats for the direct path: the platform's token and one user per seat.
        most = max(settings.matches) * max(settings.players, 2)
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
        seats = players or s.players
        common = ["--matches", str(matches), "--seconds", str(s.seconds), "--players", str(seats)]
        common += ["--throws", str(s.throws)]
        if path == "grpc":
            args = [
                str(DRIVERS / "grpc_driver.js"),
                "--target",
                "service",
                "--address",
                self.stack.service("yatzy"),
            ]
            args += ["--tokens", str(self.tokens), *common]
            pids = {k: v for k, v in self.pids.items() if k != "gateway"}
        elif path == "platform":
            args = [
                str(DRIVERS / "grpc_driver.js"),
                "--target",
                "platform",
                "--address",
                self.platform,
                *common,
            ]
            pids = dict(self.pids)
        else:
            args = [str(DRIVERS / "web_driver.js"), "--gateway", self.gateway_url, *common]
            pids = dict(self.pids)
        result, spent = run_driver(args, s.seconds + 120, pids)
        moves = result["moves"]
        cpu = {name: per_move(seconds, moves) for name, seconds in spent.items() if name != "other"}
        cpu["driver"] = per_move(result["driver_cpu_s"], moves)
        return Row(path, matches, result, cpu, round(max(0.0, spent["other"]), 2))

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


def table(rows: list[Row]) -> str:
    """The side-by-side table, in Markdown."""
    references = {row.matches: row.result for row in rows if row.path == "reference"}
    lines = [
        "| system | matches | moves/s | × ref | p50 ms | p99 ms | p99 × ref | CPU ms/move by process | "
        "CPU × ref | other CPU s | faults |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|",
    ]
    reference_cpu = {row.matches: sum(row.cpu.values()) for row in rows if row.path == "reference"}
    for row in rows:
        r, ref = row.result, references.get(row.matches, {})
        # The reference's CPU per move (every process, drivers included) over
        # this row's: the throughput ratio two cores would allow if CPU were
        # the only limit. It holds up on a busy machine, where moves/s do not.
        cpu_ratio = ratio(reference_cpu.get(row.matches), sum(row.cpu.values()))
        cpu = " · ".join(f"{name} {ms:.3f}" for name, ms in row.cpu.items())
        extra = ""
        if r.get("feed_p99_ms") is not None:
            extra = f" (feed p50 {r['feed_p50_ms']:.2f}, p99 {r['feed_p99_ms']:.1f})"
        lines.append(
            f"| {PATH_NAMES[row.path]} | {row.matches} | {r['moves_per_second']:,.0f} | "
            f"{ratio(r['moves_per_second'], ref.get('moves_per_second'))} | {r['p50_ms']:.2f} | "
            f"{r['p99_ms']:.1f}{extra} | {ratio(r['p99_ms'], ref.get('p99_ms'))} | {cpu} | "
            f"{cpu_ratio} | {row.other_cpu_s:.1f} | {faults(r)} |"
        )
    return "\n".join(lines)


def throughput(settings: Settings, root: Path) -> tuple[list[Row], bench_memory.Memory | None]:
    """Every row of the table, and the Redis memory of active matches on the
    same platform afterwards."""
    if "reference" in settings.paths:
        npm_ci(REFERENCE)
    npm_ci(DRIVERS)
    rodada = Rodada(root / "rodada", settings) if set(settings.paths) - {"reference"} else None
    rows: list[Row] = []
    try:
        # Interleaved, so a busy spell on the shared machine hits every system alike.
        for matches in settings.matches:
            for path in settings.paths:
                print(f"bench: {PATH_NAMES[path]}, {matches} matches, {settings.seconds:g} s", flush=True)
                if path == "reference":
                    rows.append(reference_row(settings, matches))
                else:
                    assert rodada is not None
                    rows.append(rodada.row(path, matches))
        return rows, bench_memory.measure(rodada.stack) if rodada is not None else None
    finally:
        if rodada is not None:
            rodada.stop()


def main() -> None:
    settings = Settings.from_env()
    report: dict[str, Any] = {"settings": settings.__dict__}
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rows, memory = throughput(settings, root)
        report["throughput"] = [row.__dict__ for row in rows]
        print("\n" + table(rows))
        if memory is not None:
            report["memory"] = memory.__dict__
            print("\n" + bench_memory.describe(memory))
        engine = bench_engine.engine_medians()
        report["engine_us"] = engine
        print(
            "\nengine apply, median µs per move (in process; goal ≤ 20): "
            + ", ".join(f"{name} {micros:.1f}" for name, micros in engine.items())
        )
        if settings.tickets:
            burst = bench_matchmaking.measure(root / "matchmaking", settings.tickets)
            report["matchmaking"] = {k: v for k, v in burst.items() if k != "results"}
            print("\n" + bench_matchmaking.describe(burst))
    print(f"\nbench: done in {time.monotonic() - started:.0f} s")
    if os.environ.get("BENCH_JSON"):
        Path(os.environ["BENCH_JSON"]).write_text(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
