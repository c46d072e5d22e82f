"""``python -m gateway``: serve the HTTP API with uvicorn."""

import uvicorn

from gateway.app import create_app
from gateway.settings import GatewaySettings


def main() -> None:
    settings = GatewaySettings.from_env()
    uvicorn.run(
        create_app(settings), host=settings.host, port=settings.port, log_level="info", proxy_headers=True
    )


if __name__ == "__main__":
    main()
