"""The benchmark's parts run and report what they say, against a real stack,
with tiny numbers for a couple of seconds. Nothing here is timed: the
numbers are checked for sense (moves made and shown, no faults, every field
present and consistent), never for speed."""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.kit.game import discover
from tools import (
    bench,
    bench_engine,
    bench_feeds,
    bench_floors,
    bench_matchmaking,
    bench_matchmaking_floor,
    bench_memory,
)
from tools.stack import Stack

pytestmark = pytest.mark.timeout(240)

SECONDS = 2.0
WARMUP = 0.5
MATCHES = 2


@pytest.fixture(scope="module")
def rodada(tmp_path_factory: pytest.TempPathFactory) -> Iterator[bench.Rodada]:
    bench.npm_ci(bench.DRIVERS)
    platform = bench.Rodada(
        tmp_path_factory.mktemp("bench"),
        bench.Settings(seconds=SECONDS, warmup=WARMUP, matches=(MATCHES,), players=(1,)),
    )
    try:
        yield platform
    finally:
        platform.stop()


def check_row(row: bench.Row, path: str, players: int, processes: set[str]) -> None:
    result = row.result
    assert row.path == path and result["matches"] == MATCHES and result["players"] == players
    assert row.players == players and result["warmup"] == WARMUP
    assert result["moves"] > 0 and result["matches_started"] >= MATCHES, result
    assert (result["unanswered"], result["mismatched"], result["errors"]) == (0, 0, 0), result
    assert result["first_error"] is None
    assert result["seconds"] >= SECONDS
    assert math.isclose(result["moves_per_second"], result["moves"] / result["seconds"], rel_tol=0.01)
    assert 0 < result["p50_ms"] <= result["p99_ms"]
    assert result["throws"] == 3
    # Every process measured, each with a CPU share; the driver always spends some.
    assert set(row.cpu) == processes | {"driver"}
    assert all(ms >= 0 for ms in row.cpu.values()) and row.cpu["driver"] > 0
    assert row.other_cpu_s >= 0


@pytest.mark.parametrize("players", [1, 2])
def test_grpc_driver_plays_through_the_game_service(rodada: bench.Rodada, players: int) -> None:
    row = rodada.row("grpc", MATCHES, players)
    check_row(row, "grpc", players, {"yatzy", "redis"})
    assert row.result["path"] == "grpc-service"


@pytest.mark.parametrize("players", [1, 2])
def test_grpc_driver_plays_through_the_platform_face(rodada: bench.Rodada, players: int) -> None:
    row = rodada.row("platform", MATCHES, players)
    check_row(row, "platform", players, {"yatzy", "gateway", "redis"})
    assert row.result["path"] == "grpc-platform"


@pytest.mark.parametrize("players", [1, 2])
def test_web_driver_plays_over_http_with_a_feed_per_seat(rodada: bench.Rodada, players: int) -> None:
    row = rodada.row("web", MATCHES, players)
    check_row(row, "web", players, {"yatzy", "gateway", "redis"})
    result = row.result
    # Each move's snapshot reached the mover's feed, and finished matches' feeds ended.
    assert result["feed_messages"] > result["moves"]
    assert 0 < result["feed_p50_ms"] <= result["feed_p99_ms"]
    assert result["feeds_missing_end"] == 0
    assert result["feeds_ended"] == result["matches_finished"] * players


def test_redis_memory_of_active_matches(rodada: bench.Rodada) -> None:
    memory = bench_memory.measure(rodada.stack, matches=2, moves=5)
    assert memory.matches == 2 and memory.moves == 5
    # The table's events, the start and five moves' at least.
    assert memory.events >= 6
    assert memory.hash_bytes > 0 and memory.events_bytes > 0 and memory.shared_bytes > 0
    assert memory.per_event == memory.events_bytes / memory.events
    assert "per active match" in bench_memory.describe(memory)


@pytest.mark.parametrize("players", [1, 2])
def test_the_reference_runs_at_its_best_and_the_table_shows_ratios(
    rodada: bench.Rodada, players: int
) -> None:
    bench.npm_ci(bench.REFERENCE)
    settings = bench.Settings(seconds=SECONDS, warmup=WARMUP, matches=(MATCHES,))
    reference = bench.reference_row(settings, MATCHES, players)
    result = reference.result
    assert result["moves"] > 0 and result["players"] == players and result["transport"] == "websocket"
    assert (result["unanswered"], result["mismatched"], result["errors"]) == (0, 0, 0), result
    # Sockets reused across matches: more matches finished than slots opened sockets.
    assert result["matches_finished"] > MATCHES
    assert result["seconds"] >= SECONDS
    assert set(reference.cpu) == {"server", "driver"} and reference.cpu["server"] > 0
    ours = rodada.row("grpc", MATCHES, players)
    text = bench.table([reference, ours])
    lines = text.splitlines()
    assert len(lines) == 4 and lines[2].startswith("| boardgame.io") and "| 1.00× |" in lines[2]
    expected = ours.result["moves_per_second"] / reference.result["moves_per_second"]
    assert f"| {expected:.2f}× |" in lines[3]
    cpu = sum(reference.cpu.values()) / sum(ours.cpu.values())
    assert f"| {cpu:.2f}× |" in lines[3]
    assert f"| {bench.server_cpu(ours):.3f} |" in lines[3]
    assert bench.quiet_note([reference, ours]).startswith("machine: ")


