"""Tournaments in Redis: registration, rounds, results, standings.

A tournament is one record (``tournament:<id>``: ``v`` its version, ``doc``
JSON) changed only by compare-and-set on the version (one Lua script): each
change is computed from the record as read and written only if nobody wrote
in between, else computed again from the new record. So across every gateway
replica a round is paired once and advances once, whoever sees its last
result first.

Each board's table id is derived from the tournament, round and board
(``tn_<tournament>_<round>_<board>``; no other table id has an underscore),
and starting a formed table is idempotent (``Tables.start_formed``): any
replica may (re)start a round's tables, and the periodic check does so for a
round whose starter died midway. Tables start through the matchmaker's path:
formed with every seat taken, no host, no invites, born started. A player
who does not show up loses by the game's own inactivity policy, like at any
table, or at the round's deadline (``close_round``): an absent side forfeits,
a table where nobody acted scores nobody.

Drivers: the results consumer (``on_result``, once per finished match, safe
to repeat) and every replica's periodic ``check`` (start times, rounds whose
tables were not all started, round deadlines, trophies of finished
tournaments).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import AsyncGenerator, Callable
from typing import Any, cast

import grpc
import orjson
from google.protobuf import any_pb2, json_format
from rodada.platform.v1 import competitions_pb2, social_pb2

from gateway import metrics
from gateway.competitions import rules
from gateway.competitions.trophies import PODIUM, Trophies
from gateway.games import GameClient, Games
from gateway.results import Results
from gateway.social.feed import SocialFeeds
from gateway.tables import Tables
from services.core import keys
from services.core.errors import Refused, conflict, invalid, not_found, permission_denied, unavailable
from services.core.store import RedisClient
from services.core.tasks import cancel_requested
from services.core.tokens import Identity

log = logging.getLogger("rodada.gateway.tournaments")
Doc = dict[str, Any]
REGISTRATION, RUNNING, FINISHED, CANCELLED = "registration", "running", "finished", "cancelled"
SWISS, ELIMINATION = "swiss", "single_elimination"
FORMATS = {
    competitions_pb2.TOURNAMENT_FORMAT_SWISS: SWISS,
    competitions_pb2.TOURNAMENT_FORMAT_SINGLE_ELIMINATION: ELIMINATION,
}
STATUSES = {
    REGISTRATION: competitions_pb2.TOURNAMENT_STATUS_REGISTRATION,
    RUNNING: competitions_pb2.TOURNAMENT_STATUS_RUNNING,
    FINISHED: competitions_pb2.TOURNAMENT_STATUS_FINISHED,
    CANCELLED: competitions_pb2.TOURNAMENT_STATUS_CANCELLED,
}
MAX_ENTRANTS = 256
MAX_ROUNDS = 20
DEFAULT_MULTI_TABLE = 4
DEFAULT_ROUND_SECONDS = 3600
ROUND_SECONDS = (60, 86_400)
ACTED_TTL_SECONDS = 2 * ROUND_SECONDS[1]
_ATTEMPTS = 32
TABLE_PREFIX = "tn_"

# KEYS: the tournament. ARGV: version read, new version, new record.
_CAS = """
local v = redis.call('HGET', KEYS[1], 'v') or '0'
if v ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'doc', ARGV[3])
return 1
"""

# KEYS: the tournament. ARGV: the record. Written only if absent.
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'v', 1, 'doc', ARGV[1])
return 1
"""


def table_id(tournament_id: str, round_number: int, board: int) -> str:
    return f"{TABLE_PREFIX}{tournament_id}_{round_number}_{board}"


def parse_table_id(match_id: str) -> tuple[str, int, int] | None:
    """(tournament, round, board) for a tournament's table, else None."""
    if not match_id.startswith(TABLE_PREFIX):
        return None
    parts = match_id[len(TABLE_PREFIX) :].split("_")
    if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
        return None
    return parts[0], int(parts[1]), int(parts[2])


def require_admin(user: Identity) -> None:
    if user.role != "admin":
        raise permission_denied("admin_required", "only an admin may do this")


