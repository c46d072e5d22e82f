"""Matchmaking at scale (issue 15, point 5: ≥ 500 tables per second from a
burst of 5,000 tickets on one gateway, exactly once).

A stack of its own (Redis, the Bozó service, one gateway, the matcher's
production settings); guests' tokens minted here with the stack's key (as the
gateway's guest sign-up would issue them); ``bench/rodada/matchmaking.js``
queues every casual Bozó duel ticket at once and follows each over its
WebSocket until matched. The check: every ticket matched, every player in
exactly one seat, every table two distinct seats, and the gateway's own count
of tables formed equal to the tables the tickets name.

Beside tables/s, which a shared machine makes noisy, the steadier costs per
ticket over the driver's run: the gateway's CPU (ms), the commands Redis
processed (its ``total_commands_processed``: a script call and every command
it runs; the game service's commands included), and the growth of the gateway's resident memory
(KiB; what the burst left behind, not a peak). And what bounds the burst:
each process's CPU over the burst (gateway, Redis, the Bozó service, the
driver), as a share of one core over the burst's wall time, and the Redis
commands per ticket by name (``INFO commandstats``: ``evalsha`` is a script
call, the commands it runs are counted under their own names).

``python -m tools.bench_matchmaking`` runs the burst alone: BENCH_TICKETS
(5000), BENCH_TICKET_WORKERS (1), BENCH_BASELINE (another checkout's code,
for a before/after pair), BENCH_PYSPY (a file: py-spy records the gateway's
first process during the burst, raw format, 100 Hz; py-spy on the PATH or
beside this Python), BENCH_FLOOR (1: also the burst against a bare app on
the gateway's HTTP and WebSocket stack, tools/bench_matchmaking_floor.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import httpx
import redis

from services.core.tokens import Identity
from tools import bench_matchmaking_floor
from tools.bench_feeds import raise_open_files
from tools.sockets_held import children, listens
from tools.stack import Stack

DRIVER = Path(__file__).resolve().parent.parent / "bench" / "rodada" / "matchmaking.js"
SEATS = 2  # a Bozó duel


def tables_formed(metrics_url: str) -> float:
    """The gateway's rodada_matchmaking_matches_total for Bozó duels."""
    text = httpx.get(metrics_url, timeout=10).text
    total = 0.0
    for line in text.splitlines():
        found = re.fullmatch(r"rodada_matchmaking_matches_total\{(.*)\} (\S+)", line)
        if found and 'game="bozo"' in found.group(1) and 'mode="duel"' in found.group(1):
            total += float(found.group(2))
    return total


def round_trips(metrics_url: str) -> float:
    """The gateway's Redis round trips so far (rodada_redis_seconds_count:
    a pipeline is one, whatever it carries)."""
    text = httpx.get(metrics_url, timeout=10).text
    return sum(
        float(line.split()[-1]) for line in text.splitlines() if line.startswith("rodada_redis_seconds_count")
    )


def exactly_once(results: list[dict[str, Any]]) -> list[str]:
    """What is wrong with the tickets' final updates (nothing: [])."""
    problems: list[str] = []
    unmatched = [r for r in results if r["matched"] is None]
    if unmatched:
        problems.append(f"{len(unmatched)} tickets not matched, e.g. {unmatched[0]}")
    users = Counter(r["user_id"] for r in results)
    if any(n != 1 for n in users.values()) or len(set(r["ticket_id"] for r in results)) != len(results):
        problems.append("a player or ticket appears twice")
    tables: dict[str, list[int]] = defaultdict(list)
    for r in results:
        if r["matched"] is not None:
            tables[r["matched"]["table_id"]].append(r["matched"]["seat"])
    bad = {t: seats for t, seats in tables.items() if sorted(seats) != list(range(SEATS))}
    if bad:
        problems.append(
            f"{len(bad)} tables without exactly seats 0..{SEATS - 1}, e.g. {next(iter(bad.items()))}"
        )
    return problems


