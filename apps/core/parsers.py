"""The JSON body parser of /v1: camelCase in, snake_case out, nesting bounded."""

from __future__ import annotations

import json
import re

from django.conf import settings
from djangorestframework_camel_case.parser import CamelCaseJSONParser
from rest_framework.exceptions import ParseError

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


class BoundedCamelCaseJSONParser(CamelCaseJSONParser):
    """JSON nested deeper than MAX_JSON_DEPTH levels is a 400, before it reaches the parser.

    Otherwise the library's parser (its decoding and its errors), with the keys converted by
    apps.core.camel_case.underscoreize: the same data, without the library's walk of every
    value (issue 18)."""

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream is not None else b""
        if json_depth(raw) > MAX_JSON_DEPTH:
            raise ParseError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels is refused.")
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            return underscoreize(json.loads(raw.decode(encoding)))
        except ValueError as exc:  # the library's wording
            raise ParseError(f"JSON parse error - {exc}") from None
        except RecursionError:  # defence in depth: never a 500
            raise ParseError("JSON nested too deeply.") from None
