"""``python -m tools.verify [RECORD] [--seed HEX]``: exit 0 and "verified",
or exit 1 and the first difference; exit 2 when the record's game has no
replay (nothing could be checked; see docs/fairness.md)."""

from __future__ import annotations

import argparse
import sys

from . import Difference, NoReplay, verify_text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.verify",
        description="Replay a finished Rodada match from its seed and check its public record.",
    )
    parser.add_argument(
        "record",
        nargs="?",
        default="-",
        help="the feed items as received: a JSON array or one JSON item per line (default: stdin)",
    )
    parser.add_argument("--seed", help="the revealed seed, hex (default: the one in the record)")
    args = parser.parse_args(argv)
    try:
        if args.record == "-":
            text = sys.stdin.read()
        else:
            with open(args.record, encoding="utf-8") as file:
                text = file.read()
    except OSError as error:
        print(f"cannot read the record: {error}", file=sys.stderr)
        return 1
    try:
        report = verify_text(text, args.seed)
    except Difference as difference:
        print(f"NOT verified: {difference}")
        return 1
    except NoReplay as missing:
        print(f"cannot verify: {missing}", file=sys.stderr)
        return 2
    print(report.text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
