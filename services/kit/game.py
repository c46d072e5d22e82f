"""A game, declared once: its facts and its rules, and the kit's play of them.

A game module ends with one ``GAME = Game(...)``: the facts the platform needs
(seat counts, modes and teams, CPU seats, open tables, what leaving and
inactivity do) and the rules (``setup``, a ``moves`` map, ``view``,
``to_act``, ``outcome``). Everything every game does the same way is here,
once: dispatching an action to its move, the turn check, the turn clock,
leaving, inactivity claims, deadlines and CPU-played seats. The service
serves the facts through ``Describe``; the gateway, matchmaking, standings,
the launcher and the tests learn the games from them.

The kit's play of the rules is ``play.py``; the service (``matches.py``)
loads and stores.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from google.protobuf import descriptor_pb2, json_format, struct_pb2
from google.protobuf.descriptor import FieldDescriptor, FileDescriptor
from google.protobuf.message import Message
from rodada.common.v1 import match_pb2

from services.core import json_forms
from services.kit.engine import JSON, Context, Departure, Event, InvalidAction, Outcome, Rng, State

# RULES.md: a seat to act may be claimed against or removed after 120 s.
INACTIVITY_SECONDS = 120.0

# The common proto's policy enums, by value name.
CONCEDE, SEAT_OUT, CPU_PLAYS = "LEAVING_POLICY_CONCEDE", "LEAVING_POLICY_SEAT_OUT", "LEAVING_POLICY_CPU_PLAYS"
NOBODY, OPPONENTS, OTHERS = "CLAIM_POLICY_NOBODY", "CLAIM_POLICY_OPPONENTS", "CLAIM_POLICY_OTHERS"
CLAIMABLE, CPU_TURN, EXPIRE = (
    "DEADLINE_POLICY_CLAIMABLE",
    "DEADLINE_POLICY_CPU_TURN",
    "DEADLINE_POLICY_EXPIRE",
)

Move = Callable[[State, int, Any, Context], list[Event]]


@dataclass(frozen=True)
class Team:
    name: str  # as the game's proto spells it
    seats: tuple[int, ...]


@dataclass(frozen=True)
class Mode:
    """One way of playing the game (the common proto's ``Mode``)."""

    name: str
    seats: tuple[int, ...]  # table sizes
    teams: tuple[Team, ...] = ()  # the sides of the largest table
    options: Mapping[str, Any] = field(default_factory=dict)  # Options fields that select it
    rated: bool = True
    queued: bool = True
    deadline: str = CLAIMABLE

    def fits(self, seats: int, options: JSON) -> bool:
        """Unset options fields fit any mode; set ones must agree."""
        return seats in self.seats and all(options.get(k, v) == v for k, v in self.options.items())


@dataclass(frozen=True)
class Trophy:
    """A trophy the game awards (the common proto's ``Trophy``): ``won``
    tells, when a match ends, which seats won it, from the outcome and the
    match's game events in order (each ``{kind: data}``, as the proto's
    Event JSON)."""

    id: str
    title: str
    description: str
    won: Callable[[Outcome, list[JSON]], Iterable[int]]


def _always(state: State, seat: int) -> bool:
    return True


def _inactivity(state: State) -> float | None:
    return INACTIVITY_SECONDS


@dataclass(frozen=True)
class Game:
    """A game's facts and rules. See the module docstring and
    docs/adding-a-game.md."""

    # -- facts --
    name: str
    title: str
    messages: ModuleType  # the generated proto module: Options, Action, View, Event
    # gRPC and metrics ports with every game on one host (make run, the tests'
    # stack); GRPC_PORT / METRICS_PORT win (in a cluster: the same for every game).
    ports: tuple[int, int]
    modes: tuple[Mode, ...]
    leaving: str  # LeavingPolicy value name
    claims: str  # ClaimPolicy value name
    # -- rules --
    setup: Callable[[int, Any, str, Context], tuple[State, list[Event]]]  # seats, Options, mode
    moves: Mapping[str, Move]  # Action oneof field → move of the seat to act
    view: Callable[[State, int | None], JSON]
    to_act: Callable[[State], list[int]]
    outcome: Callable[[State], Outcome | None]
    anytime: frozenset[str] = frozenset()  # moves a seat may make off its turn
    # Every seat and spectator sees the same view (nothing hidden, or hidden
    # from all): a version's view is made once for all its audiences.
    # tests/kit/test_snapshots.py holds a game that says so to it.
    public_view: bool = False
    # Moves that are not play (a setting, a preference): they never restart
    # the turn clock, so they cannot hold off an inactivity claim.
    quiet: frozenset[str] = frozenset()
    scores: Callable[[State], list[int]] | None = None  # each seat's score so far
    in_play: Callable[[State, int], bool] = _always  # False once a seat is out
    # Leaving (CONCEDE, SEAT_OUT) and removal for inactivity: the game's
    # consequences of ``seat`` departing; required unless leaving is CPU_PLAYS
    # and claims NOBODY.
    depart: Callable[[State, int, Departure, Context], list[Event]] | None = None
    # Seconds the seat to act has before its deadline (None: none now).
    deadline: Callable[[State], float | None] = _inactivity
    # Which turn it is, where a seat may play two turns in a row (a turn the
    # CPU plays for an idle seat ends there); None: a turn ends when the
    # seat to act changes.
    turn_number: Callable[[State], int] | None = None
    # The computer's move for a seat, from that seat's view alone.
    cpu: Callable[[JSON, int, Rng], JSON] | None = None
    cpu_seats: bool = False  # a table may give seats to the computer
    open_tables: bool = False
    ask: Callable[[State, int | None, Any], JSON] | None = None  # Question → Answer JSON
    # The values Options fields take when a table leaves them unset (proto
    # JSON); options are filled in before anything reads them.
    defaults: Mapping[str, Any] = field(default_factory=dict)
    # Every action ``seat`` may make now, in the Action's JSON form (random
    # play, CPUs, clients); None when the game does not enumerate them.
    legal: Callable[[State, int], list[JSON]] | None = None
    # Options fields that make a table a practice table (Yatzy's and Bozó's
    # ``advice``): such a table is never ranked.
    practice_options: frozenset[str] = frozenset()
    # Work a service does once before it serves (loading the advisor's
    # tables), so that no request pays for it.
    prepare: Callable[[], object] | None = None
    # Trophies a finished match may win (the platform awards them).
    trophies: tuple[Trophy, ...] = ()
    # The rules for players, Markdown by language (rules_pages(__file__):
    # the folder's rules/<lang>.md); served by the gateway at /rules/.
    rules: Mapping[str, str] = field(default_factory=dict)

    # -- facts derived --

    def mode_for(self, seats: int, options: JSON) -> Mode:
        for mode in self.modes:
            if mode.fits(seats, options):
                return mode
        counts = sorted({s for m in self.modes for s in m.seats})
        raise InvalidAction(
            "invalid_seats", f"{self.title} tables have {', '.join(map(str, counts))} seats for these options"
        )

    def mode(self, name: str) -> Mode:
        return next(m for m in self.modes if m.name == name)

    def side(self, mode: str, seat: int) -> int:
        """The side a seat plays for: its team's index, or the seat itself."""
        for index, team in enumerate(self.mode(mode).teams):
            if seat in team.seats:
                return index
        return seat

    def info(self) -> match_pb2.GameInfo:
        return match_pb2.GameInfo(
            name=self.name,
            title=self.title,
            proto_package=self.messages.DESCRIPTOR.package,
            modes=[
                match_pb2.Mode(
                    name=m.name,
                    seat_counts=m.seats,
                    teams=[match_pb2.Team(name=t.name, seats=t.seats) for t in m.teams],
                    options=_struct(m.options),
                    rated=m.rated,
                    queued=m.queued,
                    deadline=match_pb2.DeadlinePolicy.Value(m.deadline),
                )
                for m in self.modes
            ],
            cpu_seats=self.cpu_seats,
            open_tables=self.open_tables,
            leaving=match_pb2.LeavingPolicy.Value(self.leaving),
            claims=match_pb2.ClaimPolicy.Value(self.claims),
            inactivity_seconds=INACTIVITY_SECONDS,
            questions=self.ask is not None,
            option_defaults=_struct(self.defaults),
            practice_options=sorted(self.practice_options),
            trophies=[
                match_pb2.Trophy(id=t.id, title=t.title, description=t.description) for t in self.trophies
            ],
            rules=[
                match_pb2.RulesPage(lang=lang, markdown=page) for lang, page in sorted(self.rules.items())
            ],
            descriptors=descriptor_set(self.messages.DESCRIPTOR).SerializeToString(),
        )

    # -- parsing client input (strict: unknown fields fail) --

    def options(self, data: Any) -> Message:
        """The table's Options, every unset field with its default."""
        given = to_json(parse(self.messages.Options, data, "invalid_options"))
        return parse(self.messages.Options, {**self.defaults, **given}, "invalid_options")

    def action(self, data: Any) -> Message:
        return parse(self.messages.Action, data, "malformed_action")


def descriptor_set(file: FileDescriptor) -> descriptor_pb2.FileDescriptorSet:
    """``file`` and every file it imports, each after its imports."""
    found = descriptor_pb2.FileDescriptorSet()
    seen: set[str] = set()

    def add(current: FileDescriptor) -> None:
        if current.name in seen:
            return
        seen.add(current.name)
        for dependency in current.dependencies:
            add(dependency)
        current.CopyToProto(found.file.add())

    add(file)
    return found


def rules_pages(module_file: str) -> dict[str, str]:
    """A game's rules pages, by language: ``rules/<lang>.md`` in the folder
    of ``module_file`` (the declaration's ``__file__``)."""
    folder = Path(module_file).resolve().parent / "rules"
    return {page.stem: page.read_text(encoding="utf-8") for page in sorted(folder.glob("*.md"))}


def parse(message_cls: type[Message], data: Any, code: str) -> Message:
    """JSON (a dict) or an already decoded message → the message, strictly;
    InvalidAction otherwise."""
    if isinstance(data, message_cls):
        _defined(data, code)
        return data
    message = message_cls()
    if not isinstance(data, dict):
        raise InvalidAction(code, f"{message.DESCRIPTOR.name.lower()} must be a JSON object")
    try:
        json_format.ParseDict(data, message)
    except json_format.ParseError as exc:
        raise InvalidAction(code, str(exc)) from None
    _strict(message, data, code)
    return message


def _defined(message: Message, code: str) -> None:
    """A decoded message's enums are values their enum has (proto3 keeps
    any number it was sent)."""
    for member, value in message.ListFields():
        if member.enum_type is not None:
            for number in value if member.is_repeated else [value]:
                if number not in member.enum_type.values_by_number:
                    raise InvalidAction(code, f"{member.name}: {number} is not a {member.enum_type.name}")
        elif member.message_type is not None and not member.message_type.GetOptions().map_entry:
            for item in value if member.is_repeated else [value]:
                _defined(item, code)


def _strict(message: Message, data: Any, code: str) -> None:
    """Stricter than json_format, which takes 2.5 for an enum's 2, keeps
    numbers no value has (proto3 enums are open) and a list for a message:
    an enum is one of its values, by name or number, and a message an
    object."""
    for member in message.DESCRIPTOR.fields:
        raw = data.get(member.name, data.get(member.json_name)) if isinstance(data, dict) else None
        if raw is None:
            continue
        values = raw if member.is_repeated and isinstance(raw, list) else [raw]
        is_message = member.message_type is not None and not member.message_type.GetOptions().map_entry
        if is_message and any(not isinstance(v, dict) for v in values):
            raise InvalidAction(code, f"{member.name} must be an object")
        if member.enum_type is not None:
            for value in values:
                named = isinstance(value, str) and value in member.enum_type.values_by_name
                numbered = type(value) is int and value in member.enum_type.values_by_number
                if not (named or numbered):
                    raise InvalidAction(code, f"{member.name}: {value!r} is not a {member.enum_type.name}")
        elif is_message:
            nested = getattr(message, member.name)
            for item, value in zip(nested if member.is_repeated else [nested], values, strict=False):
                _strict(item, value, code)


def to_json(message: Message) -> JSON:
    """A message as the JSON the games store (field names as in the .proto;
    fields left at their default are absent): exactly
    ``json_format.MessageToDict(message, preserving_proto_field_name=True)``,
    read straight from the fields set, each field's printing decided once
    (a finished match's trophies read its whole history through this, and
    json_format decides it again for every value).
    tests/unit/test_protojson.py holds it to json_format."""
    if message.DESCRIPTOR.file.name.startswith("google/protobuf/"):  # their own JSON forms
        printed: JSON = json_format.MessageToDict(message, preserving_proto_field_name=True)
        return printed
    result = {}
    for member, value in message.ListFields():
        name, convert = _PRINTERS.get(member) or _printer(member)
        result[name] = value if convert is None else convert(value)
    return result


Convert = Callable[[Any], Any]
_PRINTERS: dict[FieldDescriptor, tuple[str, Convert | None]] = {}


def _printer(member: FieldDescriptor) -> tuple[str, Convert | None]:
    """A field's JSON name and how its value prints (None: as it is)."""
    name = f"[{member.full_name}]" if member.is_extension else member.name
    convert: Convert | None
    entry = member.message_type
    if entry is not None and entry.GetOptions().map_entry:
        each = _value_printer(entry.fields_by_name["value"]) or _same

        def convert(value: Any) -> Any:
            return {json_forms.map_key(key): each(item) for key, item in value.items()}

    elif member.is_repeated:
        item_printer = _value_printer(member)
        if item_printer is None:
            convert = list
        else:
            each = item_printer

            def convert(value: Any) -> Any:
                return [each(item) for item in value]

    else:
        convert = _value_printer(member)
    _PRINTERS[member] = (name, convert)
    return name, convert


def _value_printer(member: FieldDescriptor) -> Convert | None:
    """How one value of ``member`` prints (None: as it is)."""
    kind = member.cpp_type
    if kind == FieldDescriptor.CPPTYPE_MESSAGE:
        return to_json
    if kind == FieldDescriptor.CPPTYPE_ENUM:
        assert member.enum_type is not None
        if member.enum_type.full_name == "google.protobuf.NullValue":
            return _none
        names = {number: value.name for number, value in member.enum_type.values_by_number.items()}
        return lambda number: names.get(number, number)  # an open enum's unknown number stays one
    if member.type == FieldDescriptor.TYPE_BYTES:
        return json_forms.bytes_text
    if kind in (FieldDescriptor.CPPTYPE_INT64, FieldDescriptor.CPPTYPE_UINT64):
        return str
    if kind == FieldDescriptor.CPPTYPE_DOUBLE:
        return json_forms.double
    if kind == FieldDescriptor.CPPTYPE_FLOAT:
        return json_forms.single
    return None


def _same(value: Any) -> Any:
    return value


def _none(value: Any) -> None:
    return None


def _struct(data: Mapping[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(dict(data))
    return struct


# -- the registry ---------------------------------------------------------------

DEFAULT_PACKAGES = ("services",)


def _scan(packages: Iterable[str]) -> Iterator[tuple[str, Game]]:
    """(module prefix, game) for every package folder whose ``game`` module
    defines ``GAME``."""
    for package in packages:
        root = importlib.import_module(package)
        for module in pkgutil.iter_modules(root.__path__):
            if not module.ispkg or module.name == "kit":
                continue
            prefix = f"{package}.{module.name}"
            try:
                candidate = importlib.import_module(f"{prefix}.game")
            except ModuleNotFoundError as missing:
                if missing.name == f"{prefix}.game":
                    continue
                raise
            game = getattr(candidate, "GAME", None)
            if isinstance(game, Game):
                yield prefix, game


def packages_from(text: str) -> tuple[str, ...]:
    """GAME_PACKAGES: comma-separated packages to find games in."""
    return tuple(p.strip() for p in text.split(",") if p.strip()) or DEFAULT_PACKAGES


def discover(packages: Iterable[str] = DEFAULT_PACKAGES) -> dict[str, Game]:
    """Every game declared under ``packages`` (``services/<game>/game.py``):
    a new game is found by adding its folder."""
    return dict(sorted((game.name, game) for _, game in _scan(packages)))


def service_modules(packages: Iterable[str] = DEFAULT_PACKAGES) -> dict[str, str]:
    """Each game's service module, to run with ``python -m``."""
    return dict(sorted((game.name, f"{prefix}.service") for prefix, game in _scan(packages)))
