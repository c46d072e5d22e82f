"""Dudo (docs/fairness.md "Dudo"): the first opener is drawn, then every
round throws every die still in play, seat by seat and die by die; a call
reveals them all and settles who loses (or wins back) a die, which decides
the next round's dice and opener."""

from __future__ import annotations

from tools.verify.record import JSON, Event, Mismatch
from tools.verify.replay import Expected, Shadow, end_reason

ONES = 1
OUT_REASONS = {"left": "LEFT", "inactive": "REMOVED_INACTIVE"}


def counts_for(die: int, face: int, ones_wild: bool) -> bool:
    return die == face or (ones_wild and face != ONES and die == ONES)


class Dudo(Shadow):
    choices = frozenset({"bid_made", "revealed", "assist_changed"})

    def start(self) -> list[Expected]:
        options = self.record.view.get("options", {})
        seats = self.record.seats
        self.per_player = int(options.get("dice_per_player", 3))
        self.palifico_on = bool(options.get("palifico", False))
        self.calza_on = bool(options.get("calza", False))
        self.open_on_ones = bool(options.get("open_on_ones", False))
        self.counts = [self.per_player] * seats
        self.dice: list[list[int]] = [[] for _ in range(seats)]
        self.round = 0
        self.turn: int | None = None
        self.bid: tuple[int, int] | None = None
        self.bidder: int | None = None
        self.palifico_seat: int | None = None
        self.palifico_used = [False] * seats
        self.outs: list[tuple[int, str, int]] = []  # (seat, why, place)
        self.shown: set[int] = set()  # seats whose dice this round the record showed
        opener = self.rng.below(seats)
        return self._start_round(opener, None)

    def choose(self, event: Event) -> list[Expected]:
        if event.kind == "assist_changed":  # private, off turn too, and changes nothing drawn
            changed = {"seat": int(event.data.get("seat", 0)), "on": bool(event.data.get("on", False))}
            return [Expected("assist_changed", changed, audience=(changed["seat"],))]
        self.check_turn(event, self.turn)
        seat = self.turn
        assert seat is not None
        if event.kind == "bid_made":
            quantity, face = event.data.get("quantity", 0), event.data.get("face", 0)
            lowest = self._lowest(face)
            if lowest is None:
                raise Mismatch("face", "a face this bid may name", face)
            if type(quantity) is not int or not lowest <= quantity <= sum(self.counts):
                raise Mismatch("quantity", f"{lowest} to {sum(self.counts)} dice", quantity)
            self.bid, self.bidder = (quantity, face), seat
            self.turn = self._next_in(seat)
            return [Expected("bid_made", {"seat": seat, "quantity": quantity, "face": face})]
        if self.bid is None:
            raise Mismatch("event", "a bid before the call", event.kind)
        return self._reveal(seat, event.data.get("call", ""))

    def check_turn(self, event: Event, seat: int | None) -> None:
        name = "seat" if event.kind == "bid_made" else "caller"
        if seat != int(event.data.get(name, 0)):
            raise Mismatch(name, seat, int(event.data.get(name, 0)))

    def depart(self, seat: int, why: str) -> list[Expected]:
        events = [self._put_out(seat, OUT_REASONS[why])]
        if len(self._players_in()) == 1:
            self._end()
            return events
        if self.bidder == seat:
            # Nobody could lose the die a call would cost: the round is thrown again.
            events.append(Expected("round_voided", {"round": self.round, "seat": seat}))
            palifico = self.palifico_seat
            if palifico is not None and self.counts[palifico] == 0:
                palifico = None
            assert self.turn is not None
            return [*events, *self._start_round(self.turn, palifico)]
        if self.turn == seat:
            self.turn = self._next_in(seat)
        return events

    def result(self) -> JSON:
        ranks = [1] * len(self.counts)
        for seat, _, place in self.outs:
            ranks[seat] = place
        last = self.outs[-1][1] if self.outs else "NO_DICE"  # the last out ended the match
        return {
            "ranks": ranks,
            "scores": [],
            "reason": end_reason({"LEFT": "left", "NO_DICE": None}.get(last, "inactive")),
            "forfeited": [seat for seat, why, _ in self.outs if why != "NO_DICE"],
        }

    # -- rounds ------------------------------------------------------------------

    def _start_round(self, opener: int, palifico_seat: int | None) -> list[Expected]:
        self._note_unshown()
        self.round += 1
        self.turn, self.bid, self.bidder = opener, None, None
        self.palifico_seat = palifico_seat
        # Seat by seat, die by die.
        self.dice = [[self.rng.die() for _ in range(count)] for count in self.counts]
        self.shown = set()
        started = {
            "round": self.round,
            "opener": opener,
            "dice_counts": list(self.counts),
            "dice_in_play": sum(self.counts),
            "palifico": palifico_seat is not None,
            "palifico_seat": palifico_seat,
        }
        rolled = [
            Expected("dice_rolled", {"round": self.round, "seat": s, "dice": list(d)}, audience=(s,))
            for s, d in enumerate(self.dice)
            if d
        ]
        if 0 <= self.record.viewer < len(self.dice):
            self.shown.add(self.record.viewer)
        return [Expected("round_started", started), *rolled]

    def _reveal(self, caller: int, call: str) -> list[Expected]:
        assert self.bid is not None and self.bidder is not None
        quantity, face = self.bid
        ones_wild = self.palifico_seat is None
        count = sum(1 for dice in self.dice for die in dice if counts_for(die, face, ones_wild))
        loser = gainer = None
        if call == "DUDO":
            outcome, loser = ("BIDDER_LOSES", self.bidder) if count < quantity else ("CALLER_LOSES", caller)
        elif call == "CALZA" and not self.calza_on:
            raise Mismatch("call", "DUDO (this table plays without calza)", call)
        elif call == "CALZA" and count == quantity:
            outcome = "CALZA_RIGHT"
            gainer = caller if self.counts[caller] < self.per_player else None
        elif call == "CALZA":
            outcome, loser = "CALZA_WRONG", caller
        else:
            raise Mismatch("call", "DUDO or CALZA", call)
        reveal = {
            "round": self.round,
            "caller": caller,
            "call": call,
            "bidder": self.bidder,
            "bid": {"quantity": quantity, "face": face},
            "ones_wild": ones_wild and face != ONES,
            "hands": [{"seat": s, "dice": list(d)} for s, d in enumerate(self.dice) if d],
            "count": count,
            "outcome": outcome,
            "loser": loser,
            "gainer": gainer,
        }
        self.shown = set(range(len(self.dice)))
        events = [Expected("revealed", reveal)]
        palifico_seat = None
        if gainer is not None:
            self.counts[gainer] += 1
        if loser is not None:
            if self.counts[loser] == 1:
                events.append(self._put_out(loser, "NO_DICE"))
            else:
                self.counts[loser] -= 1
                if self.palifico_on and self.counts[loser] == 1 and not self.palifico_used[loser]:
                    self.palifico_used[loser] = True
                    palifico_seat = loser
        if len(self._players_in()) == 1:
            self._end()
            return events
        opener = loser if loser is not None else caller
        if self.counts[opener] == 0:
            opener = self._next_in(opener)
        return [*events, *self._start_round(opener, palifico_seat)]

    def _lowest(self, face: object) -> int | None:
        """The fewest dice a bid on ``face`` needs now, or None if the bid may
        not name it: ones open a round only where allowed, a palifico round
        keeps its face, and moving to or from ones halves or doubles."""
        if type(face) is not int or not 1 <= face <= 6:
            return None
        palifico = self.palifico_seat is not None
        if self.bid is None:
            return None if face == ONES and not (self.open_on_ones or palifico) else 1
        quantity, standing = self.bid
        if palifico:
            return quantity + 1 if face == standing else None
        if standing != ONES and face != ONES:
            return quantity if face > standing else quantity + 1
        if standing != ONES:
            return (quantity + 1) // 2
        return quantity + 1 if face == ONES else 2 * quantity + 1

    def _put_out(self, seat: int, why: str) -> Expected:
        """Out: the seat's dice leave the table, unseen if no call showed them."""
        place = len(self._players_in())
        if seat not in self.shown:
            self.unshown.append(f"round {self.round}: the dice of seat {seat}, out before a call")
        self.counts[seat] = 0
        self.dice[seat] = []
        self.outs.append((seat, why, place))
        return Expected("player_out", {"seat": seat, "reason": why, "place": place})

    def _end(self) -> None:
        self._note_unshown()
        self.turn = None
        self.over = True

    def _note_unshown(self) -> None:
        hidden = [s for s, d in enumerate(self.dice) if d and s not in self.shown]
        if hidden:
            self.unshown.append(f"round {self.round}: the dice of seats {hidden}, never called")

    def _players_in(self) -> list[int]:
        return [s for s, count in enumerate(self.counts) if count > 0]

    def _next_in(self, seat: int) -> int:
        seats = len(self.counts)
        for step in range(1, seats):
            other = (seat + step) % seats
            if self.counts[other] > 0:
                return other
        raise Mismatch("seat", "another player still in", None)


SHADOW = Dudo
