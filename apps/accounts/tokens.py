"""The tokens this service issues: simplejwt's, bound to the password they were issued under.

Each token carries `password_digest`: a short digest of the user's password hash, keyed with
the signing key (as Django's sessions carry `get_session_auth_hash`), never the hash itself (a
token is readable by whoever holds it). A password change, wherever it is made (the admin's
password form, `changepassword`, `set_password` and `save` anywhere), gives the user another
hash, so every token issued before it, access and refresh alike, is refused on its next use:
on the bearer route the digest is compared with the one the caller's statement reads
(apps.accounts.principal), on the refresh route with the user's row. An access token made from
a refresh token copies its digest, so a refresh never yields a token the change did not end.
Nothing else about the user (its name, email, groups) is in the digest: such changes keep the
tokens. A token with no digest (issued before this rule) is refused. A login that stores the
same password anew (Django re-hashes it when its hasher or work factor changed) is a new hash
too: the tokens issued before it end once, as Django's sessions do (documented).

Not simplejwt's own `CHECK_REVOKE_TOKEN`: its claim is an unkeyed MD5 of the hash, and its
refresh route never checks it.
"""

from __future__ import annotations

from django.utils.crypto import salted_hmac
from rest_framework_simplejwt import tokens
from rest_framework_simplejwt.settings import api_settings as jwt_settings

from apps.core.memo import BoundedMemo

PASSWORD_CLAIM = "password_digest"
_KEY_SALT = "apps.accounts.tokens.password_digest"
# Password hash -> its digest, so the bearer route, which reads the hash with the caller on every
# request it does not answer from the shared cache, computes the HMAC once per password.
_DIGESTS: BoundedMemo[str, str] = BoundedMemo(4096)


def password_digest(password_hash: str) -> str:
    """16 hex digits of an HMAC-SHA256 of `password_hash` keyed with the signing key: whoever
    reads it learns nothing of the hash, and a change of either gives another digest."""
    digest = _DIGESTS.get(password_hash)
    if digest is None:
        mac = salted_hmac(
            _KEY_SALT, password_hash, secret=jwt_settings.SIGNING_KEY, algorithm="sha256"
        )
        digest = mac.hexdigest()[:16]
        _DIGESTS.remember(password_hash, digest)
    return digest


def issued_under(claims, digest: str | None) -> bool:
    """Whether a verified token's claims were issued under the password whose digest is
    `digest` (None: no user, nothing matches). A token with no digest matches none."""
    return digest is not None and claims.get(PASSWORD_CLAIM) == digest


class _PasswordBound:
    @classmethod
    def for_user(cls, user):
        token = super().for_user(user)
        token[PASSWORD_CLAIM] = password_digest(user.password)
        return token


class AccessToken(_PasswordBound, tokens.AccessToken):
    """An access token carrying the digest of its user's password."""


class RefreshToken(_PasswordBound, tokens.RefreshToken):
    """A refresh token carrying the digest of its user's password; its access tokens copy it."""

    access_token_class = AccessToken
