"""GAMES as the gateway reads it: ``name=host[:port]``, comma-separated. An
entry without a port is a cluster's (every game pod listens on the same gRPC
port there); one with a port is as written (every game on one host, each on
its own ``GAME.ports``, as ``make run`` and the tests' stack start them)."""

from __future__ import annotations

from gateway.games import channel_target
from gateway.settings import GAME_GRPC_PORT, GatewaySettings


def addresses(games: str) -> dict[str, str]:
    return GatewaySettings(games=games).game_addresses


def test_an_entry_without_a_port_gets_the_port_every_game_listens_on_in_a_cluster() -> None:
    assert GAME_GRPC_PORT == 50051
    assert addresses("bozo=bozo, bozu_mekuri=bozu-mekuri") == {
        "bozo": "bozo:50051",
        "bozu_mekuri": "bozu-mekuri:50051",
    }
    fqdn = "yatzy.rodada.svc.cluster.local"
    assert addresses(f"yatzy={fqdn}") == {"yatzy": f"{fqdn}:50051"}


def test_an_entry_with_a_port_keeps_it() -> None:
    assert addresses("bozo=127.0.0.1:50051,dudo=localhost:50052") == {
        "bozo": "127.0.0.1:50051",
        "dudo": "localhost:50052",
    }
    assert addresses("yatzy=[::1]:61234") == {"yatzy": "[::1]:61234"}


def test_entries_with_and_without_ports_mix_and_spaces_are_ignored() -> None:
    assert addresses(" bozo = bozo ,\n dudo=dudo:7000, ,") == {"bozo": "bozo:50051", "dudo": "dudo:7000"}
    assert addresses("") == {}


def test_fixed_replicas_each_get_the_port_unless_they_name_one() -> None:
    found = addresses("nim=10.0.0.7 10.0.0.8:50099")
    assert found == {"nim": "10.0.0.7:50051 10.0.0.8:50099"}
    assert channel_target(found["nim"]) == "ipv4:10.0.0.7:50051,10.0.0.8:50099"
    assert channel_target(addresses("nim=nim")["nim"]) == "dns:///nim:50051"


def test_an_ipv6_address_without_a_port_gets_brackets_and_the_port() -> None:
    assert addresses("nim=::1") == {"nim": "[::1]:50051"}
    assert addresses("nim=[fd00::7]") == {"nim": "[fd00::7]:50051"}
