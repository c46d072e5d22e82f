"""``python -m gateway``: serve the HTTP API with uvicorn."""

import uvicorn

from gateway.app import create_app
from gateway.settings import GatewaySettings
from services.kit import logs


def main() -> None:
    settings = GatewaySettings.from_env()
    logs.configure("gateway")
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_config=None,  # our JSON logs, set up above
        proxy_headers=True,
    )


if __name__ == "__main__":
    main()
