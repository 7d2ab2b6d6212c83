"""Requests refused before any view sees them."""
from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote_to_bytes

from django.http import HttpRequest, HttpResponse

from config import errors

NUL_IN_ADDRESS = "The address holds a NUL character (%00), which no page or API endpoint takes."


class NulCharacterMiddleware:
    """A NUL character in the path or the query string is a 400 (JSON under /api/): no address of this site has
    one, and PostgreSQL refuses it in any text it is compared with (a 500 before)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        query = request.META.get("QUERY_STRING", "")
        if "\x00" in request.path or "\x00" in query or ("%00" in query and b"\x00" in unquote_to_bytes(query)):
            return errors.refused(request, NUL_IN_ADDRESS)
        return self.get_response(request)