class Tournaments:
    def __init__(
        self,
        redis: RedisClient,
        games: Games,
        tables: Tables,
        results: Results,
        trophies: Trophies,
        social_feeds: SocialFeeds,
    ) -> None:
        self.redis = redis
        self.social_feeds = social_feeds
        self.games = games
        self.tables = tables
        self.results = results
        self.trophies = trophies
        self._cas = redis.register_script(_CAS)
        self._create = redis.register_script(_CREATE)

    # -- the record -----------------------------------------------------------------

    async def load(self, tournament_id: str) -> tuple[Doc, int]:
        stored = (
            cast(list[str | None], await self.redis.hmget(keys.tournament(tournament_id), ["v", "doc"]))
            if tournament_id.isalnum() and len(tournament_id) <= 32
            else [None, None]
        )
        if stored[1] is None:
            raise not_found("tournament_not_found", f"no tournament {tournament_id!r}")
        return orjson.loads(stored[1]), int(stored[0] or 0)

    async def update(self, tournament_id: str, change: Callable[[Doc], bool]) -> tuple[Doc, bool]:
        """Apply ``change`` (True if it changed the record; it may raise
        Refused) by compare-and-set; the record after, and whether this call
        changed it."""
        for _ in range(_ATTEMPTS):
            doc, version = await self.load(tournament_id)
            if not change(doc):
                return doc, False
            written = await self._cas(
                keys=[keys.tournament(tournament_id)], args=[version, version + 1, orjson.dumps(doc)]
            )
            if written:
                return doc, True
            metrics.TOURNAMENT_CONFLICTS.inc()
        raise Refused(grpc.StatusCode.ABORTED, "busy", "the tournament is busy; try again")

    # -- announcing and registering ------------------------------------------------------

    async def create(
        self,
        admin: Identity,
        request: competitions_pb2.CreateTournamentRequest,
        options: dict[str, Any],
        tournament_id: str = "",
    ) -> Doc:
        """Announce a tournament. With ``tournament_id`` (a schedule's, the
        same on every replica) only the first write counts: the record as
        stored is returned."""
        doc = self.draft(admin, request, options)
        if tournament_id:
            doc["id"] = tournament_id
            if not await self._create(keys=[keys.tournament(tournament_id)], args=[orjson.dumps(doc)]):
                return (await self.load(tournament_id))[0]
        else:
            await self.redis.hset(keys.tournament(doc["id"]), mapping={"v": 1, "doc": orjson.dumps(doc)})
        await self.redis.zadd(keys.TOURNAMENTS, {doc["id"]: doc["created_at"]})
        await self.redis.sadd(keys.LIVE_TOURNAMENTS, doc["id"])
        metrics.TOURNAMENTS.labels(doc["game"], "created").inc()
        return doc

    def draft(
        self, admin: Identity, request: competitions_pb2.CreateTournamentRequest, options: dict[str, Any]
    ) -> Doc:
        """A new tournament's record, checked, not stored."""
        require_admin(admin)
        game = self.games.get(request.game)
        game.pack("Options", options, "invalid_options")
        name = _valid_name(request.name)
        fmt = FORMATS.get(request.format)
        if fmt is None:
            raise invalid("invalid_tournament", "format: SWISS or SINGLE_ELIMINATION")
        _valid_max_entrants(request.max_entrants, 0)
        _valid_rounds(request.rounds, fmt)
        seats = request.table_size or _default_seats(game, options)
        if seats < 2:
            raise invalid("invalid_tournament", "table_size: at least 2 (a tournament needs opponents)")
        mode = game.mode_for(seats, options)
        partnership = len(mode.teams) == 2 and all(len(t.seats) == 2 for t in mode.teams) and seats == 4
        two_sided = partnership or seats == 2
        if fmt == ELIMINATION and not two_sided:
            raise invalid(
                "invalid_tournament", "single elimination needs two-sided tables (duels, partnerships)"
            )
        round_seconds = _valid_round_seconds(request.round_seconds or DEFAULT_ROUND_SECONDS)
        now = time.time()
        doc: Doc = {
            "id": secrets.token_hex(6),
            "name": name,
            "game": game.name,
            "mode": mode.name,
            "options": options,
            "format": fmt,
            "max_entrants": request.max_entrants,
            "starts_at": request.starts_at if request.starts_at > now else 0.0,
            "rounds_requested": request.rounds,
            "rounds_planned": 0,
            "table_size": seats,
            "team_size": 2 if partnership else 1,
            "two_sided": two_sided,
            "min_table": max(2, min(mode.seat_counts)),
            "round_seconds": round_seconds,
            "status": REGISTRATION,
            "current_round": 0,
            "entrants": [],
            "rounds": [],
            "places": [],
            "created_at": now,
            "created_by": admin.user_id,
        }
        return doc

    async def edit(self, admin: Identity, request: competitions_pb2.EditTournamentRequest) -> Doc:
        """An admin changes what is safe to change before the start: the
        name, the start time, the entrants' limit, the rounds and the round
        deadline (never the game, options, format or table size, which the
        registered teams depend on)."""
        require_admin(admin)
        name = _valid_name(request.name) if request.HasField("name") else None
        if request.HasField("round_seconds"):
            _valid_round_seconds(request.round_seconds)
        if request.HasField("starts_at") and request.starts_at and request.starts_at <= time.time():
            raise invalid("invalid_tournament", "starts_at: in the future, or 0 for when an admin starts it")

        def change(record: Doc) -> bool:
            if record["status"] == CANCELLED:
                raise conflict("tournament_over", "the tournament is cancelled")
            if record["status"] != REGISTRATION:
                raise conflict("tournament_started", "the tournament has started: it can no longer be edited")
            if name is not None:
                record["name"] = name
            if request.HasField("max_entrants"):
                _valid_max_entrants(request.max_entrants, len(record["entrants"]))
                record["max_entrants"] = request.max_entrants
            if request.HasField("starts_at"):
                record["starts_at"] = request.starts_at
            if request.HasField("rounds"):
                _valid_rounds(request.rounds, record["format"])
                record["rounds_requested"] = request.rounds
            if request.HasField("round_seconds"):
                record["round_seconds"] = request.round_seconds
            return True

        doc, _ = await self.update(request.tournament_id, change)
        return doc

    async def register(self, user: Identity, tournament_id: str, team_code: str) -> tuple[Doc, Doc, str]:
        """The record, the caller's entrant, and the team code to hand on."""
        if user.role == "guest":
            raise permission_denied("account_required", "tournaments are for registered accounts")
        doc, _ = await self.load(tournament_id)
        rating, _ = await self.results.load_rating(doc["game"], doc["mode"], user.user_id)
        player = {"user_id": user.user_id, "name": user.name, "rating": rating.rating}
        new_code = secrets.token_urlsafe(9) if doc["team_size"] == 2 and not team_code else ""
        mine: dict[str, Any] = {}

        def add(record: Doc) -> bool:
            if record["status"] != REGISTRATION:
                raise conflict("registration_closed", "registration is closed")
            if _entrant_of(record, user.user_id) is not None:
                raise conflict("already_registered", "you are registered already")
            if team_code:
                entrant = next((e for e in record["entrants"] if e.get("code") == team_code), None)
                if entrant is None:
                    raise not_found("team_code_not_found", "no team with this code here")
                if entrant["complete"]:
                    raise conflict("team_full", "this team is complete")
                entrant["players"].append(player)
                entrant["complete"] = True
            else:
                if len(record["entrants"]) >= record["max_entrants"]:
                    raise conflict("tournament_full", "the tournament is full")
                record["next_entrant"] = record.get("next_entrant", 0) + 1
                entrant = {
                    "id": f"e{record['next_entrant']}",
                    "players": [player],
                    "complete": record["team_size"] == 1,
                    "code": new_code,
                    "seed": 0,
                }
                record["entrants"].append(entrant)
            mine.update(entrant)
            return True

        doc, _ = await self.update(tournament_id, add)
        return doc, mine, new_code

    async def register_reply(
        self, user: Identity, tournament_id: str, team_code: str
    ) -> competitions_pb2.RegisterForTournamentResponse:
        _, entrant, new_code = await self.register(user, tournament_id, team_code)
        return competitions_pb2.RegisterForTournamentResponse(
            entrant=entrant_message(entrant), team_code=new_code
        )

    async def withdraw(self, user: Identity, tournament_id: str) -> None:
        """Leave before the start. A partner who withdraws leaves the team
        registered, incomplete, with the other player, who is told and given
        the team code for a new partner (a team incomplete at the start is
        dropped)."""
        partners: list[tuple[str, str]] = []  # (user id, team code) to tell

        def remove(record: Doc) -> bool:
            partners.clear()  # computed again on every compare-and-set lost
            if record["status"] != REGISTRATION:
                raise conflict("registration_closed", "the tournament has started")
            entrant = _entrant_of(record, user.user_id)
            if entrant is None:
                raise not_found("not_registered", "you are not registered")
            staying = [p for p in entrant["players"] if p["user_id"] != user.user_id]
            if staying:
                entrant["players"] = staying
                entrant["complete"] = False
                partners.extend((p["user_id"], entrant["code"]) for p in staying)
            else:
                record["entrants"] = [e for e in record["entrants"] if e is not entrant]
            return True

        doc, _ = await self.update(tournament_id, remove)
        for partner, code in partners:
            await self._tell(partner, social_pb2.TOURNAMENT_NOTICE_KIND_PARTNER_WITHDREW, doc, user, code)

    async def _tell(
        self, to: str, kind: social_pb2.TournamentNoticeKind.ValueType, doc: Doc, by: Identity, code: str = ""
    ) -> None:
        """A notice on a player's social feed about their registration."""
        notice = social_pb2.TournamentNotice(
            kind=kind,
            tournament_id=doc["id"],
            tournament_name=doc["name"],
            user_id=by.user_id,
            name=by.name,
            team_code=code,
        )
        await self.social_feeds.write(to, social_pb2.SocialEvent(at=time.time(), tournament=notice))

    async def remove_entrant(self, admin: Identity, tournament_id: str, entrant_id: str) -> Doc:
        """An admin takes an entrant (a no-show) off the list before the start."""
        require_admin(admin)

        def remove(record: Doc) -> bool:
            if record["status"] != REGISTRATION:
                raise conflict("registration_closed", "the tournament has started")
            removed = [e for e in record["entrants"] if e["id"] == entrant_id]
            if not removed:
                raise not_found("entrant_not_found", f"no entrant {entrant_id!r}")
            players[:] = [p["user_id"] for p in removed[0]["players"]]
            record["entrants"] = [e for e in record["entrants"] if e["id"] != entrant_id]
            return True

        players: list[str] = []
        doc, _ = await self.update(tournament_id, remove)
        for player in players:
            await self._tell(player, social_pb2.TOURNAMENT_NOTICE_KIND_REMOVED, doc, admin)
        return doc

    async def cancel(self, admin: Identity, tournament_id: str) -> Doc:
        """An admin calls a tournament off: in registration, or running (its
        tables play on, their results no longer recorded)."""
        require_admin(admin)

        def call_off(record: Doc) -> bool:
            if record["status"] in (FINISHED, CANCELLED):
                raise conflict("tournament_over", f"the tournament is {record['status']}")
            record["status"] = CANCELLED
            record["finished_at"] = time.time()
            return True

        doc, changed = await self.update(tournament_id, call_off)
        if changed:
            metrics.TOURNAMENTS.labels(doc["game"], "cancelled").inc()
            await self._after(doc)
        return doc

    # -- rounds ------------------------------------------------------------------------

    async def start(self, tournament_id: str, admin: Identity | None) -> Doc:
        """Close registration and pair the first round (once): by an admin,
        or the periodic check at the start time."""
        if admin is not None:
            require_admin(admin)

        def begin(record: Doc) -> bool:
            if record["status"] != REGISTRATION:
                if admin is not None and record["status"] != RUNNING:
                    raise conflict("tournament_over", f"the tournament is {record['status']}")
                return False
            record["entrants"] = [e for e in record["entrants"] if e["complete"]]
            ranked = sorted(
                enumerate(record["entrants"]),
                key=lambda pair: (-_rating(pair[1]), pair[0]),
            )
            for seed, (_, entrant) in enumerate(ranked, 1):
                entrant["seed"] = seed
            enough = record["min_table"] if not record["two_sided"] else 2
            if len(record["entrants"]) < enough:
                record["status"] = CANCELLED
                return True
            record["status"] = RUNNING
            n = len(record["entrants"])
            if record["format"] == SWISS:
                record["rounds_planned"] = record["rounds_requested"] or rules.swiss_rounds(n)
            else:
                record["rounds_planned"] = rules.elimination_rounds(n)
            _pair_next(record)
            return True

        doc, changed = await self.update(tournament_id, begin)
        if changed:
            # Counted after the write that won: a change function runs again
            # for every compare-and-set lost.
            metrics.TOURNAMENTS.labels(
                doc["game"], "cancelled" if doc["status"] == CANCELLED else "started"
            ).inc()
            if doc["status"] == RUNNING:
                metrics.TOURNAMENT_ROUNDS.labels(doc["game"], doc["format"]).inc()
            await self._after(doc)
        return doc

    async def on_result(self, game: str, match_id: str, result: dict[str, Any]) -> None:
        """Record a finished tournament match on its board (once) and, with
        the round's last one, pair the next round or close the tournament."""
        parsed = parse_table_id(match_id)
        if parsed is None:
            return
        tournament_id, round_number, board_number = parsed
        try:
            await self.load(tournament_id)
        except Refused:
            log.warning("a result for unknown tournament %s", tournament_id)
            return
        seats = result["seats"]
        by_user = {s["user_id"]: index for index, s in enumerate(seats)}

        def record_result(record: Doc) -> bool:
            if record["status"] != RUNNING or round_number != record["current_round"]:
                return False
            board = record["rounds"][round_number - 1]["boards"][board_number - 1]
            if board["finished"]:
                return False
            entrants = {e["id"]: e for e in record["entrants"]}
            firsts = [entrants[eid]["players"][0]["user_id"] for eid in board["entrants"]]
            if any(user not in by_user for user in firsts):
                # Not this board's players: never retried into a stuck stream.
                log.error("match %s does not seat board %s's entrants", match_id, board["number"])
                return False
            ranks = [result["ranks"][by_user[user]] for user in firsts]
            board["ranks"] = ranks
            board["points"] = rules.placement_points(ranks)
            board["finished"] = True
            if all(b["finished"] for b in record["rounds"][-1]["boards"]):
                _pair_next(record)
            return True

        doc, changed = await self.update(tournament_id, record_result)
        if changed:
            if doc["status"] == FINISHED:
                metrics.TOURNAMENTS.labels(doc["game"], "finished").inc()
            elif doc["current_round"] != round_number:
                metrics.TOURNAMENT_ROUNDS.labels(doc["game"], doc["format"]).inc()
            try:
                await self._after(doc)
            except Exception:
                # The result is recorded; the periodic check starts the
                # round's tables again. Raising here would hold up every
                # result behind this one in the results stream.
                log.exception("tournament %s: starting round %s", tournament_id, doc["current_round"])

    async def close_round(self, tournament_id: str, round_number: int) -> Doc:
        """The round's deadline passed: at every table still playing, the
        sides with a player who never acted forfeit; the round closes and the
        next one is paired (once, across replicas)."""
        doc, _ = await self.load(tournament_id)
        if doc["status"] != RUNNING or doc["current_round"] != round_number:
            return doc
        open_boards = [b for b in doc["rounds"][-1]["boards"] if not b["finished"]]
        acted = {
            b["table_id"]: set(cast(set[str], await self.redis.smembers(keys.board_acted(b["table_id"]))))
            for b in open_boards
        }

        def forfeit(record: Doc) -> bool:
            if record["status"] != RUNNING or record["current_round"] != round_number:
                return False
            entrants = {e["id"]: e for e in record["entrants"]}
            for board in record["rounds"][-1]["boards"]:
                if board["finished"]:
                    continue
                present = acted.get(board["table_id"], set())
                absent = [
                    eid
                    for eid in board["entrants"]
                    if any(p["user_id"] not in present for p in entrants[eid]["players"])
                ]
                board["ranks"] = [2 if eid in absent else 1 for eid in board["entrants"]]
                board["points"] = (
                    [0.0] * len(absent)
                    if len(absent) == len(board["entrants"])
                    else rules.placement_points(board["ranks"])
                )
                board["forfeited"] = absent
                board["finished"] = True
            _pair_next(record)
            return True

        doc, changed = await self.update(tournament_id, forfeit)
        if changed:
            log.info("tournament %s: round %s closed at its deadline", tournament_id, round_number)
            if doc["status"] == FINISHED:
                metrics.TOURNAMENTS.labels(doc["game"], "finished").inc()
            else:
                metrics.TOURNAMENT_ROUNDS.labels(doc["game"], doc["format"]).inc()
            await self._after(doc)
        return doc

    async def _after(self, doc: Doc) -> None:
        """What follows a change: start the current round's tables, or award
        the podium and retire a finished tournament."""
        if doc["status"] == RUNNING:
            await self._start_tables(doc)
        elif doc["status"] in (FINISHED, CANCELLED):
            if doc["status"] == FINISHED:
                await self._award_podium(doc)
            await self.redis.srem(keys.LIVE_TOURNAMENTS, doc["id"])

    async def _start_tables(self, doc: Doc) -> None:
        current = doc["rounds"][-1]
        if current.get("started"):
            return
        game = self.games.get(doc["game"])
        entrants = {e["id"]: e for e in doc["entrants"]}
        await asyncio.gather(
            *(
                self._start_board(doc, game, entrants, current["number"], board)
                for board in current["boards"]
                if not board["finished"]
            )
        )

        def mark(record: Doc) -> bool:
            latest = record["rounds"][-1] if record["rounds"] else None
            if latest is None or latest["number"] != current["number"] or latest.get("started"):
                return False
            latest["started"] = True
            return True

        await self.update(doc["id"], mark)

    async def _start_board(
        self, doc: Doc, game: GameClient, entrants: dict[str, Doc], round_number: int, board: Doc
    ) -> None:
        sides = [entrants[eid]["players"] for eid in board["entrants"]]
        mode = game.mode(doc["mode"])
        if doc["team_size"] == 2:
            players: list[dict[str, Any]] = [{}] * 4
            for side, team in zip(sides, mode.teams, strict=True):
                for player, seat in zip(side, team.seats, strict=True):
                    players[seat] = {"user_id": player["user_id"], "name": player["name"]}
        else:
            players = [{"user_id": s[0]["user_id"], "name": s[0]["name"]} for s in sides]
        table = board["table_id"]
        await self.tables.start_formed(table, game, doc["options"], players, False)

    async def _award_podium(self, doc: Doc) -> None:
        entrants = {e["id"]: e for e in doc["entrants"]}
        for eid, place in doc["places"]:
            if place <= 3:
                for player in entrants[eid]["players"]:
                    await self.trophies.award(
                        player["user_id"], PODIUM, doc["finished_at"], tournament_id=doc["id"]
                    )

    async def check(self) -> None:
        """One periodic pass over the live tournaments."""
        now = time.time()
        for tournament_id in cast(set[str], await self.redis.smembers(keys.LIVE_TOURNAMENTS)):
            try:
                doc, _ = await self.load(tournament_id)
                if doc["status"] == REGISTRATION and doc["starts_at"] and now >= doc["starts_at"]:
                    await self.start(tournament_id, None)
                elif doc["status"] != REGISTRATION:
                    await self._after(doc)
                    current = doc["rounds"][-1] if doc["status"] == RUNNING and doc["rounds"] else None
                    if current and current.get("started") and now >= current.get("deadline", float("inf")):
                        await self.close_round(tournament_id, current["number"])
            except Refused as refusal:
                log.warning("tournament %s: %s", tournament_id, refusal)

    # -- reading -----------------------------------------------------------------------

    async def follow(self, tournament_id: str, poll_seconds: float = 0.5) -> AsyncGenerator[Doc, None]:
        """The record now, then after every change, until it is over (the
        matchmaking tickets' way: a version read per poll, the record only
        when it changed). Raises Refused (404) before the first."""
        doc, version = await self.load(tournament_id)
        yield doc
        while doc["status"] not in (FINISHED, CANCELLED):
            await asyncio.sleep(poll_seconds)
            if cancel_requested():
                raise unavailable("the server is draining: follow again", "draining")
            now = int(await self.redis.hget(keys.tournament(tournament_id), "v") or 0)
            if now != version:
                doc, version = await self.load(tournament_id)
                yield doc

    async def list(self, game: str, status: str) -> list[Doc]:
        ids = cast(list[str], await self.redis.zrevrange(keys.TOURNAMENTS, 0, 199))
        docs = []
        for tournament_id in ids:
            try:
                doc, _ = await self.load(tournament_id)
            except Refused:
                continue
            if (not game or doc["game"] == game) and (not status or doc["status"] == status):
                docs.append(doc)
        return docs

    def message(self, doc: Doc) -> competitions_pb2.Tournament:
        game = self.games.get(doc["game"])
        options: any_pb2.Any = game.pack("Options", doc["options"], "invalid_options")
        message = competitions_pb2.Tournament(
            id=doc["id"],
            name=doc["name"],
            game=doc["game"],
            mode=doc["mode"],
            options=options,
            format=next(k for k, v in FORMATS.items() if v == doc["format"]),
            max_entrants=doc["max_entrants"],
            starts_at=doc["starts_at"],
            rounds_planned=doc["rounds_planned"],
            table_size=doc["table_size"],
            team_size=doc["team_size"],
            status=STATUSES[doc["status"]],
            current_round=doc["current_round"],
            created_at=doc["created_at"],
            created_by=doc["created_by"],
            round_seconds=doc.get("round_seconds", DEFAULT_ROUND_SECONDS),
        )
        for entrant in doc["entrants"]:
            message.entrants.append(entrant_message(entrant))
        for played in doc["rounds"]:
            message.rounds.append(
                competitions_pb2.Round(
                    number=played["number"],
                    byes=played["byes"],
                    boards=[
                        competitions_pb2.Board(
                            number=b["number"],
                            table_id=b["table_id"],
                            entrant_ids=b["entrants"],
                            finished=b["finished"],
                            points=b["points"],
                            ranks=b["ranks"],
                            forfeited_entrant_ids=b.get("forfeited", []),
                        )
                        for b in played["boards"]
                    ],
                )
            )
        message.standings.extend(
            competitions_pb2.Standing(
                place=place, entrant_id=eid, score=score, buchholz=tie_break, eliminated=out
            )
            for place, eid, score, tie_break, out in standings(doc)
        )
        return message


