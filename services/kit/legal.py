"""The legal actions a snapshot carries (``Snapshot.legal``): what a seat may
do now, from the game's ``legal``, in a form any client can draw without
knowing the game.

The game lists every action (its Action's JSON); the kit keeps those the kit
itself would accept from the seat (not a CPU's seat, still in play, its turn
unless the kind may be played any time) and makes the list small, with no
game's help: actions that differ only in one whole number, over consecutive
values, become one range (Dudo's bids: one range of quantities per face, not
up to 180 bids), and actions that differ only in which numbers one list
holds, over every choice of a set, become one family of subsets (Bozó's and
Yatzy's dice to keep: one item, not 31). :func:`expand` is the way back;
tests hold the two to be exactly the same set, for every game.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import orjson
from google.protobuf import any_pb2
from google.protobuf.message import Message
from rodada.common.v1 import match_pb2

from services.kit.engine import JSON
from services.kit.game import Game
from services.kit.play import Table

Path = tuple[str, ...]
Leaves = dict[Path, Any]
Rest = tuple[tuple[Path, Any], ...]
TYPE_URL = "type.googleapis.com/"


def legal_actions(game: Game, table: Table, seat: int) -> list[JSON]:
    """Every action ``seat`` may make now that the kit would accept: the
    game's ``legal``, less what the kit refuses before the rules see it."""
    if game.legal is None or seat in table.cpu or not game.in_play(table.state, seat):
        return []
    actions = game.legal(table.state, seat)
    if not actions or seat in game.to_act(table.state):
        return actions
    return [action for action in actions if next(iter(action)) in game.anytime]


@dataclass
class Compact:
    """A set of actions, small: plain actions, ranges and subsets (the
    common proto's LegalActions, as JSON without ``@type``)."""

    actions: list[JSON] = field(default_factory=list)
    ranges: list[tuple[JSON, str, int, int]] = field(default_factory=list)  # action, path, min, max
    subsets: list[tuple[JSON, str, list[int], int, int]] = field(default_factory=list)  # … values, sizes

    def size(self) -> int:
        return len(self.actions) + len(self.ranges) + len(self.subsets)


def _by_kind(actions: Iterable[JSON]) -> list[list[JSON]]:
    """``actions`` grouped by their kind (the one key of each), kinds in the
    order they first come."""
    kinds: dict[str, list[JSON]] = defaultdict(list)
    for action in actions:
        kinds[next(iter(action))].append(action)
    return list(kinds.values())


def compact(actions: Iterable[JSON]) -> Compact:
    """``actions`` made small, kind by kind: of the numbers and lists the
    kind's actions hold, the one that groups them into the fewest items."""
    result = Compact()
    for group in _by_kind(actions):
        if len(group) < 3:
            result.actions += group
            continue
        flats = [_flatten(action) for action in group]
        best = Compact(actions=group)
        for path in sorted({p for leaves in flats for p, v in leaves.items() if _whole(v)}):
            best = min(best, _ranges(flats, path), key=Compact.size)
        for path in sorted({p for leaves in flats for p, v in leaves.items() if _numbers(v)}):
            best = min(best, _subsets(flats, path), key=Compact.size)
        result.actions += best.actions
        result.ranges += best.ranges
        result.subsets += best.subsets
    return result


def message(game: Game, actions: Sequence[JSON]) -> match_pb2.LegalActions:
    """The common proto's LegalActions for ``actions``. Each kind's part is
    made once per distinct list of that kind (:func:`compact` makes kinds
    small one by one, so the parts put together are the whole): a game's
    choices repeat kind by kind (every Yatzy re-throw offers the same 31
    keeps, beside scores that differ with the card), and making them is not
    free."""
    result = match_pb2.LegalActions()
    for group in _by_kind(actions):
        result.MergeFromString(_made(game.messages.Action, orjson.dumps(group)))
    return result


@lru_cache(maxsize=4096)
def _made(action_cls: type[Message], actions: bytes) -> bytes:
    small = compact(orjson.loads(actions))
    return match_pb2.LegalActions(
        actions=[_pack(action_cls, action) for action in small.actions],
        ranges=[
            match_pb2.ActionRange(action=_pack(action_cls, action), path=path, min=low, max=high)
            for action, path, low, high in small.ranges
        ],
        subsets=[
            match_pb2.ActionSubsets(
                action=_pack(action_cls, action), path=path, values=values, min_size=low, max_size=high
            )
            for action, path, values, low, high in small.subsets
        ],
    ).SerializeToString()


def expand(legal: JSON) -> list[JSON]:
    """A LegalActions' JSON (as a client gets it, ``@type`` and all) back to
    every action it allows, each without ``@type`` (fields at their
    default may be left out, as proto3 JSON allows)."""
    found = [_untyped(action) for action in legal.get("actions", [])]
    for item in legal.get("ranges", []):
        low, high = item.get("min", 0), item.get("max", 0)
        found += [_with(item["action"], item["path"], v) for v in range(low, high + 1)]
    for item in legal.get("subsets", []):
        for size in range(item.get("min_size", 0), item.get("max_size", 0) + 1):
            found += [
                _with(item["action"], item["path"], list(chosen))
                for chosen in itertools.combinations(item.get("values", []), size)
            ]
    return found


