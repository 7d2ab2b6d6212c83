"""The demo's published passwords (README "Two commands": ``researcher-demo-pass``, ``admin-demo-pass``) work only
with DEBUG on, as ``make run`` serves. With DEBUG off they are refused everywhere:

- at log-in, for any account: :class:`RefusePublishedPasswords` (an authentication backend after django-axes' and
  before Django's own) refuses the attempt, which django-axes counts as a failed log-in like any other; the
  researchers' and the admin's log-in forms (:class:`LoginForm`, :class:`AdminLoginForm`) and the API's token view
  say why;
- when a password is set: :class:`PublishedPasswordValidator` (``AUTH_PASSWORD_VALIDATORS``: ``changepassword``,
  ``createsuperuser``, the admin's password forms);
- by ``manage.py load_demo``, which neither creates an account with one nor leaves one usable
  (:func:`lock_published`).
"""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest

#: the demo accounts and their published passwords
PUBLISHED = {"researcher": "researcher-demo-pass", "admin": "admin-demo-pass"}

REFUSED = ("This is one of the demo's published passwords, refused while DEBUG is off. An administrator sets a new "
           "one with `manage.py changepassword USERNAME`.")


def refused(password: object) -> bool:
    """Whether ``password`` is a published demo password while DEBUG is off."""
    return not settings.DEBUG and isinstance(password, str) and password in PUBLISHED.values()


class RefusePublishedPasswords:
    """Refuses a log-in with a published password while DEBUG is off (Django's ``authenticate`` then stops and
    signals a failed log-in, which django-axes counts); otherwise leaves the decision to the next backend.

    Deliberately without ``get_user`` (like django-axes' backend): it never logs anyone in, so Django's test client
    and ``login()`` pass it over when they pick the backend a session remembers."""

    def authenticate(self, request: HttpRequest | None, username: str | None = None, password: str | None = None,
                     **kwargs: Any) -> AbstractBaseUser | None:
        if refused(password):
            raise PermissionDenied(REFUSED)
        return None


class PublishedPasswordValidator:
    """``AUTH_PASSWORD_VALIDATORS``: a published demo password cannot be set while DEBUG is off."""

    def validate(self, password: str, user: object = None) -> None:
        if refused(password):
            raise ValidationError("This is one of the demo's published passwords: choose another.",
                                  code="published_password")

    def get_help_text(self) -> str:
        return "Your password can't be one of the demo's published passwords."


class LoginForm(AuthenticationForm):
    """The researchers' log-in (templates/registration/login.html shows its form errors): says so when the password
    is a refused published one."""

    error_messages = {**AuthenticationForm.error_messages,
                      "invalid_login": "Your username and password didn't match. Please try again."}

    def get_invalid_login_error(self) -> ValidationError:
        if refused(self.cleaned_data.get("password")):
            return ValidationError(REFUSED, code="published_password")
        return super().get_invalid_login_error()


class AdminLoginForm(AdminAuthenticationForm):
    """The admin's log-in, with :class:`LoginForm`'s message."""

    def get_invalid_login_error(self) -> ValidationError:
        if refused(self.cleaned_data.get("password")):
            return ValidationError(REFUSED, code="published_password")
        return super().get_invalid_login_error()


def lock_published(user: AbstractBaseUser) -> bool:
    """Make ``user``'s password unusable when it is a published one (while DEBUG is off): its sessions end with it
    (their hash was of the old password) and its API token is deleted. Whether it was."""
    from rest_framework.authtoken.models import Token

    if settings.DEBUG or not any(user.check_password(password) for password in PUBLISHED.values()):
        return False
    user.set_unusable_password()
    user.save(update_fields=["password"])
    Token.objects.filter(user_id=user.pk).delete()
    return True
