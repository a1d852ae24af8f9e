"""The JSON body parser of /v1: camelCase in, snake_case out, nesting bounded, no string a
field could not take (a lone surrogate, NUL)."""

from __future__ import annotations

import json
import re

from djangorestframework_camel_case.parser import CamelCaseJSONParser
from rest_framework.exceptions import ErrorDetail, ParseError, ValidationError

from apps.core.camel_case import KeySentTwice, underscoreize
from apps.core.serializers import REPEATED_FIELD_MESSAGE

MAX_JSON_DEPTH = 64
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in a JSON text, without parsing it.

    Brackets inside strings do not count. Linear in the size of the body, and never recursive:
    the parser itself recurses and raised RecursionError (a 500) 100,000 levels down.
    """
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_STRING.sub("", text)):
        if bracket in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


# A string holds a lone surrogate or NUL through an escape (`"\ud800"`, `"\u0000"`); UTF-8
# cannot carry a lone surrogate as itself, and JSON refuses a raw NUL inside a string, but the
# decoded text is searched for both all the same. A body without either is not walked.
_REFUSED_ESCAPE = re.compile(r"\\u(?:[dD][89a-fA-F]|0000)|[\x00\ud800-\udfff]")
_REFUSED_CHARACTER = re.compile("[\x00\ud800-\udfff]")
LONE_SURROGATE_MESSAGE = "A lone UTF-16 surrogate (\\ud800 to \\udfff) is not a character."
NUL_MESSAGE = "Text cannot hold the NUL character (\\u0000)."


def text_problem(text: str) -> str | None:
    """Why no field takes `text`, or None: a lone surrogate is not a character (UTF-8 cannot
    encode it), and PostgreSQL's text cannot hold NUL."""
    found = _REFUSED_CHARACTER.search(text)
    if found is None:
        return None
    return NUL_MESSAGE if found.group() == "\x00" else LONE_SURROGATE_MESSAGE


def refused_strings(data, path: str = "") -> dict[str, list[str]]:
    """The strings of parsed JSON (keys and values) no field may take (`text_problem`), by
    their path as sent (`vins.0`, `limits.0.name`; a key is named escaped). A lone surrogate
    passed every field and answered 500 where it was written out (a 400 echoing it, the
    database); a NUL sent to a master-data lookup answered PostgreSQL's DataError, a 503."""
    refused: dict[str, list[str]] = {}
    if isinstance(data, str):
        problem = text_problem(data)
        if problem:
            refused[path or "non_field_errors"] = [problem]
    elif isinstance(data, dict):
        for key, value in data.items():
            name = key.encode("utf-8", "backslashreplace").decode().replace("\x00", "\\x00")
            at = f"{path}.{name}" if path else name
            problem = text_problem(key)
            if problem:
                refused[at] = [problem]
            refused.update(refused_strings(value, at))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            refused.update(refused_strings(value, f"{path}.{index}" if path else str(index)))
    return refused


def _no_json_value(literal: str):
    """`parse_constant` of json.loads: Python reads NaN, Infinity and -Infinity as floats, but
    RFC 8259 has no such values, so a body holding one is invalid JSON."""
    raise ValueError(f"{literal} is not a JSON value (RFC 8259)")


class BoundedCamelCaseJSONParser(CamelCaseJSONParser):
    """JSON nested deeper than MAX_JSON_DEPTH levels is a 400, before it reaches the parser; a
    string holding a lone surrogate or NUL is a 400 naming its path (`refused_strings`), before
    any field or view reads it. One field sent under two spellings (`minimumLimit` and
    `minimum_limit`, both read as `minimum_limit`) is a 400 naming it, code `repeated`, as a
    form field sent twice: the library kept whichever came last.

    The body is UTF-8 whatever charset the Content-Type names (RFC 8259 section 11: JSON
    exchanged between systems is UTF-8, and application/json defines no charset parameter):
    the parameter is accepted and ignored. Read in the charset it named, the UTF-8 bytes of
    "Café" were stored as "CafÃ©", and a charset naming no text codec (`bz2_codec`) was a 500.

    The body follows RFC 8259: `NaN`, `Infinity` and `-Infinity`, which Python's json module
    reads as floats, are the same 400 "JSON parse error" as any invalid JSON.

    Otherwise the library's parser (its errors), with the keys converted by
    apps.core.camel_case.underscoreize: the same data, without the library's walk of every
    value (issue 18)."""

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream is not None else b""
        try:
            text = raw.decode("utf-8")
        except ValueError as exc:  # the library's wording
            raise ParseError(f"JSON parse error - {exc}") from None
        return json_data(text)


def json_data(text: str):
    """A JSON text read as the API reads a body (`BoundedCamelCaseJSONParser`): RFC 8259 JSON
    (no NaN or Infinity), nested at most MAX_JSON_DEPTH levels, no string holding a lone
    surrogate or NUL, keys converted to snake_case, one key given in two spellings refused.
    ParseError or ValidationError (keyed by the path as sent, `rules.0.minimumLimit`) with the
    API's messages: the admin reads the JSON it takes (a profile's rules) through this too."""
    if json_depth(text) > MAX_JSON_DEPTH:
        raise ParseError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels is refused.")
    try:
        data = json.loads(text, parse_constant=_no_json_value)
    except ValueError as exc:  # the library's wording
        raise ParseError(f"JSON parse error - {exc}") from None
    except RecursionError:  # defence in depth: never a 500
        raise ParseError("JSON nested too deeply.") from None
    if _REFUSED_ESCAPE.search(text):
        refused = refused_strings(data)
        if refused:
            raise ValidationError(refused)
    try:
        return underscoreize(data)
    except KeySentTwice as exc:  # as a form field sent twice
        at = ".".join([*exc.path, exc.keys[0]])  # `rules.0.minimumLimit`
        detail = {at: [ErrorDetail(REPEATED_FIELD_MESSAGE, code="repeated")]}
        raise ValidationError(detail) from None
