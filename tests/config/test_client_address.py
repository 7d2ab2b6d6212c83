"""One client address for every per-address limit (config/client_address.py): X-Forwarded-For is ignored unless
TRUSTED_PROXY_COUNT says proxies are in front, and then its Nth entry from the right is the client; the API token
view's rate and django-axes' login lockout both count under it."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client, RequestFactory
from rest_framework.test import APIClient

from config.client_address import client_address
from survey.research_views import RESEARCHER_GROUP

pytestmark = pytest.mark.django_db
PASSWORD = "the-right-password-2"


def _address(settings, proxies: int, forwarded: str | None, remote: str = "10.0.0.9") -> str:
    settings.TRUSTED_PROXY_COUNT = proxies
    extra = {"REMOTE_ADDR": remote} | ({"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {})
    return client_address(RequestFactory().get("/", **extra))


def test_the_rule(settings):
    assert _address(settings, 0, "1.1.1.1") == "10.0.0.9"  # no proxy: the header is the client's own word
    assert _address(settings, 1, "1.1.1.1") == "1.1.1.1"
    assert _address(settings, 1, "6.6.6.6, 1.1.1.1") == "1.1.1.1"  # the client wrote 6.6.6.6; the proxy 1.1.1.1
    assert _address(settings, 2, "6.6.6.6,1.1.1.1 , 172.16.0.2") == "1.1.1.1"
    assert _address(settings, 3, "1.1.1.1, 172.16.0.2") == "1.1.1.1"  # fewer entries than proxies: the leftmost
    assert _address(settings, 1, None) == "10.0.0.9" and _address(settings, 1, " , ") == "10.0.0.9"


def _token_codes(clients: list[tuple[str, str | None]]) -> list[int]:
    """POST /api/token/ with unknown usernames, one request per (REMOTE_ADDR, X-Forwarded-For)."""
    codes = []
    for number, (remote, forwarded) in enumerate(clients):
        extra = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {}
        client = APIClient(REMOTE_ADDR=remote)
        codes.append(client.post("/api/token/", {"username": f"sprayed{number}", "password": "x"}, format="json",
                                 **extra).status_code)
    return codes


def test_a_new_forwarded_address_each_time_does_not_escape_the_token_rate_without_a_proxy(settings):
    """Password spraying with a different X-Forwarded-For each time, no proxy configured: one address, 429 after
    the rate (10 a minute)."""
    settings.TRUSTED_PROXY_COUNT = 0
    codes = _token_codes([("10.5.5.5", f"203.0.113.{i}") for i in range(12)])
    assert codes[:10] == [400] * 10 and codes[10:] == [429, 429]


def test_behind_one_proxy_the_forwarded_client_is_counted(settings):
    """TRUSTED_PROXY_COUNT=1: every request comes from the proxy's address; each forwarded client has its own
    count, and entries a client writes before its own address change nothing."""
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = "172.16.0.2"
    assert _token_codes([(proxy, f"203.0.113.{i}") for i in range(12)]) == [400] * 12
    same = _token_codes([(proxy, f"198.51.100.{i}, 192.0.2.7") for i in range(12)])
    assert same[:10] == [400] * 10 and same[10:] == [429, 429]


@pytest.fixture
def researcher() -> User:
    user = User.objects.create_user("locky2", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name=RESEARCHER_GROUP)[0])
    return user


@pytest.mark.parametrize("url", ["/accounts/login/", "/api/token/"])
def test_the_login_lockout_counts_under_the_same_address(researcher, settings, url):
    """django-axes: without a proxy a new X-Forwarded-For for each wrong password still locks the username
    (429); behind one proxy the forwarded client is locked and another forwarded client is not."""
    settings.TRUSTED_PROXY_COUNT = 0
    client = Client(REMOTE_ADDR="10.6.6.6")
    codes = [client.post(url, {"username": "locky2", "password": "wrong"}, HTTP_X_FORWARDED_FOR=f"203.0.113.{i}")
             .status_code for i in range(settings.AXES_FAILURE_LIMIT)]
    assert codes[-1] == 429 and 429 not in codes[:-1]
    assert client.post(url, {"username": "locky2", "password": PASSWORD},
                       HTTP_X_FORWARDED_FOR="203.0.113.250").status_code == 429
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = Client(REMOTE_ADDR="172.16.0.2")
    codes = [proxy.post(url, {"username": "locky2", "password": "wrong"}, HTTP_X_FORWARDED_FOR="198.51.100.1")
             .status_code for _ in range(settings.AXES_FAILURE_LIMIT)]
    assert codes[-1] == 429 and 429 not in codes[:-1]
    other = proxy.post(url, {"username": "locky2", "password": PASSWORD}, HTTP_X_FORWARDED_FOR="198.51.100.2")
    assert other.status_code in (200, 302)