def _valid_name(name: str) -> str:
    name = name.strip()
    if not 1 <= len(name) <= 80:
        raise invalid("invalid_tournament", "name: 1-80 characters")
    return name


def _valid_max_entrants(value: int, registered: int) -> None:
    if not max(2, registered) <= value <= MAX_ENTRANTS:
        already = f", and not under the {registered} entrants registered" if registered else ""
        raise invalid("invalid_tournament", f"max_entrants: 2-{MAX_ENTRANTS}{already}")


def _valid_rounds(value: int, fmt: str) -> None:
    if not 0 <= value <= MAX_ROUNDS:
        raise invalid("invalid_tournament", f"rounds: 0-{MAX_ROUNDS}")
    if value and fmt == ELIMINATION:
        raise invalid("invalid_tournament", "an elimination's rounds follow from its bracket")


def _valid_round_seconds(value: int) -> int:
    if not ROUND_SECONDS[0] <= value <= ROUND_SECONDS[1]:
        raise invalid("invalid_tournament", f"round_seconds: {ROUND_SECONDS[0]}-{ROUND_SECONDS[1]}")
    return value


def entrant_message(entrant: Doc) -> competitions_pb2.Entrant:
    return competitions_pb2.Entrant(
        id=entrant["id"],
        players=[
            competitions_pb2.TournamentPlayer(user_id=p["user_id"], name=p["name"])
            for p in entrant["players"]
        ],
        rating=_rating(entrant),
        seed=entrant["seed"],
        complete=entrant["complete"],
    )