# -- helpers --------------------------------------------------------------------


def _whole(value: Any) -> bool:
    return type(value) is int


def _numbers(value: Any) -> bool:
    return isinstance(value, tuple) and all(type(v) is int for v in value)


def _flatten(data: JSON, prefix: Path = ()) -> Leaves:
    """A JSON object as its leaves, by path (lists as tuples; an empty
    object is a leaf of its own)."""
    leaves: Leaves = {}
    for key, value in data.items():
        path = (*prefix, key)
        if isinstance(value, dict):
            leaves.update(_flatten(value, path) if value else {path: _EMPTY})
        elif isinstance(value, list):
            leaves[path] = tuple(orjson.dumps(v) if isinstance(v, dict | list) else v for v in value)
        else:
            leaves[path] = value
    return leaves


class _Empty:
    """An empty message's leaf (``{"dudo": {}}``)."""


_EMPTY = _Empty()


def _unflatten(leaves: Leaves) -> JSON:
    data: JSON = {}
    for path, value in leaves.items():
        node = data
        for key in path[:-1]:
            node = node.setdefault(key, {})
        if value is _EMPTY:
            node.setdefault(path[-1], {})
        elif isinstance(value, tuple):
            node[path[-1]] = [orjson.loads(v) if isinstance(v, bytes) else v for v in value]
        else:
            node[path[-1]] = value
    return data


def _split(flats: list[Leaves], path: Path, default: Any) -> tuple[list[JSON], dict[Rest, list[Any]]]:
    """The actions by everything but ``path``, with the value each has
    there. A field of the kind's own message that an action leaves out has
    its default (proto3); an action without a deeper one stays as it is."""
    plain: list[JSON] = []
    groups: dict[Rest, list[Any]] = defaultdict(list)
    for leaves in flats:
        value = leaves.get(path, default if len(path) == 2 else None)
        if value is None:
            plain.append(_unflatten(leaves))
            continue
        rest = tuple(sorted(((p, v) for p, v in leaves.items() if p != path), key=lambda leaf: leaf[0]))
        groups[rest].append(value)
    return plain, groups


def _ranges(flats: list[Leaves], path: Path) -> Compact:
    """Each run of two or more consecutive values of the number at ``path``
    (everything else equal) as a range."""
    plain, groups = _split(flats, path, 0)
    result = Compact(actions=plain)
    dotted = ".".join(path)
    for rest, values in groups.items():
        if not all(_whole(v) for v in values):
            result.actions += [_unflatten(dict((*rest, (path, v)))) for v in values]
            continue
        values = sorted(set(values))
        start = 0
        for index in range(1, len(values) + 1):
            if index < len(values) and values[index] == values[index - 1] + 1:
                continue
            low, high = values[start], values[index - 1]
            lowest = _unflatten(dict((*rest, (path, low))))
            if high > low:
                result.ranges.append((lowest, dotted, low, high))
            else:
                result.actions.append(lowest)
            start = index
    return result


def _subsets(flats: list[Leaves], path: Path) -> Compact:
    """The lists at ``path`` (everything else equal) as one family when they
    are every increasing choice of some sizes from one set of numbers."""
    plain, groups = _split(flats, path, ())
    result = Compact(actions=plain)
    dotted = ".".join(path)
    for rest, lists in groups.items():
        chosen = set(lists)
        pool = sorted({v for values in chosen for v in values}) if all(map(_numbers, chosen)) else []
        sizes = [len(values) for values in chosen]
        whole = (
            pool
            and all(list(values) == sorted(set(values)) for values in chosen)
            and len(chosen) == sum(math.comb(len(pool), k) for k in range(min(sizes), max(sizes) + 1))
        )
        if whole:
            result.subsets.append(
                (_unflatten(dict((*rest, (path, ())))), dotted, pool, min(sizes), max(sizes))
            )
        else:
            result.actions += [_unflatten(dict((*rest, (path, v)))) for v in lists]
    return result


def _pack(action_cls: type[Message], action: JSON) -> any_pb2.Any:
    return any_pb2.Any(
        type_url=TYPE_URL + action_cls.DESCRIPTOR.full_name,
        value=action_cls(**action).SerializeToString(),
    )


def _with(action: JSON, path: str, value: Any) -> JSON:
    """``action`` (without ``@type``) with ``value`` at the dotted ``path``."""
    result = copy.deepcopy(_untyped(action))
    *parents, last = path.split(".")
    node = result
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    return result


def _untyped(action: JSON) -> JSON:
    return {key: value for key, value in action.items() if key != "@type"}
