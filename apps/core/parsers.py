"""The JSON body parser of /v1: camelCase in, snake_case out, nesting bounded, no text that
is not Unicode characters."""

from __future__ import annotations

import json
import re

from django.conf import settings
from djangorestframework_camel_case.parser import CamelCaseJSONParser
from rest_framework.exceptions import ParseError, ValidationError

from apps.core.camel_case import underscoreize

MAX_JSON_DEPTH = 64
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(rb"[\[\]{}]")


def json_depth(raw: bytes) -> int:
    """The deepest nesting of arrays and objects in a JSON text, without parsing it.

    Brackets inside strings do not count. Linear in the size of the body, and never recursive:
    the parser itself recurses and raised RecursionError (a 500) 100,000 levels down.
    """
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_STRING.sub(b"", raw)):
        if bracket in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


# A string holds a lone surrogate only through an escape (`"\ud800"`): the UTF-8 decoder refuses
# one encoded as bytes. A body without such an escape is not walked.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
LONE_SURROGATE_MESSAGE = "A lone UTF-16 surrogate (\\ud800 to \\udfff) is not a character."


def refused_strings(data, path: str = "") -> dict[str, list[str]]:
    """The strings of parsed JSON (keys and values) no field may take, by their path as sent
    (`vins.0`, `limits.0.name`; a key is named escaped). A lone surrogate passed every field
    and answered 500 where it was written out (a 400 echoing it, the database)."""
    refused: dict[str, list[str]] = {}
    if isinstance(data, str):
        if _LONE_SURROGATE.search(data):
            refused[path or "non_field_errors"] = [LONE_SURROGATE_MESSAGE]
    elif isinstance(data, dict):
        for key, value in data.items():
            name = key.encode("utf-8", "backslashreplace").decode()
            at = f"{path}.{name}" if path else name
            if _LONE_SURROGATE.search(key):
                refused[at] = [LONE_SURROGATE_MESSAGE]
            refused.update(refused_strings(value, at))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            refused.update(refused_strings(value, f"{path}.{index}" if path else str(index)))
    return refused


class BoundedCamelCaseJSONParser(CamelCaseJSONParser):
    """JSON nested deeper than MAX_JSON_DEPTH levels is a 400, before it reaches the parser; a
    string holding a lone surrogate is a 400 naming its path (`refused_strings`), before any
    field or view reads it.

    Otherwise the library's parser (its decoding and its errors), with the keys converted by
    apps.core.camel_case.underscoreize: the same data, without the library's walk of every
    value (issue 18)."""

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream is not None else b""
        if json_depth(raw) > MAX_JSON_DEPTH:
            raise ParseError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels is refused.")
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            data = json.loads(raw.decode(encoding))
        except ValueError as exc:  # the library's wording
            raise ParseError(f"JSON parse error - {exc}") from None
        except RecursionError:  # defence in depth: never a 500
            raise ParseError("JSON nested too deeply.") from None
        if _SURROGATE_ESCAPE.search(raw):
            refused = refused_strings(data)
            if refused:
                raise ValidationError(refused)
        return underscoreize(data)
