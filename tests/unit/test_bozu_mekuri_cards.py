"""The deck as data: services/bozu_mekuri/cards.json against the seed and RULES.md."""

from __future__ import annotations

import re
from collections import Counter

from services.bozu_mekuri.cards import CARDS, EMPEROR, LADY, MONK, NOBLE, NUMBERS, SEMIMARU, kind_under

EMPERORS = {
    1: "Tenchi", 2: "Jitō", 13: "Yōzei", 15: "Kōkō", 68: "Sanjō", 77: "Sutoku", 99: "Go-Toba", 100: "Juntoku",
}  # fmt: skip
MONKS = {8, 12, 21, 47, 66, 69, 70, 82, 85, 86, 87, 95}


def test_one_card_per_poem_number_1_to_100() -> None:
    assert tuple(range(1, 101)) == NUMBERS
    assert all(CARDS[n]["number"] == n for n in NUMBERS)


def test_category_counts_are_the_seeds() -> None:
    # Seed, "Termos": 66 nobles (7 emperors among them), 21 ladies (Jitō among them), 12 monks, Semimaru.
    counts = Counter(card["category"] for card in CARDS.values())
    assert counts == {NOBLE: 66, LADY: 21, MONK: 12, SEMIMARU: 1}
    assert sum(1 for c in CARDS.values() if c["category"] == NOBLE and c["emperor"]) == 7
    assert CARDS[2]["category"] == LADY and CARDS[2]["emperor"]
    assert CARDS[10]["category"] == SEMIMARU and CARDS[10]["name_romaji"] == "Semimaru"
    assert {n for n, c in CARDS.items() if c["category"] == MONK} == MONKS


def test_the_eight_emperor_cards() -> None:
    assert {n for n, c in CARDS.items() if c["emperor"]} == set(EMPERORS)
    for number, name in EMPERORS.items():
        assert CARDS[number]["name_romaji"].startswith(name), number


def test_every_card_names_its_poet() -> None:
    for card in CARDS.values():
        assert set(card) == {"number", "name_ja", "name_kana", "name_romaji", "category", "emperor"}
        assert card["name_ja"] and card["name_kana"] and card["name_romaji"]
    # Names are unique (a card is recognisable by its poet, not only by its category).
    assert len({c["name_ja"] for c in CARDS.values()}) == 100
    assert len({c["name_romaji"] for c in CARDS.values()}) == 100


# The romaji must read the kana (Hepburn; ō for おう/おお, ū for うう; n' before a
# vowel). This is what normalising the source's romaji meant: "Hoshi" → "Hōshi",
# "Kan Ke" → "Kanke", "Toshinari" → "Shunzei", "Sadaie" → "Teika", …

_KANA: dict[str, str] = {
    "あ": "a", "い": "i", "う": "u", "え": "e", "お": "o",
    "か": "ka", "き": "ki", "く": "ku", "け": "ke", "こ": "ko",
    "さ": "sa", "し": "shi", "す": "su", "せ": "se", "そ": "so",
    "た": "ta", "ち": "chi", "つ": "tsu", "て": "te", "と": "to",
    "な": "na", "に": "ni", "ぬ": "nu", "ね": "ne", "の": "no",
    "は": "ha", "ひ": "hi", "ふ": "fu", "へ": "he", "ほ": "ho",
    "ま": "ma", "み": "mi", "む": "mu", "め": "me", "も": "mo",
    "や": "ya", "ゆ": "yu", "よ": "yo",
    "ら": "ra", "り": "ri", "る": "ru", "れ": "re", "ろ": "ro",
    "わ": "wa", "を": "o",
    "が": "ga", "ぎ": "gi", "ぐ": "gu", "げ": "ge", "ご": "go",
    "ざ": "za", "じ": "ji", "ず": "zu", "ぜ": "ze", "ぞ": "zo",
    "だ": "da", "ぢ": "ji", "づ": "zu", "で": "de", "ど": "do",
    "ば": "ba", "び": "bi", "ぶ": "bu", "べ": "be", "ぼ": "bo",
    "ぱ": "pa", "ぴ": "pi", "ぷ": "pu", "ぺ": "pe", "ぽ": "po",
}  # fmt: skip
_SMALL = {"ゃ": "a", "ゅ": "u", "ょ": "o"}


def _romanise(kana: str) -> str:
    out: list[str] = []
    double = False
    i = 0
    while i < len(kana):
        ch = kana[i]
        i += 1
        if ch == "っ":
            double = True
            continue
        if ch == "ん":
            out.append("n")
            continue
        syllable = _KANA[ch]
        if i < len(kana) and kana[i] in _SMALL:
            stem = syllable[:-1] if syllable in ("shi", "chi", "ji") else syllable[:-1] + "y"
            syllable = stem + _SMALL[kana[i]]
            i += 1
        if double:
            syllable = syllable[0] + syllable
            double = False
        out.append(syllable)
    return "".join(out)


def _reading_pattern(romaji: str) -> str:
    plain = re.sub(r"[ \-']", "", romaji.lower())
    return plain.replace("ō", "o[ou]").replace("ū", "uu")


def test_romanisation_helper_is_hepburn() -> None:
    assert _romanise("ほっしょうじ") == "hosshouji"
    assert re.fullmatch(_reading_pattern("Hosshōji"), _romanise("ほっしょうじ"))
    assert not re.fullmatch(_reading_pattern("Hoshi"), _romanise("ほうし"))


def test_romaji_reads_the_kana() -> None:
    # #1 reads てんじ in the kana; the seed and RULES.md spell it Tenchi, an accepted reading too.
    mismatched = [
        n
        for n, c in CARDS.items()
        if n != 1 and not re.fullmatch(_reading_pattern(c["name_romaji"]), _romanise(c["name_kana"]))
    ]
    assert mismatched == []
    assert CARDS[1]["name_romaji"] == "Tenchi Tennō"


def test_kind_under_the_local_rules() -> None:
    defaults = {"emperor": "KEEP_AND_FLIP_AGAIN", "semimaru": "OUT_AT_ONCE"}
    assert kind_under(3, defaults) == NOBLE
    assert kind_under(8, defaults) == MONK
    assert kind_under(9, defaults) == LADY
    assert kind_under(10, defaults) == SEMIMARU
    assert kind_under(1, defaults) == EMPEROR
    assert kind_under(2, defaults) == EMPEROR  # Jitō: the emperor effect replaces the lady's
    assert kind_under(2, {**defaults, "emperor": "TAKE_EVERYONES_CARDS"}) == EMPEROR
    ordinary = {**defaults, "emperor": "ORDINARY"}
    assert kind_under(1, ordinary) == NOBLE
    assert kind_under(2, ordinary) == LADY
    assert kind_under(10, {**defaults, "semimaru": "AS_MONK"}) == MONK
    assert kind_under(10, {**defaults, "semimaru": "AS_NOBLE"}) == NOBLE
    assert kind_under(10, {**defaults, "semimaru": "SKIP_ONCE"}) == SEMIMARU