def _rating(entrant: Doc) -> float:
    return float(sum(p["rating"] for p in entrant["players"]) / len(entrant["players"]))


def _entrant_of(doc: Doc, user_id: str) -> Doc | None:
    return next((e for e in doc["entrants"] if any(p["user_id"] == user_id for p in e["players"])), None)


def _default_seats(game: GameClient, options: dict[str, Any]) -> int:
    """Two sides where the options' mode has them, else a table of four
    (or the nearest size the game allows)."""
    for mode in game.info.modes:
        wanted = json_format.MessageToDict(mode.options)
        if not all(options.get(k, v) == v for k, v in wanted.items()) or max(mode.seat_counts) < 2:
            continue
        if mode.teams or list(mode.seat_counts) == [2]:
            return max(mode.seat_counts)
        allowed = [s for s in mode.seat_counts if s >= 2]
        return min(allowed, key=lambda s: abs(s - DEFAULT_MULTI_TABLE))
    return 2


def _played(doc: Doc) -> rules.Played:
    finished = [b for r in doc["rounds"] for b in r["boards"] if b["finished"]]
    byes = [e for r in doc["rounds"] for e in r["byes"]] if doc["format"] == SWISS else []
    return rules.tally(
        [e["id"] for e in doc["entrants"]],
        [b["entrants"] for b in finished],
        [b["points"] for b in finished],
        byes,
    )


