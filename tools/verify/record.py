"""A finished match's public record, as a feed delivered it, and how the
verifier reports the first place it differs from the replay.

The record is the list of items a table's feed sent (docs/feeds.md): the
WebSocket's text frames, or the gRPC ``FollowTable`` / ``Watch`` responses as
proto3 JSON (field names as in the .proto). Only ``event`` and ``snapshot``
items matter; lobby changes (``event.table``), ``table``, ``end`` and
``pong`` items are skipped. Fields left at their proto default may be absent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]
SPECTATOR = -1
NOTICE_PREFIX = "NOTICE_KIND_"


class Mismatch(Exception):
    """The replay and the record disagree on ``field``."""

    def __init__(self, field: str, expected: Any, found: Any) -> None:
        super().__init__(f"{field}: expected {expected!r}, found {found!r}")
        self.field = field
        self.expected = expected
        self.found = found


@dataclass(frozen=True)
class Event:
    """One match event of the record: a game event (``kind`` is the name of
    the game Event's oneof field) or a notice (``kind`` is ``notice:LEFT``
    and so on)."""

    id: int
    version: int
    kind: str
    data: JSON
    audience: tuple[int, ...] = ()
    final: bool = False
    result: JSON | None = None
    type_url: str = ""  # a game event's @type

    @property
    def is_notice(self) -> bool:
        return self.kind.startswith("notice:")

    def where(self) -> str:
        return f"event {self.id} ({self.kind}, version {self.version})"


class Difference(Exception):
    """The first difference: where, which field, expected and found."""

    def __init__(self, where: str, mismatch: Mismatch) -> None:
        super().__init__(f"{where}: {mismatch}")
        self.where = where
        self.field = mismatch.field
        self.expected = mismatch.expected
        self.found = mismatch.found


@dataclass
class Record:
    game: str
    viewer: int  # the seat whose feed this is, or SPECTATOR
    seats: int
    view: JSON  # the first snapshot's view: the table's options are there
    seed_sha256: str  # as the first snapshot published it
    seed: str  # hex, as the final snapshot revealed it ("" if it did not)
    events: list[Event] = field(default_factory=list)
    finished: JSON | None = None  # the snapshot of the finished match, if the record has it


def load(text: str) -> list[JSON]:
    """The feed items of a record: a JSON array, or one JSON object per line."""
    stripped = text.strip()
    try:
        items = json.loads(stripped) if stripped.startswith("[") else None
    except json.JSONDecodeError as error:
        raise _malformed("a JSON array of feed items", f"invalid JSON ({error})") from None
    if items is None:
        items = []
        for number, line in enumerate(stripped.splitlines(), start=1):
            if line.strip():
                try:
                    items.append(json.loads(line))
                except json.JSONDecodeError as error:
                    raise _malformed("one JSON feed item per line", f"line {number}: {error}") from None
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise _malformed("a list of feed items (JSON objects)", type(items).__name__)
    return items


def parse(items: list[JSON]) -> Record:
    """The record in the items; Difference if it is not one match's whole
    feed as one viewer received it."""
    snapshots: list[JSON] = []
    events: list[Event] = []
    last_id = 0
    for position, item in enumerate(items):
        if "snapshot" in item:
            snapshots.append(item["snapshot"])
        elif "event" in item:
            raw = item["event"]
            event_id = raw.get("id", 0)
            if type(event_id) is not int:
                raise Difference(f"item {position}", Mismatch("id", "an event id", event_id))
            if event_id <= last_id:
                raise Difference(
                    f"item {position} (event {event_id})",
                    Mismatch("id", f"an id after {last_id}", event_id),
                )
            last_id = event_id
            event = _event(raw, event_id)
            if event is not None:
                events.append(event)
        elif "error" in item:
            raise Difference(f"item {position}", Mismatch("error", "no refusal", item["error"]))
    if not snapshots:
        raise _malformed("at least one snapshot item", "none")
    first = snapshots[0]
    for snap in snapshots[1:]:
        for name in ("game", "seat"):
            if snap.get(name, 0) != first.get(name, 0):
                raise Difference(
                    f"snapshot of version {snap.get('version', 0)}",
                    Mismatch(name, first.get(name, 0), snap.get(name, 0)),
                )
        digest = snap.get("fairness", {}).get("seed_sha256", "")
        if digest != first.get("fairness", {}).get("seed_sha256", ""):
            raise Difference(
                f"snapshot of version {snap.get('version', 0)}",
                Mismatch("fairness.seed_sha256", first["fairness"]["seed_sha256"], digest),
            )
    game = first.get("game", "")
    if not game:
        raise _malformed("a match's game", game)
    finished = next((s for s in snapshots if s.get("status") == "MATCH_STATUS_FINISHED"), None)
    expected_type = f"type.googleapis.com/rodada.{game}.v1.Event"
    for event in events:
        if not event.is_notice and event.type_url != expected_type:
            raise Difference(event.where(), Mismatch("event.@type", expected_type, event.type_url))
    return Record(
        game=game,
        viewer=int(first.get("seat", 0)),
        seats=len(first.get("seats", [])),
        view=first.get("view", {}),
        seed_sha256=first.get("fairness", {}).get("seed_sha256", ""),
        seed=(finished or {}).get("fairness", {}).get("seed", ""),
        events=events,
        finished=finished,
    )


def _event(raw: JSON, event_id: int) -> Event | None:
    """A MatchEvent of the match (None for a lobby change)."""
    audience = raw.get("audience", [])
    if not isinstance(audience, list) or not all(type(seat) is int for seat in audience):
        raise Difference(f"event {event_id}", Mismatch("audience", "a list of seats", audience))
    if type(raw.get("final", False)) is not bool:
        raise Difference(f"event {event_id}", Mismatch("final", "true or false", raw["final"]))
    common: dict[str, Any] = {
        "id": event_id,
        "version": raw.get("version", 0),
        "audience": tuple(audience),
        "final": raw.get("final", False),
        "result": raw.get("result"),
    }
    if "notice" in raw:
        notice = dict(raw["notice"])
        kind = str(notice.get("kind", "")).removeprefix(NOTICE_PREFIX)
        return Event(kind=f"notice:{kind}", data=notice, **common)
    if "event" in raw:
        body = dict(raw["event"])
        kinds = [key for key in body if key != "@type"]
        if len(kinds) != 1:
            raise Difference(f"event {event_id}", Mismatch("event", "exactly one kind of event", kinds))
        kind = kinds[0]
        data = body[kind]
        if not isinstance(data, dict):
            raise Difference(f"event {event_id}", Mismatch(f"event.{kind}", "an object", data))
        return Event(kind=kind, data=data, type_url=str(body.get("@type", "")), **common)
    if "table" in raw or "chat" in raw:
        return None  # the lobby and the table's chat, which have no draws
    raise Difference(f"event {event_id}", Mismatch("event", "a game event, a notice or a table change", raw))


def _malformed(expected: str, found: Any) -> Difference:
    return Difference("record", Mismatch("format", expected, found))


# -- comparing --------------------------------------------------------------------


def is_zero(value: Any) -> bool:
    """A proto3 default, which a JSON form may leave out."""
    if isinstance(value, str):
        return value == "" or value.endswith("_UNSPECIFIED")
    return value is not None and not isinstance(value, dict) and not value


def compare(expected: Any, found: Any, path: str) -> None:
    """Mismatch at the first place ``found`` differs from ``expected``.
    Only the fields ``expected`` names are compared; a field absent from
    ``found`` counts as its proto default; ``None`` expected means absent."""
    if isinstance(expected, dict):
        if not isinstance(found, dict):
            raise Mismatch(path, expected, found)
        for key, value in expected.items():
            inner = f"{path}.{key}" if path else key
            if key not in found or found[key] is None:
                if value is None or is_zero(value):
                    continue
                raise Mismatch(inner, value, "absent")
            if value is None:
                raise Mismatch(inner, "absent", found[key])
            compare(value, found[key], inner)
    elif isinstance(expected, list):
        if not isinstance(found, list):
            raise Mismatch(path, expected, found)
        if len(expected) != len(found):
            raise Mismatch(path, expected, found)
        for index, (want, got) in enumerate(zip(expected, found, strict=True)):
            compare(want, got, f"{path}[{index}]")
    elif type(expected) is not type(found) or expected != found:
        if isinstance(expected, float) and isinstance(found, int) and expected == found:
            return
        raise Mismatch(path, expected, found)
