"""Which addresses a platform judge may reach (metaeval.core.judges.netguard): only globally routable ones, checked
before connecting and on the connected socket."""
from __future__ import annotations

import socket

import pytest

from metaeval.core.judges import netguard
from metaeval.core.judges.netguard import AddressRefused, address_allowed, check_url, guarded_session


@pytest.mark.parametrize("address", [
    "127.0.0.1", "127.8.9.10", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
    "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
    "ff02::1", "not-an-address", "",
])
def test_private_loopback_link_local_and_reserved_addresses_are_refused(address):
    assert not address_allowed(address)


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2001:4860:4860::8888", "::ffff:8.8.8.8"])
def test_public_addresses_are_allowed(address):
    assert address_allowed(address)


def test_a_guarded_session_refuses_before_connecting(stub):
    for url in (stub.url, stub.url.replace("127.0.0.1", "localhost"), "http://0x7f000001:9/", "http://[::1]:9/"):
        with pytest.raises(AddressRefused, match="loopback, private"):
            guarded_session().post(url + "/chat/completions", json={}, timeout=2)
    assert not stub.requests


def test_a_name_that_resolves_to_a_public_address_first_and_a_private_one_later_is_refused(stub, monkeypatch):
    """DNS rebinding: the session does not trust an earlier check; it resolves once per connection, checks every
    address, connects to the checked address only, and checks the connected peer again."""
    answers = iter([[(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", 9))]])
    monkeypatch.setattr(netguard.socket, "getaddrinfo", lambda *a, **k: next(answers))
    with pytest.raises(AddressRefused, match="rebind.example is at 127.0.0.1"):
        guarded_session().get("http://rebind.example:9/", timeout=2)


def test_the_peer_is_checked_after_connecting(stub, monkeypatch):
    """Even when the lookup said public, a socket connected to a private peer is closed and refused."""
    port = int(stub.url.split(":")[2].split("/")[0])
    monkeypatch.setattr(netguard.socket, "getaddrinfo",
                        lambda *a, **k: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))])
    verdicts = iter([True, False])  # the lookup's address passes; the connected peer does not
    calls: list[str] = []

    def allowed(address: str) -> bool:
        calls.append(address)
        return next(verdicts)

    monkeypatch.setattr(netguard, "address_allowed", allowed)
    with pytest.raises(AddressRefused):
        guarded_session().post(stub.url + "/chat/completions", json={}, timeout=2)
    assert calls == ["127.0.0.1", "127.0.0.1"] and not stub.requests


def test_proxies_from_the_environment_are_not_used(monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://10.0.0.1:3128")
    session = guarded_session()
    assert session.trust_env is False
    with pytest.raises(AddressRefused):
        session.get("http://127.0.0.1:9/", timeout=2)


def test_check_url_resolves_now():
    with pytest.raises(AddressRefused, match="localhost is at"):
        check_url("http://localhost:8000/v1")
    check_url("http://judge.invalid/v1")  # does not resolve: the request itself will say so
