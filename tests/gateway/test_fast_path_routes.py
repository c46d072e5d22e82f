"""FastPath (gateway/app.py) walks, for a path, only the routes that could
match it: whatever the request, the route it picks is the one the app's own
router would pick, and the routers included for the probes, the documents
and the site are left out of the operations' walks."""

from __future__ import annotations

import re

import pytest
from starlette.routing import Match, Mount, Route

from gateway.api import http as http_face
from gateway.app import FastPath, _may_share, _prefix, create_app
from gateway.settings import GatewaySettings

APP = create_app(GatewaySettings())
FAST = FastPath(APP, GatewaySettings())
OPERATIONS = [r for r in APP.routes if isinstance(r, Route) and isinstance(r.app, http_face.Operation)]


def sample(template: str) -> str:
    return re.sub(r"\{[^}]*\}", "x1", template)


def picked(routes: list, path: str, method: str) -> object:
    scope = {"type": "http", "path": path, "method": method, "root_path": "", "headers": []}
    for route in routes:
        match, _ = route.matches(scope)
        if match is Match.FULL:
            return route
    return None


@pytest.mark.parametrize("route", OPERATIONS, ids=lambda r: f"{sorted(r.methods)[0]} {r.path}")
def test_the_fast_walk_picks_what_the_app_picks(route: Route) -> None:
    path = sample(route.path)
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
        assert picked(FAST._routes[_prefix(path)], path, method) is picked(APP.routes, path, method)


def test_included_routers_are_out_of_the_operations_walks() -> None:
    """Plain routes stay, and mounts (the site's at the root, once the web
    client is built, may serve any path); no included router does."""
    for prefix, routes in FAST._routes.items():
        assert all(isinstance(r, Route | Mount) for r in routes), prefix
    assert len(FAST._routes["/v1/tables"]) < len(APP.routes) / 2


@pytest.mark.parametrize(
    ("template", "prefix", "may"),
    [
        ("/v1/tables/{table_id}/actions", "/v1/tables", True),
        ("/v1/tables", "/v1/tables", True),
        ("/v1/games", "/v1/tables", False),
        ("/livez", "/v1/tables", False),
        ("/rules/{lang}/{name}", "/v1/tables", False),
        ("/{anything:path}", "/v1/tables", True),
        ("/v1/{kind}/x", "/v1/tables", True),
        ("/v{n}/tables", "/v1/tables", True),
        ("/docs-assets/{path:path}", "/v1/tables", False),
    ],
)
def test_may_share(template: str, prefix: str, may: bool) -> None:
    assert _may_share(template, prefix) is may
