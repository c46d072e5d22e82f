"""Structured JSON logs, one object per line, with the request's context.

Context (request id, user id, game, match id) lives in context variables set
where it is known — the gateway's middleware, the services' call guard, the
match servicer — and every record logged inside that call carries it, and
with tracing on the current span's ``trace_id`` and ``span_id``. Tokens,
passwords, seeds and hidden dice or tiles are never logged: nothing here logs
request bodies or game state, only ids.
"""

from __future__ import annotations

import logging
import sys
from contextvars import ContextVar
from typing import Any

import orjson

from services.core import tracing

REQUEST_ID: ContextVar[str | None] = ContextVar("request_id", default=None)
USER_ID: ContextVar[str | None] = ContextVar("user_id", default=None)
GAME: ContextVar[str | None] = ContextVar("game", default=None)
MATCH_ID: ContextVar[str | None] = ContextVar("match_id", default=None)
_CONTEXT = {"request_id": REQUEST_ID, "user_id": USER_ID, "game": GAME, "match_id": MATCH_ID}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, var in _CONTEXT.items():
            value = var.get()
            if value is not None:
                entry[key] = value
        ids = tracing.log_ids()
        if ids is not None:
            entry["trace_id"], entry["span_id"] = ids
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return orjson.dumps(entry).decode()


def configure(service: str) -> None:
    """JSON lines on stderr for the whole process, uvicorn's loggers included."""
    # A record's caller (a walk up the stack), thread, process and task are
    # not in our lines: not worked out for each of them either (the
    # logging module's documented switches; the gateway logs every request).
    logging._srcfile = None
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    logging.logAsyncioTasks = False  # type: ignore[attr-defined]  # Python 3.12's
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
    logging.getLogger("rodada").info("%s starting", service)