def cpu_seconds(pid: int) -> float:
    """The process's user + system CPU so far (tools/bench.py imports this
    module, so its own copy cannot be imported here)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def redis_commands(url: str) -> int:
    """Commands Redis has processed since it started (those a script runs
    included: an EVALSHA of ten calls counts eleven)."""
    with redis.Redis.from_url(url) as client:
        return int(cast(dict[str, Any], client.info("stats"))["total_commands_processed"])


def command_counts(url: str) -> dict[str, int]:
    """Calls so far of each command Redis has run (``INFO commandstats``)."""
    with redis.Redis.from_url(url) as client:
        stats = cast(dict[str, Any], client.info("commandstats"))
    return {name.removeprefix("cmdstat_"): int(fields["calls"]) for name, fields in stats.items()}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def total(measure: Callable[[int], float], pids: list[int]) -> float:
    return sum(measure(pid) for pid in pids)


def measure(
    root: Path,
    tickets: int,
    gateway_workers: int = 1,
    source: Path | None = None,
    profile: Path | None = None,
) -> dict[str, Any]:
    """The burst on one gateway of ``gateway_workers`` processes (WORKERS:
    the kernel deals the tickets' connections over them; the pod's one
    metrics page sums their tables), on this checkout's code or ``source``'s
    (a baseline checkout, for before/after pairs); with ``profile``, py-spy's
    samples of the gateway's (first) process during the burst go there."""
    # A socket per ticket on each side: the gateway started here inherits the limit.
    raise_open_files(tickets + 2000)
    with Stack(root, games=["bozo"], gateway_workers=gateway_workers, source=source) as stack:
        gateway = stack.gateway()
        if gateway_workers > 1:  # every worker listening before the burst
            wait_for_workers(stack, gateway_workers)
        before = tables_formed(stack.gateway_metrics_url())
        trips = round_trips(stack.gateway_metrics_url())
        # The gateway's process and, with workers, each of them.
        pids = [stack.processes["gateway"].pid, *children(stack.processes["gateway"].pid)]
        guests = [Identity(f"g_mm{i:05d}", f"mm{i}", "guest") for i in range(tickets)]
        tokens = root / "guests.json"
        tokens.write_text(json.dumps([{"user_id": g.user_id, "token": stack.token(g)} for g in guests]))
        others = {"bozo": stack.processes["bozo"].pid}
        if stack.redis and stack.redis.process:  # not a Redis the caller runs
            others["redis"] = stack.redis.process.pid
        other_cpu = {name: cpu_seconds(pid) for name, pid in others.items()}
        cpu, commands, rss = total(cpu_seconds, pids), redis_commands(stack.redis_url), total(rss_kib, pids)
        by_name = command_counts(stack.redis_url)
        spy = None
        if profile is not None:
            command = [py_spy(), "record", "--pid", str(pids[-1]), "--rate", "100", "--format", "raw"]
            spy = subprocess.Popen(
                [*command, "--duration", "600", "-o", str(profile)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        proc = subprocess.run(
            ["node", str(DRIVER), "--gateway", gateway, "--tickets", str(tickets), "--tokens", str(tokens)],
            stdout=subprocess.PIPE,  # progress on stderr shows as it goes
            text=True,
            timeout=900,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"matchmaking.js exited {proc.returncode}")
        burst: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
        if spy is not None:  # SIGINT: py-spy writes what it has
            spy.send_signal(2)
            spy.wait(60)
        cpu, commands = total(cpu_seconds, pids) - cpu, redis_commands(stack.redis_url) - commands
        rss = total(rss_kib, pids) - rss
        other_cpu = {name: cpu_seconds(others[name]) - used for name, used in other_cpu.items()}
        after = command_counts(stack.redis_url)
        by_name = {name: n - by_name.get(name, 0) for name, n in after.items() if n > by_name.get(name, 0)}
        formed = tables_formed(stack.gateway_metrics_url()) - before
        trips = round_trips(stack.gateway_metrics_url()) - trips
    tables = len({r["matched"]["table_id"] for r in burst["results"] if r["matched"]})
    problems = exactly_once(burst["results"])
    if formed != tables:
        problems.append(f"the gateway counted {formed:.0f} tables formed, the tickets name {tables}")
    process_cpu = {"gateway": cpu, **other_cpu, "driver": burst["driver_cpu_s"]}
    return {
        **burst,
        "gateway_workers": gateway_workers,
        # Each process's CPU over the burst as a share of one core over its
        # wall time (first ticket to last final): near 1.0 is saturated.
        "core_share": {name: round(s / burst["seconds"], 2) for name, s in process_cpu.items()},
        "cpu_ms_per_ticket": {name: round(s * 1000 / tickets, 3) for name, s in process_cpu.items()},
        "redis_calls_per_ticket": {
            name: round(n / tickets, 2) for name, n in sorted(by_name.items(), key=lambda kv: -kv[1])
        },
        "tables": tables,
        "tables_per_second": round(tables / burst["seconds"], 1) if burst["seconds"] else None,
        "gateway_cpu_ms_per_ticket": round(cpu * 1000 / tickets, 3),
        "redis_commands_per_ticket": round(commands / tickets, 1),
        "gateway_round_trips_per_ticket": round(trips / tickets, 2),
        "gateway_rss_kib_per_ticket": round(rss / tickets, 2),
        "exactly_once": not problems,
        "problems": problems,
    }


def py_spy() -> str:
    beside = Path(sys.executable).parent / "py-spy"
    found = str(beside) if beside.exists() else shutil.which("py-spy")
    if found is None:
        raise RuntimeError("BENCH_PYSPY: no py-spy (pip install py-spy; not a dependency)")
    return found


def wait_for_workers(stack: Stack, workers: int, timeout: float = 30.0) -> None:
    supervisor = stack.processes["gateway"].pid
    deadline = time.monotonic() + timeout
    while not (
        len(found := children(supervisor)) == workers
        and all(listens(pid, stack.gateway_port) for pid in found)
    ):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the gateway's {workers} workers not listening in {timeout:.0f} s")
        time.sleep(0.1)


def describe(burst: dict[str, Any], one: dict[str, Any] | None = None) -> str:
    """One line; with ``one`` (the same burst on a gateway of one worker),
    the ratio of tables per second to it."""
    workers = f" of {burst['gateway_workers']} workers" if burst.get("gateway_workers", 1) > 1 else ""
    ratio = ""
    if one is not None and one is not burst and one.get("tables_per_second") and burst["tables_per_second"]:
        ratio = f", {burst['tables_per_second'] / one['tables_per_second']:.2f}× one worker's"
    check = (
        "every ticket seated exactly once"
        if burst["exactly_once"]
        else "exactly-once check failed: " + "; ".join(burst["problems"])
    )
    return (
        f"matchmaking: {burst['tickets']:,} casual Bozó duel tickets on one gateway{workers}, queued in "
        f"{burst['queue_seconds']:.1f} s ({burst['final_when_queued']:,} final by then), the last final "
        f"{burst['seconds']:.1f} s after the first: "
        f"{burst['tables']:,} tables = {burst['tables_per_second']:,.0f} tables/s (goal ≥ 500){ratio}; "
        f"{burst.get('reconnects', 0):,} ticket sockets lost and followed again; {check}; per ticket: "
        f"gateway CPU {burst['gateway_cpu_ms_per_ticket']:.2f} ms, "
        f"{burst['redis_commands_per_ticket']:.1f} Redis commands, "
        f"gateway RSS +{burst['gateway_rss_kib_per_ticket']:.1f} KiB"
    )


def details(burst: dict[str, Any]) -> str:
    """Where the burst's CPU went and what Redis ran, per ticket."""
    shares = ", ".join(
        f"{name} {share:.2f} ({burst['cpu_ms_per_ticket'][name]:.2f} ms/ticket)"
        for name, share in burst["core_share"].items()
    )
    calls = ", ".join(f"{name} {n:g}" for name, n in burst["redis_calls_per_ticket"].items())
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"  CPU, share of one core over the burst: {shares}\n"
        f"  the gateway's Redis round trips per ticket: {burst['gateway_round_trips_per_ticket']:.2f}\n"
        f"  Redis calls per ticket: {calls}\n  load at the end {load}"
    )


def main() -> None:
    env = os.environ
    tickets = int(env.get("BENCH_TICKETS", "5000"))
    workers = int(env.get("BENCH_TICKET_WORKERS", "1"))
    source = Path(env["BENCH_BASELINE"]).resolve() if env.get("BENCH_BASELINE") else None
    profile = Path(env["BENCH_PYSPY"]).resolve() if env.get("BENCH_PYSPY") else None
    print(f"load at the start {', '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        burst = measure(Path(tmp), tickets, workers, source, profile)
        print(describe(burst))
        print(details(burst))
        if env.get("BENCH_FLOOR") == "1":
            floor = bench_matchmaking_floor.measure(Path(tmp) / "floor", tickets)
            print(
                f"floor (a bare app on the gateway's HTTP and WebSocket stack, the same driver): "
                f"{floor['server_cpu_ms_per_ticket']:.2f} ms a ticket (driver "
                f"{floor['driver_cpu_ms_per_ticket']:.2f} ms), {tickets:,} tickets in "
                f"{floor['seconds']:.1f} s; "
                f"load {', '.join(f'{x:.2f}' for x in os.getloadavg())}"
            )


if __name__ == "__main__":
    main()