def test_the_floors_are_measured_and_every_path_is_read_against_its_own(
    rodada: bench.Rodada, tmp_path: Path
) -> None:
    floors = bench_floors.measure(tmp_path, SECONDS, WARMUP, callers=4)
    assert set(floors) == {"grpc", "asgi", "redis", "grpc+redis"}
    for floor in floors.values():
        assert floor["errors"] == 0 and floor["calls_per_second"] > 0 and floor["server_cpu_ms"] > 0, floors
    # The call with a round trip costs more than the call alone: its CPU
    # counts the echo's process and redis-server's.
    assert floors["grpc+redis"]["server_cpu_ms"] > floors["grpc"]["server_cpu_ms"], floors
    web, grpc_row = rodada.row("web", MATCHES, 1), rodada.row("grpc", MATCHES, 1)
    reference = bench.Row("reference", MATCHES, 1, {"moves_per_second": 1000.0})
    text = bench_floors.describe(floors, [reference, web, grpc_row])
    # What the box could carry at the floor, with the floor's driver on the same cores.
    floor = floors["grpc+redis"]
    most = len(os.sched_getaffinity(0)) * 1000 / (floor["server_cpu_ms"] + floor["driver_cpu_ms"])
    assert f"carry at most {most:,.0f} moves/s on the gRPC path" in text
    assert f"- {MATCHES} matches of 1: 1,000 moves/s, so at most {most / 1000:.2f}× at the floor" in text
    multiple = web.cpu["gateway"] / floors["asgi"]["server_cpu_ms"]
    assert f"gateway {multiple:.1f}×" in text
    assert f"yatzy {web.cpu['yatzy'] / floors['grpc']['server_cpu_ms']:.1f}×" in text
    both = bench.server_cpu(grpc_row) / floors["grpc+redis"]["server_cpu_ms"]
    assert f"service + redis {both:.1f}× the call with a round trip" in text


def test_engine_apply_times_every_game() -> None:
    for name, game in discover().items():
        times = bench_engine.apply_times(game, bench_engine.SEATS.get(name, 2), 30)
        assert len(times) == 30 and all(t > 0 for t in times), name


def test_a_small_matchmaking_burst_seats_every_ticket_once(tmp_path: Path) -> None:
    burst = bench_matchmaking.measure(tmp_path, 20)
    assert burst["exactly_once"], burst["problems"]
    assert burst["tables"] == 10 and len(burst["results"]) == 20
    assert 0 < burst["queue_seconds"] <= burst["seconds"]
    assert burst["tables_per_second"] == round(10 / burst["seconds"], 1)
    # What bounds it: every process's CPU, the gateway's round trips, Redis's calls by name.
    assert set(burst["core_share"]) == {"gateway", "bozo", "redis", "driver"}
    # (Redis's few ms for 20 tickets may round to no clock tick at all.)
    cpu = burst["cpu_ms_per_ticket"]
    assert cpu["gateway"] > 0 and cpu["driver"] > 0 and min(cpu.values()) >= 0, cpu
    assert burst["gateway_round_trips_per_ticket"] > 0
    assert burst["redis_calls_per_ticket"]["evalsha"] >= 3  # a ticket's claim, creation and hold at least
    lines = bench_matchmaking.details(burst).splitlines()
    assert len(lines) == 4 and "gateway " in lines[0] and "evalsha" in lines[2]


def test_the_matchmaking_floor_answers_the_burst_driver(tmp_path: Path) -> None:
    floor = bench_matchmaking_floor.measure(tmp_path, 20)
    assert floor["server_cpu_ms_per_ticket"] > 0 and floor["driver_cpu_ms_per_ticket"] > 0
    assert floor["seconds"] > 0


def test_the_exactly_once_check_catches_doubles_and_strays() -> None:
    good = [
        {"user_id": "a", "ticket_id": "1", "matched": {"table_id": "t", "seat": 0}},
        {"user_id": "b", "ticket_id": "2", "matched": {"table_id": "t", "seat": 1}},
    ]
    assert bench_matchmaking.exactly_once(good) == []
    twice = [*good, {"user_id": "a", "ticket_id": "3", "matched": {"table_id": "u", "seat": 0}}]
    assert bench_matchmaking.exactly_once(twice)
    same_seat = [good[0], {**good[1], "matched": {"table_id": "t", "seat": 0}}]
    assert bench_matchmaking.exactly_once(same_seat)
    unmatched = [good[0], {**good[1], "matched": None}]
    assert bench_matchmaking.exactly_once(unmatched)