def _seeds(doc: Doc) -> dict[str, int]:
    return {e["id"]: e["seed"] for e in doc["entrants"]}


def _pair_next(doc: Doc) -> None:
    """Pair the next round into the record, or finish the tournament."""
    seeds = _seeds(doc)
    number = doc["current_round"] + 1
    if doc["format"] == SWISS:
        if number > doc["rounds_planned"]:
            _finish(doc)
            return
        boards, byes = rules.swiss_round(
            _played(doc), seeds, doc["table_size"] if not doc["two_sided"] else 2, doc["min_table"]
        )
        slots: list[list[str]] = []
    else:
        if number == 1:
            slots = rules.first_round_slots(sorted(seeds, key=seeds.__getitem__))
        else:
            advancing = _advancing(doc["rounds"][-1], seeds)
            if len(advancing) == 1:
                _finish(doc)
                return
            slots = rules.next_elimination_round(advancing)
        boards = [s for s in slots if len(s) == 2]
        byes = [s[0] for s in slots if len(s) == 1]
    doc["current_round"] = number
    doc["rounds"].append(
        {
            "number": number,
            "deadline": time.time() + doc.get("round_seconds", DEFAULT_ROUND_SECONDS),
            "slots": slots,
            "byes": byes,
            "started": False,
            "boards": [
                {
                    "number": index,
                    "table_id": table_id(doc["id"], number, index),
                    "entrants": seated,
                    "finished": False,
                    "points": [],
                    "ranks": [],
                }
                for index, seated in enumerate(boards, 1)
            ],
        }
    )


