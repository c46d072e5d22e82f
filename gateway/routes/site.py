"""The reference web client, the players' rules and the site's icon, served
by the gateway itself so a browser needs nothing from anywhere else.

The web client is built by the Makefile (``make web``) into ``WEB_DIR``; the
gateway serves it at ``/`` when it is there (a gateway without it is an API
alone). The rules are Markdown pages rendered to HTML, in English and in
Brazilian Portuguese: each game's from the game itself (its folder's
``rules/<lang>.md``, sent by its ``Describe``), the index and the fairness
page from docs/ (docs/rules/README.md, docs/fairness.md and their pt-BR/
versions). ``/rules/en/<page>`` and ``/rules/pt-BR/<page>`` name the
language, ``/rules/<page>`` answers in the reader's (the web client's
choice, kept in the ``rodada.lang`` cookie, else Accept-Language). A game's
page is its name with ``-`` for ``_`` (``bozu-mekuri``).
"""

from __future__ import annotations

import functools
import html
import re
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from markdown_it import MarkdownIt

from services.core.errors import not_found

router = APIRouter(include_in_schema=False)
ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
RULES = DOCS / "rules"
EN, PT = "en", "pt-BR"
LANGS = (EN, PT)
LANG_COOKIE = "rodada.lang"


# The platform's own pages, by language: the index and the fairness page.
PAGES = {
    EN: {"": RULES / "README.md", "fairness": DOCS / "fairness.md"},
    PT: {"": RULES / PT / "README.md", "fairness": RULES / PT / "fairness.md"},
}
# What the page's own words are in each language.
WORDS = {
    EN: {
        "play": "← Play",
        "all": "All games",
        "other": "Em português",
        "title": "Rules",
        "games": "Every game",
    },
    PT: {
        "play": "← Jogar",
        "all": "Todos os jogos",
        "other": "In English",
        "title": "Regras",
        "games": "Todos os jogos",
    },
}
_LINK = re.compile(r'href="(?:\.\./)?([a-z-]+|README)\.md"')
_TITLE = re.compile(r"<h1>(.*?)</h1>")
_STYLE = """body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:0 auto;padding:1rem;color:#1d2521}
table{border-collapse:collapse;display:block;overflow-x:auto}td,th{border:1px solid #bbb;padding:.25rem .5rem}
a{color:#0b6e4f}code{background:#eef3f0;padding:0 .2rem;overflow-wrap:anywhere}pre{overflow-x:auto}
nav{margin-bottom:1rem;display:flex;flex-wrap:wrap;gap:.25rem 1rem}"""

# The site's icon: a die showing five, on the table's green.
FAVICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">'
    '<rect width="64" height="64" rx="14" fill="#0b6e4f"/>'
    '<rect x="12" y="12" width="40" height="40" rx="8" fill="#fffdf8"/>'
    '<g fill="#1d2521"><circle cx="22" cy="22" r="4.5"/><circle cx="42" cy="22" r="4.5"/>'
    '<circle cx="32" cy="32" r="4.5"/><circle cx="22" cy="42" r="4.5"/><circle cx="42" cy="42" r="4.5"/></g>'
    "</svg>"
)
FAVICON_URL = "/favicon.svg"


def page_name(game: str) -> str:
    """A game's page: its name, ``-`` for ``_``."""
    return game.replace("_", "-")


def game_pages(request: Request, lang: str) -> dict[str, tuple[str, str]]:
    """Each described game's page in ``lang``: page name → (title, Markdown)."""
    platform = getattr(request.app.state, "platform", None)
    if platform is None:
        return {}
    pages = {}
    for game in platform.games.described():
        for page in game.info.rules:
            if page.lang == lang:
                pages[page_name(game.name)] = (game.info.title, page.markdown)
    return pages


def source(request: Request, lang: str, name: str) -> str | None:
    """A page's Markdown: a game's, or the platform's (the index ends with
    a link to every game's page)."""
    games = game_pages(request, lang)
    if name in games:
        return games[name][1]
    path = PAGES[lang].get(name)
    if path is None or not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    if name == "":
        links = " · ".join(f"[{title}]({page}.md)" for page, (title, _) in sorted(games.items()))
        text += f"\n\n## {WORDS[lang]['games']}\n\n{links}\n" if links else ""
    return text