def test_the_scale_out_phase_deals_seats_over_replicas_and_gateways(
    rodada: bench.Rodada, tmp_path: Path
) -> None:
    settings = bench.Settings(seconds=SECONDS, warmup=WARMUP, matches=(MATCHES,), players=(1,))
    one = [rodada.row("grpc", MATCHES, 1), rodada.row("web", MATCHES, 1)]
    layout = bench.Layout(replicas=2, gateways=2)
    platform = bench.Rodada(tmp_path, settings, layout=layout)
    try:
        grpc, web = platform.row("grpc", MATCHES, 1), platform.row("web", MATCHES, 1)
    finally:
        platform.stop()
    check_row(grpc, "grpc", 1, {"yatzy", "yatzy-1", "redis"})
    check_row(web, "web", 1, {"yatzy", "yatzy-1", "gateway", "gateway-1", "redis"})
    # Two slots of one seat each, dealt one to each replica and gateway.
    assert grpc.cpu["yatzy"] > 0 and grpc.cpu["yatzy-1"] > 0, grpc.cpu
    assert web.cpu["gateway"] > 0 and web.cpu["gateway-1"] > 0, web.cpu
    text = bench.scale_table([grpc, web], one)
    lines = text.splitlines()
    assert len(lines) == 6 and "| 1 replica, 1 gateway |" in lines[2] and "| 1.00× |" in lines[2]
    expected = grpc.result["moves_per_second"] / one[0].result["moves_per_second"]
    assert "| 2 replicas, 2 gateways |" in lines[3] and f"| {expected:.2f}× |" in lines[3]
    assert f"| {bench.server_cpu(grpc) / bench.server_cpu(one[0]):.2f}× |" in lines[3]


def test_a_replica_of_two_workers_is_measured_process_by_process(tmp_path: Path) -> None:
    settings = bench.Settings(seconds=SECONDS, warmup=WARMUP, matches=(MATCHES,), players=(1,))
    platform = bench.Rodada(tmp_path, settings, layout=bench.Layout(workers=2))
    try:
        row = platform.row("grpc", MATCHES, 1)
    finally:
        platform.stop()
    check_row(row, "grpc", 1, {"yatzy", "yatzy/w0", "yatzy/w1", "redis"})
    assert row.layout == "1 replica of 2 workers, 1 gateway"


def test_a_gateway_of_two_workers_is_measured_process_by_process(tmp_path: Path) -> None:
    settings = bench.Settings(seconds=SECONDS, warmup=WARMUP, matches=(MATCHES,), players=(1,))
    platform = bench.Rodada(tmp_path, settings, layout=bench.Layout(gateway_workers=2))
    try:
        row = platform.row("web", MATCHES, 1)
    finally:
        platform.stop()
    check_row(row, "web", 1, {"yatzy", "gateway", "gateway/w0", "gateway/w1", "redis"})
    assert row.layout == "1 replica, 1 gateway of 2 workers"
    assert bench.Layout(gateway_workers=2) in bench.SCALE_LAYOUTS


def test_a_matchmaking_burst_on_a_gateway_of_two_workers_seats_every_ticket_once(tmp_path: Path) -> None:
    burst = bench_matchmaking.measure(tmp_path, 20, gateway_workers=2)
    assert burst["exactly_once"], burst["problems"]
    assert burst["tables"] == 10 and burst["gateway_workers"] == 2
    line = bench_matchmaking.describe(burst, {**burst, "tables_per_second": burst["tables_per_second"] / 2})
    assert "on one gateway of 2 workers" in line and "2.00× one worker's" in line


@pytest.mark.parametrize("client", ["node", "python"])
def test_the_feeds_bench_reaches_every_feed(tmp_path: Path, client: str) -> None:
    """Both feeds clients (Node, the default, and the Python one) open every
    feed, and every feed gets the move's event."""
    bench.npm_ci(bench.DRIVERS)
    with Stack(tmp_path, games=["yatzy"]) as stack:
        stack.service("yatzy")
        report = asyncio.run(bench_feeds.run(stack, feeds=30, client=client))
    assert report["feeds"] == 30 and report["client"] == client
    assert 0 < report["event_to_all_p50_ms"] <= report["event_to_all_p99_ms"] <= report["event_to_all_max_ms"]
    assert report["gateway_fanout_cpu_s"] >= 0 and report["open_seconds"] >= 0
