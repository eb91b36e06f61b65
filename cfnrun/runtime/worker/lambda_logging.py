"""The root logger as Lambda's Python runtime sets it up, so a handler's log lines read as in CloudWatch."""
from __future__ import annotations

import logging
import time
from typing import TextIO


class RequestIdFilter(logging.Filter):
    """Tags each record with the request id of the call being served ("" between calls)."""

    request_id = ""

    def filter(self, record: logging.LogRecord) -> bool:
        record.aws_request_id = self.request_id
        return True


def configure_logging(level: str, stream: TextIO) -> RequestIdFilter:
    """The root logger as Lambda's runtime sets it up: one handler, each record tagged with the request id."""
    request_ids = RequestIdFilter()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        logging.Formatter(
            "[%(levelname)s]\t%(asctime)s.%(msecs)03dZ\t%(aws_request_id)s\t%(message)s",
            "%Y-%m-%dT%H:%M:%S",
        )
    )
    handler.formatter.converter = time.gmtime  # type: ignore[union-attr]
    handler.addFilter(request_ids)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    return request_ids
