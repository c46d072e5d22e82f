"""The fairness verifier rejects a tampered record at its first difference:
which event, which field, what the seed says and what the record says."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from services.kit.game import discover
from services.kit.rng import MatchRng, seed_digest
from tests.records import SPECTATOR, Recorded, random_match
from tools.verify import Difference, verify_text

GAMES = discover()
Items = list[dict[str, Any]]


def rejected(items: Items, seed: str | None = None) -> Difference:
    with pytest.raises(Difference) as raised:
        verify_text(json.dumps(items), seed)
    return raised.value


def events_of(items: Items, kind: str, where: Callable[[dict[str, Any]], bool] = lambda d: True) -> list[int]:
    """Positions of the game events of ``kind`` (whose data satisfies ``where``)."""
    return [
        i
        for i, item in enumerate(items)
        if kind in item.get("event", {}).get("event", {}) and where(item["event"]["event"][kind])
    ]


def data(item: dict[str, Any]) -> dict[str, Any]:
    body = item["event"]["event"]
    return dict(body[next(k for k in body if k != "@type")])


def first_difference(path: str, expected: list[Any], found: list[Any]) -> tuple[str, Any, Any]:
    """Where two lists (of numbers, or of tiles) first differ, as the
    verifier names it: the whole list if the lengths differ, else the item,
    else the item's field."""
    if len(expected) != len(found):
        return path, expected, found
    index = next(i for i, (want, got) in enumerate(zip(expected, found, strict=True)) if want != got)
    want, got = expected[index], found[index]
    if isinstance(want, dict):
        key = next(k for k in want if want[k] != got[k])
        return f"{path}[{index}].{key}", want[key], got[key]
    return f"{path}[{index}]", want, got


def match(name: str, seats: int, options: dict[str, Any] | None = None, seed: int = 1) -> Recorded:
    return random_match(GAMES[name], seats, options, rnd=random.Random(seed))


def test_the_untouched_records_are_verified() -> None:
    """The records the tampering starts from are good ones."""
    for record in (match("yatzy", 2), match("dudo", 3), match("domino", 4), match("bozo", 2)):
        for viewer in record.viewers():
            verify_text(json.dumps(record.feed(viewer)))


@pytest.mark.parametrize(
    ("name", "seats", "viewer", "kind", "die"),
    [
        ("yatzy", 2, SPECTATOR, "rolled", 2),  # a public throw
        ("dudo", 3, 1, "dice_rolled", 0),  # seat 1's own dice, which nobody else sees before a call
    ],
)
def test_a_die_changed_is_found(name: str, seats: int, viewer: int, kind: str, die: int) -> None:
    items = match(name, seats).feed(viewer)
    position = events_of(items, kind)[1]
    dice = items[position]["event"]["event"][kind]["dice"]
    true_face = dice[die]
    dice[die] = true_face % 6 + 1
    difference = rejected(items)
    assert difference.where.startswith(f"event {items[position]['event']['id']} ({kind}")
    changed = (f"dice[{die}]", true_face, true_face % 6 + 1)
    assert (difference.field, difference.expected, difference.found) == changed


def test_a_die_under_the_cup_changed_is_found_when_declared() -> None:
    """Bozó: the faces under the cup show with the declaration (BOTTOM: as
    ``from_face``, the seed's face, turned to 7 − face)."""
    items = next(
        feed
        for seed in range(1, 50)
        if events_of(feed := match("bozo", 1, seed=seed).feed(SPECTATOR), "revealed", _bottom)
    )
    position = events_of(items, "revealed", _bottom)[0]
    conversion = items[position]["event"]["event"]["revealed"]["conversions"][0]
    true_face = conversion["from_face"]
    conversion["from_face"] = 7 - true_face
    difference = rejected(items)
    assert difference.where.startswith(f"event {items[position]['event']['id']} (revealed")
    assert difference.field == "conversions[0].from_face"
    assert (difference.expected, difference.found) == (true_face, conversion["from_face"])


def _bottom(revealed: dict[str, Any]) -> bool:
    return bool(revealed["side"] == "BOTTOM")


def test_two_hands_swapped_at_a_dudo_call_are_found() -> None:
    items = match("dudo", 3).feed(SPECTATOR)
    position, other = next(
        (p, j)
        for p in events_of(items, "revealed")
        for j, hand in enumerate(data(items[p])["hands"])
        if hand["dice"] != data(items[p])["hands"][0]["dice"]
    )
    hands = items[position]["event"]["event"]["revealed"]["hands"]
    true_dice = list(hands[0]["dice"])
    hands[0]["dice"], hands[other]["dice"] = hands[other]["dice"], hands[0]["dice"]
    difference = rejected(items)
    assert difference.where.startswith(f"event {items[position]['event']['id']} (revealed")
    assert (difference.field, difference.expected, difference.found) == first_difference(
        "hands[0].dice", true_dice, hands[0]["dice"]
    )


