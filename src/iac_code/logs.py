"""Logging set-up. Logs go to stderr (and optionally a file), never stdout: in stdio mode stdout is the protocol."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

_FRAME_LOG_CHARS = 2_000


def configure_logging(*, debug: bool = False, log_file: str | None = None) -> None:
    level = logging.DEBUG if debug else logging.INFO
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        handlers.append(logging.FileHandler(log_file, encoding="utf-8"))
    logging.basicConfig(
        level=level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )
    # The HTTP client libraries are chatty at INFO and would log every model request.
    for noisy in ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "anthropic"):
        logging.getLogger(noisy).setLevel(logging.DEBUG if debug else logging.WARNING)


def log_frame(logger: logging.Logger, outgoing: bool, message: dict[str, Any]) -> None:
    """One JSON-RPC message at debug level (--debug, to diagnose an editor integration), cut if long."""
    text = json.dumps(message, ensure_ascii=False)
    if len(text) > _FRAME_LOG_CHARS:
        text = f"{text[:_FRAME_LOG_CHARS]}… ({len(text):,} chars)"
    logger.debug("%s %s", "→" if outgoing else "←", text)
