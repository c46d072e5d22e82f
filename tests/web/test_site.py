"""What the gateway serves a browser besides the API: the built site at /,
the players' rules rendered at /rules/ in English and Brazilian Portuguese,
the site's icon, and the API's documents — nothing linking or loading from
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


# Each game's page comes from the game (its folder's rules/); Nim's too.
PAGES = ["", "bozo", "bozu-mekuri", "domino", "dudo", "yatzy", "nim", "fairness"]


@pytest.mark.parametrize("lang", ["en", "pt-BR"])
@pytest.mark.parametrize("page", PAGES)
def test_the_rules_are_served_as_html_in_both_languages(gateway: str, page: str, lang: str) -> None:
    reply = httpx.get(f"{gateway}/rules/{lang}/{page}", timeout=10)
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/html")
    assert f'<html lang="{lang}">' in reply.text and reply.headers["content-language"] == lang
    assert "<h1>" in reply.text and not EXTERNAL.search(reply.text)
    # Links between pages point at their rendered form here, never at a .md file,
    # and the page links to itself in the other language.
    other = "en" if lang == "pt-BR" else "pt-BR"
    assert f'href="/rules/{other}/{page}"' in reply.text
    for link in re.findall(r'href="([^"]+)"', reply.text):
        assert not link.endswith(".md"), link
        target = httpx.get(httpx.URL(f"{gateway}/rules/{lang}/{page}").join(link), timeout=10)
        assert target.status_code == 200, link


def test_the_portuguese_rules_are_in_portuguese(gateway: str) -> None:
    """Every page of the Portuguese rules is a page of its own (not the
    English one), with the Brazilian tables' words."""
    for page in PAGES:
        english = httpx.get(f"{gateway}/rules/en/{page}", timeout=10).text
        portuguese = httpx.get(f"{gateway}/rules/pt-BR/{page}", timeout=10).text
        assert english.split("<main>")[1] != portuguese.split("<main>")[1], page
        assert "Todos os jogos" in portuguese, page
    assert "cantar embaixo" in httpx.get(f"{gateway}/rules/pt-BR/bozo", timeout=10).text
    assert "batida" in httpx.get(f"{gateway}/rules/pt-BR/domino", timeout=10).text
    assert "«Dudo!»" in httpx.get(f"{gateway}/rules/pt-BR/dudo", timeout=10).text


def test_the_rules_answer_in_the_readers_language(gateway: str) -> None:
    """/rules/<page> answers in the language the reader chose on the site
    (the web client's cookie), else the browser's first language we have."""
    h1 = re.compile(r"<h1>(.*?)</h1>")
    brazilian = {"accept-language": "pt-BR,pt;q=0.9,en;q=0.5"}
    portuguese = httpx.get(f"{gateway}/rules/", headers=brazilian, timeout=10)
    assert h1.search(portuguese.text)[1] == "Regras dos jogos"  # type: ignore[index]
    assert "accept-language" in portuguese.headers["vary"]
    english = httpx.get(f"{gateway}/rules/dudo", headers={"accept-language": "de-DE,en;q=0.5"}, timeout=10)
    assert english.headers["content-language"] == "en"
    chosen = httpx.get(
        f"{gateway}/rules/dudo",
        headers={"accept-language": "pt-BR", "cookie": "rodada.lang=en"},
        timeout=10,
    )
    assert chosen.headers["content-language"] == "en"
    moved = httpx.get(f"{gateway}/rules/pt-BR", timeout=10)
    assert moved.status_code == 308 and moved.headers["location"] == "/rules/pt-BR/"
    assert httpx.get(f"{gateway}/rules/fr/dudo", timeout=10).status_code == 404


def test_the_icon_and_the_api_documents_work_offline(gateway: str) -> None:
    for path in ("/favicon.ico", "/favicon.svg"):
        icon = httpx.get(f"{gateway}{path}", timeout=10)
        assert icon.status_code == 200 and icon.headers["content-type"] == "image/svg+xml"
        assert icon.text.startswith("<svg")
    for path in ("/docs", "/redoc"):
        page = httpx.get(f"{gateway}{path}", timeout=10)
        assert page.status_code == 200 and not EXTERNAL.search(page.text), path
        for asset in re.findall(r'(?:src|href)="(/[^"]+)"', page.text):
            fetched = httpx.get(f"{gateway}{asset}", timeout=30)
            assert fetched.status_code == 200, asset
            # No script the page loads fetches anything from elsewhere (ReDoc's drew its logo from a CDN).
            assert "cdn.redoc.ly" not in fetched.text, asset


def test_an_unknown_rules_page_is_a_clear_404(gateway: str) -> None:
    reply = httpx.get(f"{gateway}/rules/chess", timeout=10)
    assert reply.status_code == 404 and reply.json()["error"]["code"] == "no_such_page"


def test_the_sites_rules_links_resolve(gateway: str) -> None:
    """Every game the gateway lists has its rules page, from the game's own
    folder, in both languages, where the web client links it (the game's
    name, "-" for "_"; no page names in the client)."""
    script = (DIST / "app.js").read_text(encoding="utf-8")
    assert 'replace(/_/g,"-")' in script
    games = httpx.get(f"{gateway}/v1/games", timeout=10).json()["games"]
    assert {"bozo", "bozu_mekuri", "domino", "dudo", "yatzy", "nim"} <= {g["name"] for g in games}
    for game in games:
        page = game["name"].replace("_", "-")
        assert {r["lang"] for r in game["rules"]} == {"en", "pt-BR"}, page
        for lang in ("en", "pt-BR"):
            assert httpx.get(f"{gateway}/rules/{lang}/{page}", timeout=10).status_code == 200, (lang, page)
