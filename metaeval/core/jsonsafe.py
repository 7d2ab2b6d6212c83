"""JSON input every reader can trust: nested at most :data:`MAX_JSON_DEPTH` levels (Python's decoder recurses, and
a deeper document raises ``RecursionError``, or later breaks whatever walks it), without NUL characters (PostgreSQL
stores none in text or JSON, SQLite would keep them: both databases refuse them alike this way) and without numbers
too long for Python to convert (a bare ``ValueError`` otherwise).

One rule for the HTTP API's JSON parser (``api.parsers``), the JSON files the importers read
(:func:`metaeval.core.io.fileio.iter_json_values`) and the admin's JSON fields (``survey.json_fields``). No Django here.
"""
from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["MAX_JSON_DEPTH", "TOO_DEEP", "JSONInputError", "check_value", "loads", "problem"]

#: the deepest nesting accepted (arrays and objects); this project's documents and files nest 5 levels at most
MAX_JSON_DEPTH = 32

NUL = "\x00"
#: the message for a document nested too deeply
TOO_DEEP = f"nested deeper than {MAX_JSON_DEPTH} levels"


def too_long_number() -> str:
    """The message for a number longer than Python converts (``sys.get_int_max_str_digits``; a ``ValueError``
    that is not a ``JSONDecodeError``)."""
    return f"a number of more than {sys.get_int_max_str_digits()} digits"


class JSONInputError(ValueError):
    """JSON that parses but is refused: too deeply nested, or a NUL character in a string or a key."""


def _suspect(text: str) -> bool:
    """Whether a JSON text may hold what :func:`check_value` refuses: a NUL character (raw or escaped) or more
    brackets than :data:`MAX_JSON_DEPTH` (cheap; only then is the decoded value walked)."""
    return NUL in text or "\\u0000" in text or text.count("[") + text.count("{") > MAX_JSON_DEPTH


def check_value(value: Any) -> str | None:
    """The first problem of a decoded JSON value (``None`` when there is none), naming where it is:
    ``NUL character in "a.b[2]"``, ``nested deeper than 32 levels at "a.b"``."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            if NUL in item:
                return f'NUL character in "{path}"' if path else "NUL character"
            continue
        if not isinstance(item, (dict, list)):
            continue
        if depth >= MAX_JSON_DEPTH:
            return TOO_DEEP + (f' at "{_short(path)}"' if path else "")
        if isinstance(item, dict):
            for key, child in reversed(item.items()):
                where = f"{path}.{key}" if path else str(key)
                if NUL in key:
                    return f'NUL character in a key of "{path}"' if path else "NUL character in a key"
                stack.append((child, where, depth + 1))
        else:
            for index in range(len(item) - 1, -1, -1):
                stack.append((item[index], f"{path}[{index}]", depth + 1))
    return None


def _short(path: str, width: int = 40) -> str:
    return path if len(path) <= width else path[:width] + "..."


def problem(value: Any, text: str) -> str | None:
    """:func:`check_value` of ``value``, decoded from ``text``, when ``text`` may hold a problem (cheap otherwise)."""
    return check_value(value) if _suspect(text) else None


def loads(text: str, **kwargs: Any) -> Any:
    """``json.loads(text, **kwargs)``, refusing what :func:`check_value` refuses (:class:`JSONInputError`);
    ``json.JSONDecodeError`` for a syntax error as usual."""
    try:
        value = json.loads(text, **kwargs)
    except RecursionError:
        raise JSONInputError(TOO_DEEP) from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # an integer too long to convert
        raise JSONInputError(too_long_number()) from None
    refused = problem(value, text)
    if refused is not None:
        raise JSONInputError(refused)
    return value
