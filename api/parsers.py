"""The API's JSON parser: DRF's, with :mod:`metaeval.core.jsonsafe`'s limits, so that a request nested too deeply
(which made Python's decoder raise ``RecursionError``: a 500) or holding a NUL character anywhere (which PostgreSQL
refuses to store) is a 400 naming the problem."""
from __future__ import annotations

import codecs
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser
from rest_framework.utils.json import strict_constant

from metaeval.core import jsonsafe


class SafeJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None,
              parser_context: Mapping[str, Any] | None = None) -> Any:
        encoding = (parser_context or {}).get("encoding") or settings.DEFAULT_CHARSET
        try:
            text = codecs.getreader(encoding)(stream).read()
            return jsonsafe.loads(text, parse_constant=strict_constant if self.strict else None)
        except jsonsafe.JSONInputError as exc:
            raise ParseError(f"JSON refused: {exc}.") from None
        except LookupError:  # an unknown charset in the Content-Type
            raise ParseError(f'JSON parse error - unknown charset "{encoding}"') from None
        except ValueError as exc:  # not JSON, or not text in that encoding
            raise ParseError(f"JSON parse error - {exc}") from None
