"""The deck: the 100 poet cards of the Ogura Hyakunin Isshu (RULES.md "Bozu Mekuri").

``cards.json`` beside this module is the data: real poem number, the poet's name
as printed, in kana and in Hepburn romaji, the printed category and the emperor
flag. It comes from /work/shared/data/hyakunin_poets.json with the romaji made to
read the kana (see the test that checks it); the category counts are the seed's.

How a card acts depends on the table's local rules; :func:`kind_under` is the one
place that decides it, for the engine and the CPU alike.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, Final

JSON = dict[str, Any]

NOBLE: Final = "NOBLE"
LADY: Final = "LADY"
MONK: Final = "MONK"
SEMIMARU: Final = "SEMIMARU"
# Not a printed category: an emperor card while the emperor rule gives it its own effect.
EMPEROR: Final = "EMPEROR"

SEMIMARU_NUMBER: Final = 10


def _load() -> dict[int, JSON]:
    with Path(__file__).with_name("cards.json").open(encoding="utf-8") as file:
        cards: list[JSON] = json.load(file)
    return {card["number"]: card for card in cards}


# Read once at import: the hot path only looks cards up.
CARDS: Final[dict[int, JSON]] = _load()
NUMBERS: Final[tuple[int, ...]] = tuple(sorted(CARDS))


def card_json(number: int) -> JSON:
    """The card as the proto ``Card`` (a fresh dict: callers may keep or change it)."""
    return dict(CARDS[number])


def kind_under(number: int, options: JSON) -> str:
    """How the card acts under the table's rules: NOBLE, LADY, MONK, EMPEROR or SEMIMARU.

    EMPEROR is returned while the emperor rule gives emperors their own effect, and
    then replaces the printed category, Jitō's lady included (RULES.md decision).
    SEMIMARU is returned only for the rules that give him an effect of his own; "as
    a monk" and "as a noble" turn him into that card.
    """
    card = CARDS[number]
    if card["emperor"] and options["emperor"] != "ORDINARY":
        return EMPEROR
    if card["category"] == SEMIMARU:
        if options["semimaru"] == "AS_MONK":
            return MONK
        if options["semimaru"] == "AS_NOBLE":
            return NOBLE
    category: str = card["category"]
    return category


@cache
def kinds_table(emperor_rule: str, semimaru_rule: str) -> dict[int, str]:
    """:func:`kind_under` for every card at once, for counting a deck by kind cheaply."""
    options = {"emperor": emperor_rule, "semimaru": semimaru_rule}
    return {number: kind_under(number, options) for number in NUMBERS}
