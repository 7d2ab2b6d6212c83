"""The API's rate limits, per client address as :func:`config.client_address.client_address` defines it (the
rule django-axes' lockouts use too)."""
from __future__ import annotations

from rest_framework.request import Request
from rest_framework.throttling import ScopedRateThrottle

from config.client_address import client_address


class ScopedAddressThrottle(ScopedRateThrottle):
    """DRF's scoped rate (``throttle_scope`` -> ``DEFAULT_THROTTLE_RATES``) counted per client address."""

    def get_ident(self, request: Request) -> str:
        return client_address(request)
