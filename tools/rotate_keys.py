"""``python -m tools.rotate_keys``: sign with a new key from now on.

Keeps the old public key as ``previous.pub.pem`` in RODADA_KEYS_DIR, so game
services (which re-read the folder every KEY_RELOAD_SECONDS) and gateways
accept tokens of both keys; restart the gateway replicas to sign with the new
one. Tokens of the old key stay valid until they expire; the next rotation
drops the old key.
"""

from services.core.settings import CommonSettings
from services.core.tokens import rotate_signing_key

if __name__ == "__main__":
    print(f"signing key is now {rotate_signing_key(CommonSettings().rodada_keys_dir)}")
