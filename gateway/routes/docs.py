"""The API's documents, served by the gateway itself so they work offline:
the OpenAPI (typed from the protos), the feeds' AsyncAPI, and Swagger UI and
ReDoc from the assets the ``fastapi-offline`` package ships (no CDN: ReDoc's
script, which draws its maker's logo from one, is served with the site's
own icon in its place)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import fastapi_offline
from fastapi import APIRouter, FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

from gateway.openapi import ASYNCAPI_URL, build_openapi
from gateway.platform import Platform
from gateway.routes.site import FAVICON_URL

router = APIRouter(include_in_schema=False)
ASSETS = "/docs-assets"
_ASSETS_DIR = Path(fastapi_offline.__file__).parent / "static"
# The one address ReDoc's standalone script loads from the internet.
_REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"
REDOC_JS = f"{ASSETS}/redoc.offline.js"


def documents(app: FastAPI) -> tuple[dict[str, Any], dict[str, Any]]:
    """Built once every game has described itself (each game's messages are
    in them), until then anew on each request."""
    cached = getattr(app.state, "documents", None)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    platform: Platform = app.state.platform
    built = build_openapi(app, platform.games)
    if len(platform.games.described()) == len(platform.games.names):
        app.state.documents = built
    return built


def mount(app: FastAPI) -> None:
    app.openapi = lambda: documents(app)[0]  # type: ignore[method-assign]
    app.mount(ASSETS, StaticFiles(directory=_ASSETS_DIR), name="docs-assets")


@router.get(ASYNCAPI_URL)
async def asyncapi(request: Request) -> dict[str, Any]:
    """The WebSocket feeds: channels, messages (the protos' schemas), close codes."""
    return documents(request.app)[1]


@router.get("/docs")
async def swagger(request: Request) -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url="/openapi.json",
        title="Rodada API",
        swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
        swagger_css_url=f"{ASSETS}/swagger-ui.css",
        swagger_favicon_url=FAVICON_URL,
    )


@router.get("/redoc")
async def redoc(request: Request) -> HTMLResponse:
    return get_redoc_html(
        openapi_url="/openapi.json",
        title="Rodada API",
        redoc_js_url=REDOC_JS,
        redoc_favicon_url=FAVICON_URL,
        with_google_fonts=False,
    )


@functools.cache
def _redoc_offline() -> bytes:
    script = (_ASSETS_DIR / "redoc.standalone.js").read_text(encoding="utf-8")
    if _REDOC_LOGO not in script:
        raise RuntimeError(f"ReDoc's script no longer loads {_REDOC_LOGO}: look for what it loads now")
    return script.replace(_REDOC_LOGO, FAVICON_URL).encode()


@router.get(REDOC_JS)
async def redoc_script() -> Response:
    """ReDoc's script with the logo of its side menu taken from this site."""
    return Response(
        _redoc_offline(), media_type="text/javascript", headers={"cache-control": "public, max-age=86400"}
    )