def test_two_hands_swapped_at_the_end_of_a_domino_round_are_found() -> None:
    items = match("domino", 4).feed(SPECTATOR)
    position = events_of(items, "round_ended")[0]
    hands = items[position]["event"]["event"]["round_ended"]["hands"]
    true_tiles = copy.deepcopy(hands[0]["tiles"])
    assert hands[0]["tiles"] != hands[1]["tiles"]
    hands[0]["tiles"], hands[1]["tiles"] = hands[1]["tiles"], hands[0]["tiles"]
    difference = rejected(items)
    assert difference.where.startswith(f"event {items[position]['event']['id']} (round_ended")
    assert (difference.field, difference.expected, difference.found) == first_difference(
        "hands[0].tiles", true_tiles, hands[0]["tiles"]
    )


def test_another_seats_hand_dealt_is_found() -> None:
    """Seat 2's feed with seat 3's first hand in its ``dealt`` event."""
    record = match("domino", 4)
    items = record.feed(2)
    theirs = data(record.feed(3)[events_of(record.feed(3), "dealt")[0]])["tiles"]
    position = events_of(items, "dealt")[0]
    mine = items[position]["event"]["event"]["dealt"]["tiles"]
    true_tiles = copy.deepcopy(mine)
    mine[:] = theirs
    difference = rejected(items)
    assert difference.where.startswith(f"event {items[position]['event']['id']} (dealt")
    assert (difference.field, difference.expected, difference.found) == first_difference(
        "tiles", true_tiles, theirs
    )


def test_an_event_moved_with_its_id_is_found() -> None:
    items = match("yatzy", 2).feed(SPECTATOR)
    first, second = events_of(items, "rolled")[1:3]
    ids = items[first]["event"]["id"], items[second]["event"]["id"]
    items[first], items[second] = items[second], items[first]
    difference = rejected(items)
    assert difference.where == f"item {second} (event {ids[0]})"
    assert (difference.field, difference.found) == ("id", ids[0])


def test_events_reordered_under_their_ids_are_found() -> None:
    """Two Dudo bids swapped, each taking the other's id: the first is now
    made by a seat that was not to act."""
    items = match("dudo", 3).feed(SPECTATOR)
    first, second = next(
        (a, b)
        for a, b in zip(events_of(items, "bid_made"), events_of(items, "bid_made")[1:], strict=False)
        if data(items[a])["seat"] != data(items[b])["seat"]
    )
    to_act = data(items[first])["seat"]
    bodies = items[first]["event"]["event"], items[second]["event"]["event"]
    items[first]["event"]["event"], items[second]["event"]["event"] = bodies[1], bodies[0]
    difference = rejected(items)
    assert difference.where.startswith(f"event {items[first]['event']['id']} (bid_made")
    assert (difference.field, difference.expected, difference.found) == (
        "seat",
        to_act,
        data(items[first])["seat"],
    )


def test_a_wrong_seed_is_refused_by_its_digest() -> None:
    record = match("bozu_mekuri", 3)
    items = record.feed(SPECTATOR)
    wrong = bytes(32).hex()
    difference = rejected(items, seed=wrong)
    assert difference.where == "first snapshot" and difference.field == "fairness.seed_sha256"
    assert difference.found == seed_digest(record.seed)
    assert seed_digest(bytes(32)) in str(difference.expected)


def test_a_wrong_seed_with_a_forged_digest_fails_at_the_first_draw() -> None:
    """Someone replaces the seed and its published digest everywhere: the
    first card flipped is not the first card of that seed's deck."""
    items = match("bozu_mekuri", 3).feed(SPECTATOR)
    opener = data(items[events_of(items, "turn_started")[0]])["seat"]
    other = next(seed for n in range(100) if _opener(seed := bytes([n]) * 32, 3) != opener)
    for item in items:
        if "snapshot" in item:
            fairness = item["snapshot"]["fairness"]
            fairness["seed_sha256"] = seed_digest(other)
            fairness["seed"] = other.hex() if fairness["seed"] else ""
    difference = rejected(items)
    # The opener, drawn right after the shuffle, is the first draw a record shows.
    assert difference.where.startswith(f"event {items[events_of(items, 'turn_started')[0]]['event']['id']}")
    assert (difference.field, difference.expected, difference.found) == ("seat", _opener(other, 3), opener)


def _opener(seed: bytes, seats: int) -> int:
    """Bozu Mekuri's opener under ``seed``, by the platform's own generator."""
    rng = MatchRng(seed)
    rng.shuffle(list(range(1, 101)))
    return rng.randbelow(seats)


