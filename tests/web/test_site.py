"""What the gateway serves a browser besides the API: the built site at /
and the players' rules rendered at /rules/, nothing linking or loading from
elsewhere."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.web import DIST
from tools.stack import Stack

EXTERNAL = re.compile(r"""(?:src|href)=["'](?:https?:)?//""", re.IGNORECASE)


@pytest.fixture(scope="module")
def gateway(stack: Stack) -> str:
    return stack.gateway()


def test_the_site_is_served_at_the_root(gateway: str) -> None:
    if not (DIST / "index.html").exists():
        pytest.fail(f"{DIST} has no site: run `make web`")
    page = httpx.get(f"{gateway}/", timeout=10)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/app.js">' in page.text
    assert not EXTERNAL.search(page.text)
    script = httpx.get(f"{gateway}/app.js", timeout=10)
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    # The API still answers under the site, and its errors keep their envelope.
    assert httpx.get(f"{gateway}/v1/games", timeout=10).status_code == 200
    missing = httpx.get(f"{gateway}/v1/no-such-route", timeout=10)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("page", ["", "bozo", "bozu-mekuri", "domino", "dudo", "yatzy", "fairness"])
def test_the_rules_are_served_as_html(gateway: str, page: str) -> None:
    reply = httpx.get(f"{gateway}/rules/{page}", timeout=10)
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/html")
    assert "<h1>" in reply.text and not EXTERNAL.search(reply.text)
    # Links between pages point at their rendered form here, never at a .md file.
    for link in re.findall(r'href="([^"]+)"', reply.text):
        assert not link.endswith(".md"), link
        target = httpx.get(httpx.URL(f"{gateway}/rules/{page}").join(link), timeout=10)
        assert target.status_code == 200, link


def test_an_unknown_rules_page_is_a_clear_404(gateway: str) -> None:
    reply = httpx.get(f"{gateway}/rules/chess", timeout=10)
    assert reply.status_code == 404 and reply.json()["error"]["code"] == "no_such_page"


def test_the_sites_rules_links_resolve(gateway: str) -> None:
    """Every rules page the web client links to is served."""
    script = (DIST / "app.js").read_text(encoding="utf-8")
    links = set(re.findall(r'"(/rules/[a-z-]*)"', script))
    assert {
        "/rules/",
        "/rules/yatzy",
        "/rules/dudo",
        "/rules/bozo",
        "/rules/domino",
        "/rules/bozu-mekuri",
    } <= links
    for link in links:
        assert httpx.get(f"{gateway}{link}", timeout=10).status_code == 200, link
