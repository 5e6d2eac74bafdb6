"""structlog, JSON, one line per request. Keys are never logged; prompts only when a tenant opts in."""

from __future__ import annotations

import logging
import sys

import orjson
import structlog


def configure(level: str = "info") -> None:
    logging.basicConfig(format="%(message)s", stream=sys.stderr, level=level.upper())
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(serializer=orjson.dumps),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.BytesLoggerFactory(sys.stdout.buffer),
        cache_logger_on_first_use=True,
    )
    # watchfiles reports every change in the watched directory at INFO; we log the reloads ourselves.
    logging.getLogger("watchfiles").setLevel(logging.WARNING)


log = structlog.get_logger("switchyard")
