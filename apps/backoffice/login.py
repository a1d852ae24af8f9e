"""The back-office's login form: Django's admin login, checked as a counted login attempt.

The API's password-guessing limit (apps.accounts.login_failures, docs/api_intro.md) counts per
user name and per client address; a login page that did not count walked around it (25 wrong
passwords in a row, then the right one, while the API was locked). Both doors now share the
counts: failures at either hold both back, and past a limit the page answers 429 with its form
and says so, without checking the password.
"""

from __future__ import annotations

from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import ValidationError
from rest_framework.exceptions import Throttled

from apps.accounts.login_failures import counted_login


class BackOfficeLoginForm(AdminAuthenticationForm):
    """Django's admin login form; `retry_after` (seconds) is set when the login was refused
    past a limit, for the site to answer 429 with Retry-After."""

    retry_after: int | None = None

    def clean(self):
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        if username is None or not password:
            return super().clean()  # no password to check: the form's own errors
        try:
            # A user who is inactive or not staff is refused by the form as a wrong password
            # is (its invalid-login message): a failure, counted as one.
            return counted_login(request=self.request, username=username, check=super().clean)
        except Throttled as exc:
            self.retry_after = exc.wait
            raise ValidationError(str(exc.detail), code="throttled") from None
