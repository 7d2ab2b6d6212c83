"""Which network addresses a judge may reach (conventions sec. 21, item 8).

A judge run on the platform sends its requests from a worker inside the operator's network, so a judge endpoint
whose host is (or resolves to) a loopback, private, link-local, shared (CGNAT), multicast, reserved or
unspecified address could reach the operator's own services. :func:`guarded_session` gives a
``requests.Session`` that checks the address each connection *actually* reaches (the socket's peer, after DNS and
connect, so a name that resolves differently between a check and the connection changes nothing) and refuses any
address that is not globally routable with :class:`AddressRefused`. The command line's judge (on the user's own
machine) does not use it; the platform's judge endpoints use it unless the operator allows private addresses for
that endpoint (a model served on localhost or the local network).
"""
from __future__ import annotations

import ipaddress
import socket
import urllib.parse
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
from urllib3.util.connection import create_connection

__all__ = ["AddressRefused", "address_allowed", "check_url", "guarded_session"]


class AddressRefused(Exception):
    """A connection would reach an address the judge endpoint may not use; never retried. Not an ``OSError``, so
    neither urllib3 nor requests wraps or retries it: it reaches the caller as it is."""


def address_allowed(address: str) -> bool:
    """True for a globally routable IP address (``ipaddress``'s ``is_global``, an IPv4-mapped IPv6 address judged
    as its IPv4 address); False for loopback, private, link-local, shared, multicast, reserved and unspecified
    ones, and for anything that is not an IP address."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return bool(ip.is_global) and not ip.is_multicast


def check_url(url: str) -> None:
    """Resolve ``url``'s host now and raise :class:`AddressRefused` when one of its addresses is not allowed (a
    check before a run starts; the session checks every connection again). A host that does not resolve passes:
    the request itself will say so."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    try:
        infos = socket.getaddrinfo(host, parts.port or (443 if parts.scheme == "https" else 80),
                                   type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, ValueError):
        return
    for info in infos:
        if not address_allowed(str(info[4][0])):
            raise _refusal(host, str(info[4][0]))


def _refusal(host: str, address: str) -> AddressRefused:
    return AddressRefused(
        f"{host} is at {address}, a loopback, private, link-local or reserved address, which this judge endpoint "
        "may not reach (the operator allows it per endpoint: 'Allow private network addresses')")


def _connect(conn: HTTPConnection) -> socket.socket:
    """Resolve the host, refuse it before any connection is tried when one of its addresses is not allowed, then
    connect to the checked addresses themselves (no second lookup) and check the connected peer once more."""
    host = conn.host
    try:
        infos = socket.getaddrinfo(host, conn.port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise NameResolutionError(host, conn, exc) from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    for address in addresses:
        if not address_allowed(address):
            raise _refusal(host, address)
    last: OSError | None = None
    for address in addresses:
        try:
            sock = create_connection((address, conn.port), conn.timeout, source_address=conn.source_address,
                                     socket_options=conn.socket_options)
        except TimeoutError as exc:
            raise ConnectTimeoutError(conn, f"Connection to {host} timed out (connect timeout={conn.timeout})") from exc
        except OSError as exc:
            last = exc
            continue
        peer = str(sock.getpeername()[0])
        if not address_allowed(peer):
            sock.close()
            raise _refusal(host, peer)
        return sock
    raise NewConnectionError(conn, f"Failed to establish a new connection: {last}")


class _GuardedHTTPConnection(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        return _connect(self)


class _GuardedHTTPSConnection(HTTPSConnection):
    def _new_conn(self) -> socket.socket:
        return _connect(self)


class _GuardedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _GuardedHTTPConnection


class _GuardedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _GuardedHTTPSConnection


class _GuardedAdapter(HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _GuardedHTTPPool, "https": _GuardedHTTPSPool}

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        raise AddressRefused("a judge endpoint restricted to public addresses is never reached through a proxy")


def guarded_session() -> requests.Session:
    """A session whose every connection must reach a globally routable address (:func:`address_allowed`); proxy
    settings from the environment are ignored, so the checked peer is the endpoint itself."""
    session = requests.Session()
    session.trust_env = False
    adapter = _GuardedAdapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