def _advancing(played: Doc, seeds: dict[str, int]) -> list[str]:
    """Who goes through each slot of an elimination round, in bracket order."""
    by_entrants = {tuple(b["entrants"]): b for b in played["boards"]}
    through = []
    for slot in played["slots"]:
        if len(slot) == 1:
            through.append(slot[0])
        else:
            board = by_entrants[tuple(slot)]
            through.append(rules.winner(board["entrants"], board["ranks"], seeds))
    return through


def _finish(doc: Doc) -> None:
    doc["status"] = FINISHED
    doc["finished_at"] = time.time()
    seeds = _seeds(doc)
    if doc["format"] == SWISS:
        doc["places"] = [[e, i] for i, (e, _, _) in enumerate(rules.swiss_standings(_played(doc), seeds), 1)]
    else:
        rounds = [r["slots"] for r in doc["rounds"]]
        advancing = [_advancing(r, seeds) for r in doc["rounds"]]
        doc["places"] = [list(p) for p in rules.elimination_places(rounds, advancing, seeds)]


def standings(doc: Doc) -> list[tuple[int, str, float, float, bool]]:
    """(place, entrant, score, Buchholz, eliminated), best first."""
    if doc["status"] in (REGISTRATION, CANCELLED):
        return []
    played = _played(doc)
    seeds = _seeds(doc)
    if doc["format"] == SWISS:
        return [(i, e, s, b, False) for i, (e, s, b) in enumerate(rules.swiss_standings(played, seeds), 1)]
    if doc["places"]:
        return [(place, e, played.scores[e], 0.0, place != 1) for e, place in doc["places"]]
    out: set[str] = set()
    for done in doc["rounds"]:
        for board in done["boards"]:
            if board["finished"]:
                through = rules.winner(board["entrants"], board["ranks"], seeds)
                out.update(e for e in board["entrants"] if e != through)
    order = sorted(played.scores, key=lambda e: (e in out, -played.scores[e], seeds[e]))
    return [(i, e, played.scores[e], 0.0, e in out) for i, e in enumerate(order, 1)]
