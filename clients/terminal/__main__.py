"""``rodada-terminal``: play Rodada in a terminal, over gRPC."""

from __future__ import annotations

import argparse
import os

from clients.terminal.app import RodadaTerminal


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="rodada-terminal", description=__doc__)
    parser.add_argument(
        "--server",
        default=os.environ.get("RODADA_GRPC", "127.0.0.1:50050"),
        help="the gateway's gRPC address (default: $RODADA_GRPC or 127.0.0.1:50050)",
    )
    RodadaTerminal(parser.parse_args(argv).server).run()


if __name__ == "__main__":
    main()