def test_a_revealed_seed_that_is_not_the_published_ones_is_refused() -> None:
    items = match("yatzy", 1).feed(SPECTATOR)
    final = next(
        item["snapshot"] for item in items if item.get("snapshot", {}).get("fairness", {}).get("seed")
    )
    final["fairness"]["seed"] = bytes(32).hex()
    difference = rejected(items)
    assert (difference.where, difference.field) == ("first snapshot", "fairness.seed_sha256")


def test_a_changed_result_is_found() -> None:
    items = match("domino", 4).feed(SPECTATOR)
    final = next(item["event"] for item in items if item.get("event", {}).get("final"))
    true_ranks = list(final["result"]["ranks"])
    final["result"]["ranks"] = [3 - rank for rank in true_ranks]
    difference = rejected(items)
    assert difference.where.startswith(f"event {final['id']}")
    assert (difference.field, difference.expected, difference.found) == (
        "result.ranks[0]",
        true_ranks[0],
        final["result"]["ranks"][0],
    )


def test_a_record_cut_short_is_not_verified() -> None:
    """The final event (a Yatzy score) and the final snapshot are gone; the
    seed comes from elsewhere."""
    record = match("yatzy", 2)
    items = record.feed(SPECTATOR)
    last_event = max(i for i, item in enumerate(items) if "event" in item)
    difference = rejected(items[:last_event], seed=record.seed.hex())
    before = next(item["event"] for item in reversed(items[:last_event]) if "event" in item)
    assert difference.where.startswith(f"after event {before['id']} (")
    assert (difference.field, difference.expected, difference.found) == (
        "events",
        "the final event",
        "the end of the record",
    )


def test_a_record_that_is_not_one_is_refused() -> None:
    with pytest.raises(Difference) as raised:
        verify_text("this is not JSON")
    assert (raised.value.where, raised.value.field) == ("record", "format")
    with pytest.raises(Difference) as raised:
        verify_text(json.dumps([{"end": {"reason": "finished"}}]))
    assert (raised.value.where, raised.value.field) == ("record", "format")


def test_a_malformed_field_anywhere_is_a_difference_not_a_crash() -> None:
    """Any field of a (short) record's events replaced by a value of another
    shape, or removed: the verifier answers with a difference or, where a
    default stands in for the same value, verified; never a crash."""
    items = match("dudo", 2, {"dice_per_player": 2}).feed(0)
    rnd = random.Random(2)
    places = [
        p
        for p in _places(items)
        if "event" in items[p[0]] and not {"at", "host_only", "spectators_only"} & set(p)
    ]
    refused = 0
    for _ in range(300):
        tampered = copy.deepcopy(items)
        *path, last = rnd.choice(places)
        parent: Any = tampered
        for key in path:
            parent = parent[key]
        if isinstance(parent, dict) and rnd.random() < 0.3:
            del parent[last]
        else:
            parent[last] = rnd.choice(["x", None, [], {}, 3.5, -1, True, [1, "x"]])
        try:
            verify_text(json.dumps(tampered))
        except Difference as difference:
            assert difference.where and difference.field
            refused += 1
    assert refused > 250, refused


def _places(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every field and list item below ``node``."""
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, child in children:
        yield (*path, key)
        yield from _places(child, (*path, key))


def test_a_bid_below_the_standing_one_is_found() -> None:
    """Choices are read from the record, and checked: a Dudo raise lowered
    to the standing bid's quantity on a lower face does not raise it."""
    items = match("dudo", 3).feed(SPECTATOR)
    first, second = next(
        (a, b)
        for a, b in zip(events_of(items, "bid_made"), events_of(items, "bid_made")[1:], strict=False)
        if data(items[a])["face"] > 2 and not events_of(items[a:b], "round_started")
    )
    standing = data(items[first])
    raised = items[second]["event"]["event"]["bid_made"]
    raised.update(quantity=standing["quantity"], face=2)
    difference = rejected(items)
    assert difference.where.startswith(f"event {items[second]['event']['id']} (bid_made")
    assert (difference.field, difference.found) == ("quantity", standing["quantity"])
    assert difference.expected.startswith(f"{standing['quantity'] + 1} to ")


def test_a_first_round_not_opened_with_six_six_is_found() -> None:
    record = match("domino", 4)
    opener = data(record.feed(SPECTATOR)[events_of(record.feed(SPECTATOR), "round_started")[0]])["opener"]
    items = record.feed(opener)
    hand = data(items[events_of(items, "dealt")[0]])["tiles"]
    position = events_of(items, "played")[0]
    played = items[position]["event"]["event"]["played"]
    assert played["tile"] == {"a": 6, "b": 6}
    played["tile"] = next(tile for tile in hand if tile != {"a": 6, "b": 6})
    difference = rejected(items)
    assert difference.where.startswith(f"event {items[position]['event']['id']} (played")
    assert (difference.field, difference.expected, difference.found) == (
        "tile",
        {"a": 6, "b": 6},
        played["tile"],
    )
