"""A request aiohttp cannot parse (a bad header, a broken request line) said in one console line, not a traceback.

aiohttp answers such a request 400 itself and logs the parser's exception on its ``aiohttp.server`` logger;
with no logging configured, Python prints that record's traceback to serve's console, where it reads like a
crash of serve. Other records of that logger (an error inside a route) keep their traceback.
"""
from __future__ import annotations

import logging
from typing import Callable

from aiohttp.http_exceptions import HttpProcessingError

SERVER_LOGGER = "aiohttp.server"


class MalformedRequestLines(logging.Filter):
    """Turns aiohttp's record of a request it refused as malformed into one warning through ``say``."""

    def __init__(self, say: Callable[[str], None]) -> None:
        super().__init__()
        self.say = say

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if not isinstance(error, HttpProcessingError):
            return True
        reason = (error.message or type(error).__name__).strip().splitlines()[0].rstrip(":")
        sender = f" from {record.args[0]}" if isinstance(record.args, tuple) and record.args else ""
        self.say(f"answered {error.code} to a malformed HTTP request{sender}: {reason}")
        return False


def install(say: Callable[[str], None]) -> Callable[[], None]:
    """Adds the filter; returns what removes it."""
    logger = logging.getLogger(SERVER_LOGGER)
    lines = MalformedRequestLines(say)
    logger.addFilter(lines)
    return lambda: logger.removeFilter(lines)
