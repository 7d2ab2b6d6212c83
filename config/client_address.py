"""The client's address, the one rule behind every per-address limit: django-axes' login lockouts
(``AXES_CLIENT_IP_CALLABLE``) and the API's rate limits (``api.throttling``).

``X-Forwarded-For`` is believed only as far as ``TRUSTED_PROXY_COUNT`` says proxies are in front of the server: with
none (the default) the address is the connection's own (``REMOTE_ADDR``) and the header, which any client can send,
is ignored; behind N proxies each appends the address it received the request from, so the client is the Nth entry
from the right (entries further left were written by the client and prove nothing).
"""
from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str:
    """The address per-address limits count ``request`` under (see the module docstring); ``""`` when unknown."""
    remote = request.META.get("REMOTE_ADDR", "") or ""
    proxies = getattr(settings, "TRUSTED_PROXY_COUNT", 0)
    if proxies <= 0:
        return remote
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    if not hops:
        return remote
    return hops[-min(proxies, len(hops))]
