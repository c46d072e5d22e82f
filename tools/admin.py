"""Grant or take back the admin role (admins announce tournaments):

    python -m tools.admin grant <username>
    python -m tools.admin revoke <username>

against the Redis of REDIS_URL (REDIS_CLUSTER=1 for a cluster). The role is
in the account's tokens from its next log-in.
"""

from __future__ import annotations

import argparse
import asyncio

from gateway.accounts import Accounts
from services.core.errors import Refused
from services.core.settings import CommonSettings
from services.core.store import connect


async def main(action: str, username: str) -> int:
    settings = CommonSettings()
    redis = connect(settings.redis_url, settings.redis_cluster, decode=True)
    try:
        user_id = await Accounts(redis).set_role(username, "admin" if action == "grant" else "user")
    except Refused as refusal:
        print(refusal)
        return 1
    finally:
        await redis.aclose()
    print(f"{username} ({user_id}): {'admin' if action == 'grant' else 'user'}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("action", choices=("grant", "revoke"))
    parser.add_argument("username")
    arguments = parser.parse_args()
    raise SystemExit(asyncio.run(main(arguments.action, arguments.username)))
