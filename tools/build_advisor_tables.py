"""Build the advisors' turn-start tables into their cache folder.

    python -m tools.build_advisor_tables [--dir DIR]

Builds the three tables (Yatzy classic, Yatzy Scandinavian, Bozó) from
scratch, whether or not a cached copy exists, and writes each atomically to
the cache folder (``--dir``, else ``RODADA_ADVISOR_DIR``, else
``.data/advisor/``) where the advisors look first. For each it prints the
build time, the file's size, the SHA-256 of its bytes (the build is
deterministic: the same numpy gives the same digest on every run) and the
optimal expected final total from an empty card.

The advisors build a missing table on first use anyway (see the docstring of
``services.yatzy.advisor`` for the numbers behind that choice); this tool
builds them ahead of time, e.g. in an image or before a benchmark.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from services.bozo.advisor import BozoModel
from services.yatzy import scoring
from services.yatzy.advisor import FloatArray, YatzyModel, advisor_dir, save_atomic


def _builders() -> list[tuple[str, str, Callable[[], FloatArray], Callable[[FloatArray], float]]]:
    """(label, file name, build, optimum from an empty card) per table."""
    classic = YatzyModel(scoring.CLASSIC)
    scandinavian = YatzyModel(scoring.SCANDINAVIAN)
    bozo = BozoModel()
    return [
        ("Yatzy classic", classic.name, classic.build, lambda table: float(table[0, 0])),
        ("Yatzy Scandinavian", scandinavian.name, scandinavian.build, lambda table: float(table[0, 0])),
        ("Bozó solo", bozo.name, bozo.build, lambda table: float(table[0])),
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Build the advisors' turn-start tables.")
    parser.add_argument("--dir", type=Path, default=None, help="cache folder (default: the advisors' own)")
    args = parser.parse_args(argv)
    directory: Path = args.dir or advisor_dir()
    print(f"building into {directory}")
    for label, name, build, optimum in _builders():
        began = time.perf_counter()
        table = build()
        seconds = time.perf_counter() - began
        path = directory / name
        save_atomic(path, table)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        print(
            f"{label:<19} {seconds:6.2f} s  {path.stat().st_size / 2**20:6.2f} MiB  "
            f"optimum {optimum(table):.6f}  {name}  sha256 {digest[:16]}"
        )


if __name__ == "__main__":
    main()
