"""The CPU's play of a seat: :func:`cpu`, from that seat's view alone.

The kit calls it for every move of a CPU-controlled seat (a CPU seat, a seat
whose player left, an idle seat whose turn timer ran out). Everything but one
decision is forced: a turn is a flip, and so is an extra flip the table makes
mandatory. The one decision is taking the extra flip on offer, or stopping. It
uses public information only, all of it in the view: which cards are still face
down — the deck's *composition*, known because every flipped card was shown
(all 100 cards minus those in the hands and the pile), never its order — the
CPU's own card count, the pile, the other seats' cards and the table's rules.

Reasoning: each face-down card is equally likely to be on top, so one more flip
is worth the average, over those cards, of what the card would do to the CPU's
card count (its score):

- a noble, or an emperor that keeps (and offers yet another flip, which is worth
  at least nothing since the CPU may stop then): +1;
- a lady: +1 and the whole pile;
- an emperor that takes everyone's cards: +1 and every other seat's cards;
- a monk, or a Semimaru that sends the hand to the pile: minus the hand — but
  not all of it, since the CPU may win the pile back with a later lady, about
  one chance in as many seats as are still playing;
- Semimaru knocking the CPU out: minus the whole hand and minus the cards it
  would still have flipped (its share of the rest of the deck), since a
  knocked-out seat scores nothing and is placed last;
- Semimaru skipping a turn: +1 for the card, about -1 for the lost turn: 0.

The CPU flips when that average is above zero, and on an even bet keeps what it
has. So it flips freely while it holds little or the pile is rich, and stops once
a large hand is exposed to the monks still in the deck. The look-ahead is one
card deep on purpose: cheap (a handful of operations per decision), explainable,
and measured against always stopping and always flipping in
tests/unit/test_bozu_mekuri_cpu.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from services.bozu_mekuri.cards import EMPEROR, LADY, MONK, NOBLE, NUMBERS, SEMIMARU, kinds_table
from services.kit.engine import JSON, Rng


@dataclass(frozen=True)
class Outlook:
    """What the CPU knows when an extra flip is offered (all of it public)."""

    unseen: Mapping[str, int]  # face-down cards counted by how they act: a composition, no order
    own: int  # cards the CPU holds
    pile: int  # cards in the common pile
    others: int  # cards all other seats hold together
    active_seats: int  # seats still in the game, the CPU's included
    options: JSON  # the table's rules, defaults filled in

    @classmethod
    def of(
        cls, unseen: Iterable[int], own: int, pile: int, others: int, active_seats: int, options: JSON
    ) -> Outlook:
        """From the face-down card numbers: only how many of each kind is kept."""
        kinds = kinds_table(options["emperor"], options["semimaru"])
        return cls(Counter(map(kinds.__getitem__, unseen)), own, pile, others, active_seats, options)

    @classmethod
    def from_view(cls, view: JSON, seat: int) -> Outlook:
        """What any player can work out from the public view: the face-down
        cards are all 100 minus those held and those in the pile."""
        seats = view["seats"]
        face_up = {card["number"] for s in seats for card in s["cards"]}
        face_up.update(card["number"] for card in view["pile"])
        own = seats[seat]["card_count"]
        return cls.of(
            [n for n in NUMBERS if n not in face_up],
            own,
            view["pile_count"],
            sum(s["card_count"] for s in seats) - own,
            sum(1 for s in seats if not s["eliminated"]),
            view["options"],
        )


def card_value(kind: str, outlook: Outlook) -> float:
    """What flipping a card of this kind would do to the CPU's card count."""
    options = outlook.options
    seats = max(outlook.active_seats, 1)
    if kind == NOBLE:
        return 1.0
    if kind == LADY:
        return 1.0 + outlook.pile
    if kind == EMPEROR:
        return 1.0 + (outlook.others if options["emperor"] == "TAKE_EVERYONES_CARDS" else 0)
    if kind == MONK:
        return -outlook.own * (1.0 - 1.0 / seats)
    assert kind == SEMIMARU  # with an effect of his own
    rule = options["semimaru"]
    if rule == "OUT_AT_ONCE":
        later_flips = (sum(outlook.unseen.values()) - 1) / seats
        return -(outlook.own + later_flips)
    if rule == "SKIP_ONCE":
        return 0.0
    return -outlook.own * (1.0 - 1.0 / seats)  # EVERYONE_TO_PILE


def flip_value(outlook: Outlook) -> float:
    """Expected change of the CPU's card count if it flips one more card."""
    remaining = sum(outlook.unseen.values())
    if not remaining:
        return 0.0
    return sum(count * card_value(kind, outlook) for kind, count in outlook.unseen.items()) / remaining


def wants_extra_flip(outlook: Outlook) -> bool:
    """Flip when it is expected to gain cards; on an even bet keep what you have."""
    return flip_value(outlook) > 0


def cpu(view: JSON, seat: int, rng: Rng) -> JSON:
    """The CPU's move for ``seat``, the seat to act, from its view alone: a
    flip, unless an extra flip is on offer, the table allows stopping
    (``can_stop``) and one more flip is not expected to gain cards.
    Deterministic: ``rng`` is not used."""
    if view["can_stop"] and not wants_extra_flip(Outlook.from_view(view, seat)):
        return {"stop": {}}
    return {"flip": {}}
