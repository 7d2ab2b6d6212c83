"""Login throttling (django-axes on every login, a rate on the token view), CSP with nonces, HTTPS settings."""
from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from rest_framework.test import APIClient

from survey.research_views import RESEARCHER_GROUP

pytestmark = pytest.mark.django_db
PASSWORD = "the-right-password-1"


@pytest.fixture
def researcher() -> User:
    user = User.objects.create_user("locky", password=PASSWORD, is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=RESEARCHER_GROUP)[0])
    return user


@pytest.mark.parametrize("url", ["/accounts/login/", "/admin/login/"])
def test_wrong_passwords_lock_the_login_with_429(researcher, url, settings):
    """After AXES_FAILURE_LIMIT wrong passwords the username is locked from that address: even the right
    password gets 429 and the locked-out page; another address is not locked."""
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert client.post(url, {"username": "locky", "password": "wrong"}).status_code == 200
    locked = client.post(url, {"username": "locky", "password": "wrong"})
    assert locked.status_code == 429
    right = client.post(url, {"username": "locky", "password": PASSWORD})
    assert right.status_code == 429 and "Too many failed log-ins" in right.content.decode()
    elsewhere = Client(REMOTE_ADDR="10.1.2.3").post(url, {"username": "locky", "password": PASSWORD})
    assert elsewhere.status_code == 302


def test_the_token_view_is_rate_limited_and_locked_like_the_logins(researcher, settings):
    client = APIClient()
    answers = [client.post("/api/token/", {"username": "locky", "password": "wrong"}, format="json").status_code
               for _ in range(settings.AXES_FAILURE_LIMIT)]
    assert answers == [400] * (settings.AXES_FAILURE_LIMIT - 1) + [429]
    locked = client.post("/api/token/", {"username": "locky", "password": PASSWORD}, format="json")
    assert locked.status_code == 429 and "Too many failed log-ins" in locked.json()["detail"]
    assert "token" not in locked.json()
    # the per-address rate: 10 a minute, then 429 whatever the credentials
    other = APIClient(REMOTE_ADDR="10.9.9.9")
    codes = [other.post("/api/token/", {"username": f"nobody{i}", "password": "x"}, format="json").status_code
             for i in range(12)]
    assert codes[:10] == [400] * 10 and codes[10:] == [429, 429]


def test_pages_carry_a_content_security_policy_whose_nonce_is_on_every_inline_script(researcher):
    client = Client()
    client.force_login(researcher)
    response = client.get("/research/runs/")
    policy = response["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
    nonce = re.search(r"'nonce-([^']+)'", policy).group(1)
    html = response.content.decode()
    inline = re.findall(r"<script(?![^>]*\bsrc=)([^>]*)>", html)
    assert inline and all(f'nonce="{nonce}"' in attributes for attributes in inline)
    participant = Client().get("/")
    assert "script-src 'self'" in participant["Content-Security-Policy"]


def test_https_settings_come_from_the_environment(monkeypatch):
    """SECURE_PROXY_SSL_HEADER, the redirect and HSTS are read from the environment (off by default)."""
    import importlib

    import config.settings as config_settings

    monkeypatch.setenv("SECURE_PROXY_SSL_HEADER", "1")
    monkeypatch.setenv("SECURE_SSL_REDIRECT", "1")
    monkeypatch.setenv("HSTS_SECONDS", "31536000")
    try:
        reloaded = importlib.reload(config_settings)
        assert reloaded.SECURE_PROXY_SSL_HEADER == ("HTTP_X_FORWARDED_PROTO", "https")
        assert reloaded.SECURE_SSL_REDIRECT is True and reloaded.SECURE_HSTS_SECONDS == 31536000
    finally:
        monkeypatch.delenv("SECURE_PROXY_SSL_HEADER")
        monkeypatch.delenv("SECURE_SSL_REDIRECT")
        monkeypatch.delenv("HSTS_SECONDS")
        importlib.reload(config_settings)


def test_cache_url_selects_a_shared_redis_cache_and_a_bad_one_is_refused():
    from django.core.exceptions import ImproperlyConfigured

    from config.settings import _caches

    assert _caches("")["default"]["BACKEND"].endswith("LocMemCache")
    shared = _caches("redis://127.0.0.1:6379/1")["default"]
    assert shared["BACKEND"] == "django.core.cache.backends.redis.RedisCache"
    assert shared["LOCATION"] == "redis://127.0.0.1:6379/1"
    with pytest.raises(ImproperlyConfigured, match="CACHE_URL must be"):
        _caches("memcached://x")


def test_with_a_shared_cache_two_web_processes_count_one_rate_limit(researcher, settings):
    """Two gunicorn workers are two processes with two cache connections: with CACHE_URL on Redis the per-address
    token rate is counted once for both (here: two clients through two separate cache connections)."""
    from django.core.cache import caches

    from config.settings import _caches

    settings.CACHES = _caches("redis://127.0.0.1:6379/14")
    caches["default"].clear()
    try:
        codes = []
        for attempt in range(12):
            caches["default"].close()  # every request on a fresh connection, as another process would use
            codes.append(APIClient(REMOTE_ADDR="10.7.7.7").post(
                "/api/token/", {"username": f"nobody{attempt}", "password": "x"}, format="json").status_code)
        assert codes[:10] == [400] * 10 and codes[10:] == [429, 429]
        import redis

        stored = redis.Redis.from_url("redis://127.0.0.1:6379/14").keys("*throttle*")
        assert stored, "the counter lives in Redis, where every web process sees it"
    finally:
        caches["default"].clear()


def test_healthz_answers_over_plain_http_behind_the_https_redirect(settings):
    """With SECURE_SSL_REDIRECT on (behind the proxy), a probe of /healthz over plain HTTP gets the health report,
    not a 301 to https; every other page is still redirected."""
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    client = Client()
    health = client.get("/healthz")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    assert client.head("/healthz").status_code == 200
    page = client.get("/accounts/login/")
    assert page.status_code == 301 and page["Location"] == "https://testserver/accounts/login/"
    assert client.get("/healthz/x").status_code == 301  # only the health check itself is exempt
    assert client.get("/accounts/login/", HTTP_X_FORWARDED_PROTO="https").status_code == 200
