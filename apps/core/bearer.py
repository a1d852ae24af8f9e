"""The bearer token of an `Authorization` header, read one way by /v1 (apps.accounts
.authentication) and /metrics (apps.core.metrics)."""

from __future__ import annotations


def bearer_token(header: str | bytes) -> bytes | None:
    """The token of `Authorization: Bearer <token>`: the scheme in any case (RFC 7235 section
    2.1), the token after whitespace of any kind (spaces, tabs), as bytes. None when the header
    names another scheme or none; empty when it names the bearer scheme with no token, or with
    more than one word after it, which no token is.

    A header's text is its bytes read as ISO-8859-1 (WSGI's and ASGI's `META`), so it is split
    as those bytes are, on ASCII whitespace only."""
    if isinstance(header, str):
        header = header.encode("iso-8859-1")
    parts = header.split()
    if not parts or parts[0].lower() != b"bearer":
        return None
    return parts[1] if len(parts) == 2 else b""