@functools.lru_cache(maxsize=256)
def render(lang: str, name: str, text: str) -> str:
    """A page of the rules as HTML in ``lang``, its links to other pages made
    links to their rendered form here (in the same language)."""
    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    body = _LINK.sub(lambda m: 'href="./"' if m[1] == "README" else f'href="{m[1]}"', body)
    title = _TITLE.search(body)
    words = WORDS[lang]
    other = PT if lang == EN else EN
    return (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f'<link rel="icon" href="{FAVICON_URL}" type="image/svg+xml">'
        f'<link rel="alternate" hreflang="{other}" href="/rules/{other}/{name}">'
        f"<title>{title[1] if title else words['title']} · Rodada</title><style>{_STYLE}</style></head>"
        f'<body><nav><a href="/">{words["play"]}</a><a href="/rules/{lang}/">{words["all"]}</a>'
        f'<a href="/rules/{other}/{name}" hreflang="{other}" lang="{other}">{words["other"]}</a></nav>'
        f"<main>{body}</main></body></html>"
    )


def reader_lang(request: Request) -> str:
    """The language the reader chose on the site, else the first of their
    browser's languages that the rules are written in."""
    chosen = request.cookies.get(LANG_COOKIE)
    if chosen in LANGS:
        return chosen
    for part in request.headers.get("accept-language", "").split(","):
        tag = part.split(";")[0].strip().lower()
        if tag.startswith("pt"):
            return PT
        if tag.startswith("en"):
            return EN
    return EN


def rules_response(request: Request, lang: str, name: str, negotiated: bool = False) -> HTMLResponse:
    # (An image built without docs/ has no platform pages: each is then a 404.)
    text = source(request, lang, name)
    if text is None:
        raise not_found("no_such_page", f"no rules page {html.escape(name)!r}; see /rules/")
    headers = {"content-language": lang}
    if negotiated:
        headers["vary"] = "accept-language, cookie"
    return HTMLResponse(render(lang, name, text), headers=headers)


@router.get("/rules/", response_class=HTMLResponse)
async def rules_index(request: Request) -> HTMLResponse:
    return rules_response(request, reader_lang(request), "", negotiated=True)


@router.get("/rules/{lang}/", response_class=HTMLResponse)
async def rules_index_in(lang: str, request: Request) -> HTMLResponse:
    if lang not in LANGS:
        raise not_found("no_such_page", f"no rules in {html.escape(lang)!r}: {', '.join(LANGS)}")
    return rules_response(request, lang, "")


@router.get("/rules/{lang}/{name}", response_class=HTMLResponse)
async def rules_page_in(lang: str, name: str, request: Request) -> HTMLResponse:
    """One game's rules (``/rules/pt-BR/dudo``), or the fairness page, in a language."""
    if lang not in LANGS:
        raise not_found("no_such_page", f"no rules in {html.escape(lang)!r}: {', '.join(LANGS)}")
    return rules_response(request, lang, name)


@router.get("/rules/{name}", response_class=HTMLResponse, response_model=None)
async def rules_page(name: str, request: Request) -> Response:
    """One game's rules (``/rules/dudo``) in the reader's language."""
    if name in LANGS:
        return RedirectResponse(f"/rules/{name}/", status_code=308)
    return rules_response(request, reader_lang(request), name, negotiated=True)


@router.get("/favicon.svg")
@router.get("/favicon.ico")
async def favicon() -> Response:
    """The site's icon (as SVG at both addresses: browsers ask for /favicon.ico)."""
    return Response(FAVICON, media_type="image/svg+xml", headers={"cache-control": "public, max-age=86400"})


def mount(app: FastAPI, web_dir: str) -> None:
    """The built web client at ``/``, after every route (so the API wins)."""
    directory = Path(web_dir) if Path(web_dir).is_absolute() else ROOT / web_dir
    if (directory / "index.html").is_file():
        app.mount("/", StaticFiles(directory=directory, html=True), name="web")
