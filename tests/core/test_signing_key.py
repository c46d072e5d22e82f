"""The gateway's signing key made on first run: processes starting together
(a pod's WORKERS) must end up with one key, or a token signed by one worker
would be refused by the others until the next key reload."""

from __future__ import annotations

import threading
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from services.core.tokens import PRIVATE_KEY_FILE, key_id, load_or_create_signing_key, load_public_keys


def test_processes_starting_together_share_one_key(tmp_path: Path) -> None:
    starters = 8
    barrier = threading.Barrier(starters)
    keys: list[Ed25519PrivateKey] = []

    def start() -> None:
        barrier.wait()
        keys.append(load_or_create_signing_key(tmp_path))

    threads = [threading.Thread(target=start) for _ in range(starters)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ids = {key_id(key.public_key()) for key in keys}
    assert len(keys) == starters and len(ids) == 1
    assert {key_id(k) for k in load_public_keys(tmp_path)} == ids
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []
    assert (tmp_path / PRIVATE_KEY_FILE).stat().st_mode & 0o077 == 0


def test_a_key_on_disk_is_taken_as_it_is(tmp_path: Path) -> None:
    first = load_or_create_signing_key(tmp_path)
    assert key_id(load_or_create_signing_key(tmp_path).public_key()) == key_id(first.public_key())
