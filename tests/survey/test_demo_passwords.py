"""The demo's published passwords (researcher-demo-pass, admin-demo-pass) with DEBUG off: load_demo neither creates
an account with one (even when given through DEMO_*_PASSWORD) nor leaves an existing account usable with one, and
every log-in (the researchers', the admin's, the API token's) with one is refused, saying why, while django-axes'
lockout keeps counting. With DEBUG on (make run) they work."""
from __future__ import annotations

import io

import pytest
from django.contrib.auth import password_validation
from django.contrib.auth.models import Group, User
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from survey.demo_passwords import PUBLISHED, REFUSED
from survey.research_views import RESEARCHER_GROUP

pytestmark = pytest.mark.django_db
RESEARCHER_PW, ADMIN_PW = PUBLISHED["researcher"], PUBLISHED["admin"]


def _load_demo(monkeypatch, researcher: str | None = None, admin: str | None = None) -> str:
    for name, value in (("DEMO_RESEARCHER_PASSWORD", researcher), ("DEMO_ADMIN_PASSWORD", admin)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    out = io.StringIO()
    call_command("load_demo", participants=1, sets_each=1, stdout=out)
    return out.getvalue()


def test_load_demo_with_debug_off_refuses_published_passwords_given_and_locks_those_kept(settings, monkeypatch):
    settings.DEBUG = False
    refused = _load_demo(monkeypatch, researcher="a-private-secret-1", admin=ADMIN_PW)
    assert "no demo accounts: DEMO_ADMIN_PASSWORD is a published demo password, refused while DEBUG is off" in refused
    assert not User.objects.exists()
    # a database built with DEBUG on (make demo) has the published passwords, and maybe a session and a token ...
    settings.DEBUG = True
    _load_demo(monkeypatch)
    assert User.objects.get(username="admin").check_password(ADMIN_PW)
    session = Client()
    session.force_login(User.objects.get(username="researcher"))
    assert session.get("/research/").status_code == 200
    token = Token.objects.create(user=User.objects.get(username="researcher"))
    # ... which load_demo with DEBUG off makes unusable, saying so and how to set new ones
    settings.DEBUG = False
    out = _load_demo(monkeypatch)
    for username in ("admin", "researcher"):
        assert (f"demo account {username}: its password was a published demo password, refused while DEBUG is off; "
                f"the account can no longer log in. Give it a new password with `manage.py changepassword "
                f"{username}`") in out
        assert not User.objects.get(username=username).has_usable_password()
    assert "no demo accounts: DEBUG is off" in out
    assert session.get("/research/").status_code == 302  # logged out: to the log-in page
    assert not Token.objects.filter(key=token.key).exists()
    # published passwords given again: still refused, the accounts stay locked
    again = _load_demo(monkeypatch, researcher=RESEARCHER_PW, admin=ADMIN_PW)
    assert "DEMO_RESEARCHER_PASSWORD and DEMO_ADMIN_PASSWORD are published demo passwords, refused" in again
    assert not User.objects.get(username="admin").has_usable_password()
    # passwords of one's own: the locked accounts get them
    own = _load_demo(monkeypatch, researcher="a-private-secret-1", admin="a-private-secret-2")
    assert "admin account: admin / a-private-secret-2" in own
    assert User.objects.get(username="researcher").check_password("a-private-secret-1")
    assert User.objects.get(username="admin").check_password("a-private-secret-2")
    assert Client().post("/admin/login/", {"username": "admin", "password": "a-private-secret-2"}).status_code == 302


@pytest.fixture
def demo_accounts() -> None:
    """The demo's accounts as a DEBUG-on database has them: the published passwords."""
    researcher = User.objects.create_user("researcher", password=RESEARCHER_PW)
    researcher.groups.add(Group.objects.get_or_create(name=RESEARCHER_GROUP)[0])
    User.objects.create_superuser("admin", "admin@localhost", ADMIN_PW)


def test_every_login_refuses_a_published_password_with_debug_off(demo_accounts, settings):
    settings.DEBUG = False
    for url, username, password in (("/accounts/login/", "researcher", RESEARCHER_PW),
                                     ("/admin/login/", "admin", ADMIN_PW)):
        client = Client()
        page = client.post(url, {"username": username, "password": password})
        assert page.status_code == 200 and "published passwords, refused while DEBUG is off" in page.content.decode()
        assert "_auth_user_id" not in client.session
    token = APIClient().post("/api/token/", {"username": "researcher", "password": RESEARCHER_PW}, format="json")
    assert token.status_code == 400 and token.json() == {"non_field_errors": [REFUSED]}
    # an ordinary wrong password still gets the ordinary answer
    wrong = APIClient().post("/api/token/", {"username": "researcher", "password": "wrong"}, format="json")
    assert wrong.status_code == 400 and REFUSED not in str(wrong.json())


def test_with_debug_on_the_published_passwords_log_in(demo_accounts, settings):
    settings.DEBUG = True
    assert Client().post("/accounts/login/", {"username": "researcher", "password": RESEARCHER_PW}).status_code == 302
    assert Client().post("/admin/login/", {"username": "admin", "password": ADMIN_PW}).status_code == 302
    token = APIClient().post("/api/token/", {"username": "researcher", "password": RESEARCHER_PW}, format="json")
    assert token.status_code == 200 and token.json()["token"]


@pytest.mark.parametrize("url", ["/accounts/login/", "/admin/login/", "/api/token/"])
def test_refused_logins_count_towards_the_lockout(demo_accounts, settings, url):
    """django-axes counts a refused published password as a failed log-in: the username is locked (429) after
    AXES_FAILURE_LIMIT of them, as after wrong passwords."""
    settings.DEBUG = False
    client = APIClient()
    codes = [client.post(url, {"username": "admin", "password": ADMIN_PW}).status_code
             for _ in range(settings.AXES_FAILURE_LIMIT)]
    assert codes[-1] == 429 and 429 not in codes[:-1]


def test_a_published_password_cannot_be_set_with_debug_off(settings):
    settings.DEBUG = False
    with pytest.raises(ValidationError, match="published passwords"):
        password_validation.validate_password(ADMIN_PW)
    settings.DEBUG = True
    password_validation.validate_password(ADMIN_PW)
