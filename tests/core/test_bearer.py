"""`Authorization` read one way by /v1 and /metrics (apps.core.bearer)."""

from __future__ import annotations

import pytest

from apps.core.bearer import bearer_token


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc", b"abc"),
        ("bearer abc", b"abc"),
        ("BEARER  abc ", b"abc"),
        ("Bearer\tabc", b"abc"),
        (b"Bearer \t abc", b"abc"),
        ("Bearer", b""),  # the scheme without a token
        ("Bearer a b", b""),  # two words are no token
        ("Basic abc", None),
        ("Bearerabc", None),
        ("", None),
        ("   ", None),
    ],
)
def test_a_bearer_token_is_the_one_word_after_the_scheme_in_any_case(header, token):
    assert bearer_token(header) == token
