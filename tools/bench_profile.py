"""Profile the hot path (not part of ``make bench``): a loopback platform
under a lean Node driver (``bench/rodada``), and py-spy on the chosen
processes while it runs. Writes py-spy's raw (collapsed) stacks and prints
each process's share of samples by library.

    python -m tools.bench_profile grpc|web [--matches 50] [--seconds 10] [--out DIR] [--native]

py-spy (``pip install py-spy``; root or ptrace rights) is not a dependency.
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from tools import bench

# By the first of these found in a sample's innermost frame (its file).
LIBRARIES = [
    ("grpc/", "grpc (Python layer and the C-core under it)"),
    ("cygrpc", "grpc (Python layer and the C-core under it)"),
    ("libgrpc", "grpc (Python layer and the C-core under it)"),
    ("redis/", "redis-py"),
    ("hiredis", "redis-py"),
    ("services/core/guard", "core: guard"),
    ("services/core/", "core"),
    ("services/kit/", "kit"),
    ("services/yatzy", "the Yatzy engine"),
    ("google/protobuf", "protobuf"),
    ("_message", "protobuf"),
    ("prometheus_client", "prometheus-client"),
    ("gateway/api/http", "gateway: transcoder"),
    ("gateway/protojson", "gateway: protojson"),
    ("protojson", "gateway: protojson"),
    ("gateway/", "gateway"),
    ("starlette", "starlette"),
    ("fastapi", "fastapi"),
    ("uvicorn", "uvicorn"),
    ("httptools", "uvicorn"),
    ("wsproto", "wsproto"),
    ("h11", "h11"),
    ("uvloop", "uvloop (event loop, syscalls)"),
    ("asyncio/", "asyncio"),
    ("libc", "libc (syscalls)"),
    ("libpython", "the interpreter"),
    ("logging", "logging"),
    ("jwt", "pyjwt"),
]


def library(frame: str) -> str:
    match = re.search(r"\((.*?)(?::\d+)?\)$", frame)
    where = match.group(1) if match else frame
    for needle, name in LIBRARIES:
        if needle in where or needle in frame:
            return name
    return "other"


# Waiting, not working: a thread blocked in these is idle (py-spy's --native
# sampling cannot always tell).
IDLE = re.compile(
    r"epoll_p?wait|^poll |select_poll|SimpleQueue_get|pthread_cond_timedwait|acquire_lock_timed"
)


def shares(raw: Path) -> list[tuple[str, float]]:
    """Each library's share of the busy samples (by the innermost frame)."""
    counts: collections.Counter[str] = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if stack and not any(IDLE.search(frame) for frame in frames[-4:]):
            counts[library(frames[-1])] += int(count)
    total = sum(counts.values()) or 1
    return [(name, 100 * n / total) for name, n in counts.most_common()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path", choices=["grpc", "web", "platform"])
    parser.add_argument("--matches", type=int, default=50)
    parser.add_argument("--players", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--out", type=Path, default=Path("."))
    parser.add_argument("--native", action="store_true")
    args = parser.parse_args()
    spy = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if spy is None:
        raise SystemExit("py-spy not found (pip install py-spy)")
    settings = bench.Settings(seconds=args.seconds, matches=(args.matches,), players=(args.players,))
    args.out.mkdir(parents=True, exist_ok=True)
    failures: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        rodada = bench.Rodada(Path(tmp), settings)
        try:
            names = ["yatzy"] if args.path == "grpc" else ["yatzy", "gateway"]
            outputs = {name: args.out / f"profile-{args.path}-{name}.txt" for name in names}
            spies = []

            def record(name: str) -> None:
                command = [spy, "record", "--pid", str(rodada.pids[name]), "--format", "raw"]
                command += ["--duration", str(int(args.seconds)), "--rate", "100", "-o", str(outputs[name])]
                if args.native:
                    command.append("--native")
                done = subprocess.run(command, capture_output=True, text=True, check=False)
                if done.returncode != 0:
                    failures[name] = (done.stderr or done.stdout).strip()

            for name in names:
                thread = threading.Thread(target=record, args=(name,))
                # After the driver's warm-up (bench.Settings' default, 2 s).
                timer = threading.Timer(settings.warmup, thread.start)
                timer.start()
                spies.append((timer, thread))
            row = rodada.row(args.path, args.matches, args.players)
            for timer, thread in spies:
                timer.join()
                thread.join()
        finally:
            rodada.stop()
    print(bench.table([row]))
    for name, output in outputs.items():
        print(f"\n{name} ({output}):")
        if name in failures or not output.exists():
            print(f"py-spy recorded nothing: {failures.get(name) or 'no output'}")
            continue
        for lib, share in shares(output)[:14]:
            print(f"{share:5.1f} %  {lib}")


if __name__ == "__main__":
    main()
