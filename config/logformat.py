"""Log records as one JSON object per line (``LOG_FORMAT=json``, the default): time, level, logger, message and
every field passed as ``extra`` (``event``, ``run``, ``study``, counts ...), so a log collector can filter by them.
``LOG_FORMAT=text`` keeps Django's plain lines."""
from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class JsonLinesFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        data.update({key: value for key, value in vars(record).items() if key not in _STANDARD})
        if record.exc_info:
            data["exception"] = self.formatException(record.exc_info)
        return json.dumps(data, default=str)
