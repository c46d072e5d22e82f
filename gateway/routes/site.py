"""The reference web client and the players' rules, served by the gateway
itself so a browser needs nothing from anywhere else.

The web client is built by the Makefile (``make web``) into ``WEB_DIR``; the
gateway serves it at ``/`` when it is there (a gateway without it is an API
alone). The rules are docs/rules/*.md, rendered to HTML at ``/rules/``.
"""

from __future__ import annotations

import functools
import html
import re
from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from markdown_it import MarkdownIt

from services.kit.errors import not_found

router = APIRouter(include_in_schema=False)
ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
# The pages the rules link to: the rules themselves and the fairness page.
PAGES = {"": DOCS / "rules" / "README.md", "fairness": DOCS / "fairness.md"} | {
    path.stem: path for path in sorted((DOCS / "rules").glob("*.md")) if path.stem != "README"
}
_LINK = re.compile(r'href="(?:\.\./)?([a-z-]+|README)\.md"')
_TITLE = re.compile(r"<h1>(.*?)</h1>")
_STYLE = """body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:0 auto;padding:1rem;color:#1d2521}
table{border-collapse:collapse;display:block;overflow-x:auto}td,th{border:1px solid #bbb;padding:.25rem .5rem}
a{color:#0b6e4f}code{background:#eef3f0;padding:0 .2rem}nav{margin-bottom:1rem}"""


@functools.cache
def render(name: str) -> str:
    """A page of the rules as HTML, its links to other pages made links to
    their rendered form here."""
    source = PAGES[name].read_text(encoding="utf-8")
    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(source)
    body = _LINK.sub(lambda m: 'href="./"' if m[1] == "README" else f'href="{m[1]}"', body)
    title = _TITLE.search(body)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{title[1] if title else 'Rules'} · Rodada</title><style>{_STYLE}</style></head>"
        f'<body><nav><a href="/">← Play</a> · <a href="./">All games</a></nav>{body}</body></html>'
    )


@router.get("/rules/", response_class=HTMLResponse)
async def rules_index() -> str:
    return rules_page_html("")


@router.get("/rules/{name}", response_class=HTMLResponse)
async def rules_page(name: str) -> str:
    """One game's rules (``/rules/dudo``), or the fairness page."""
    return rules_page_html(name)


def rules_page_html(name: str) -> str:
    # (An image built without docs/ has no pages: every one is then a 404.)
    if name not in PAGES or not PAGES[name].is_file():
        raise not_found("no_such_page", f"no rules page {html.escape(name)!r}; see /rules/")
    return render(name)


def mount(app: FastAPI, web_dir: str) -> None:
    """The built web client at ``/``, after every route (so the API wins)."""
    directory = Path(web_dir) if Path(web_dir).is_absolute() else ROOT / web_dir
    if (directory / "index.html").is_file():
        app.mount("/", StaticFiles(directory=directory, html=True), name="web")
