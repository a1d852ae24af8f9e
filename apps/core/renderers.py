"""The JSON renderer of /v1: snake_case keys out as camelCase, the same bytes, less work.

djangorestframework_camel_case's `camelize` runs a regular expression on every key of every
object and tries `iter()` on every value (an exception raised and caught per number and per
date). A 1,000-unit batch answer has about 40,000 keys and values, so that walk cost more than
the verification itself (issue 18, docs/performance.md). This walk converts each distinct key
once (a bounded memo; a dict whose keys are all in it is rebuilt in one comprehension) and
dispatches on the value's type; anything it does not know (lazy strings, sets, generators...)
goes to the library's own function, so the output is the same. An answer built with its final
keys (apps.core.camel_case.CamelCased: verification's) is not walked at all, and a mapping
keyed by data (apps.core.camel_case.DataKeyed: a report's unit types) keeps its keys.

The bytes are orjson's, which writes what DRF's JSONRenderer writes (compact, UTF-8, strict
JSON) in a fifth of the time or less: a 1,000-unit batch's 735 KB took 5.7 ms through
`json.dumps`.
Where the two would differ, the answer goes through DRF's encoder as before:
- a float: orjson spells 0 < |x| < 1e-4 otherwise (1e-05 is "0.00001", 1.5e-07 "1.5e-7") and
  writes NaN and infinities as null where DRF refuses them (a 500). Python and orjson agree on
  every other finite float (tests/core/test_renderers.py). The walk marks such floats as
  `PythonFloat`, a float subclass that `json` writes as the float it is and orjson refuses. No
  answer of this API holds a float today (decimals are strings, no FloatField);
- an object orjson does not write itself: lazy strings, dates, times and durations are spelled
  by DRF's encoder (orjson is told to pass datetimes through, and its own spelling of them is
  not DRF's); anything else (a Decimal, a float subclass, a dict with a key that is not a
  string, an integer past 64 bits, a string with a lone surrogate...) sends the whole answer
  to DRF's encoder (the walk has made sets, tuples and generators lists);
- an indented answer (`Accept: application/json; indent=4`): DRF's encoder.
One difference is left: orjson writes a bare Enum member (not a str or int one, which both
write alike) as its value, where `json` raised; serializers give values, never members.
Both escape U+2028 and U+2029 (DRF writes them as \\u2028 and \\u2029, a JavaScript-safe
subset); orjson writes every other character as `json.dumps(..., ensure_ascii=False)` does.
"""

from __future__ import annotations

import copy
import datetime as dt
import math

import orjson
from django.utils.functional import Promise
from djangorestframework_camel_case import util
from djangorestframework_camel_case.render import CamelCaseJSONRenderer as LibraryRenderer
from rest_framework.utils.encoders import JSONEncoder

from apps.core.camel_case import CAMEL_KEYS, CamelCased, DataKeyed, camel_key

# Floats are not plain: the walk checks each (see PythonFloat).
_PLAIN = frozenset({str, int, bool, type(None)})


class PythonFloat(float):
    """A float orjson would write otherwise than `json` (0 < |x| < 1e-4, NaN, infinities):
    the same number to DRF's encoder, refused by orjson, so its answer takes DRF's path."""

    __slots__ = ()


def _float(value: float) -> float:
    if value == 0.0 or 1e-4 <= abs(value) < math.inf:  # NaN is none of these
        return value
    return PythonFloat(value)


def _mark_floats(data):
    """The library's `camelize` result (lazy keys, sets, generators: rare) with its floats
    checked as the walk checks them."""
    kind = type(data)
    if kind is float:
        return _float(data)
    if isinstance(data, dict):
        for key, value in data.items():
            data[key] = _mark_floats(value)
    elif isinstance(data, list):
        data[:] = [_mark_floats(item) for item in data]
    return data


def camelize(data):
    """What `djangorestframework_camel_case.util.camelize(data)` returns, rendered alike."""
    kind = type(data)
    if kind in _PLAIN or kind is CamelCased:  # CamelCased: its keys are the final ones
        return data
    if kind is float:
        return _float(data)
    if isinstance(data, str):  # text choices (a policy's status): a string to the encoder
        return data
    if kind is list or kind is tuple:
        return [camelize(item) for item in data]
    if isinstance(data, dict):
        if kind is DataKeyed:  # keys that are data: as they are; their values walked
            return {
                key: value if type(value) in _PLAIN else camelize(value)
                for key, value in data.items()
            }
        # Every key converted before (the memo holds only strings): one comprehension, no
        # call or store per key. A key never seen, or not a string, takes the loop below.
        try:
            return {
                CAMEL_KEYS[key]: value if type(value) in _PLAIN else camelize(value)
                for key, value in data.items()
            }
        except KeyError:
            pass
        out = {}
        for key, value in data.items():
            if type(key) is not str:  # lazy or non-string keys: the library's rules
                return _mark_floats(util.camelize(data))
            # Inlined for the leaves (most values of a big answer): no call per key or value.
            new_key = CAMEL_KEYS.get(key) or camel_key(key)
            out[new_key] = value if type(value) in _PLAIN else camelize(value)
        return out
    if isinstance(data, list):  # ReturnList and other list subclasses
        return [camelize(item) for item in data]
    return _mark_floats(util.camelize(data))


_DRF_DEFAULT = JSONEncoder().default
_SPELLED_BY_DRF = (Promise, dt.date, dt.time, dt.timedelta)  # dt.datetime is a dt.date
_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def _default(obj):
    # Strings in DRF's spelling (an aware time raises there, as in DRF); nothing else, so no
    # generator is consumed and no Decimal becomes a float orjson would spell.
    if isinstance(obj, _SPELLED_BY_DRF):
        return _DRF_DEFAULT(obj)
    raise TypeError


class CamelCaseJSONRenderer(LibraryRenderer):
    def render(self, data, accepted_media_type=None, renderer_context=None):
        data = camelize(data)
        if data is not None and self._orjson_writes_alike:
            indent = self.get_indent(accepted_media_type, renderer_context or {})
            if indent is None:
                try:
                    ret = orjson.dumps(data, default=_default, option=_OPTIONS)
                except orjson.JSONEncodeError:  # DRF's path below: its answer, or its error
                    pass
                else:
                    # U+2028 and U+2029 are E2 80 A8 and E2 80 A9. A one-byte search first:
                    # it is memchr, while CPython searches for a longer needle a byte at a
                    # time (a 200-DOT answer's 132 KB: 1 us against 115, most of its render).
                    if b"\xe2" in ret and b"\xe2\x80" in ret:
                        ret = ret.replace(b"\xe2\x80\xa8", b"\\u2028")
                        ret = ret.replace(b"\xe2\x80\xa9", b"\\u2029")
                    return ret
        # The library renderer's parent (DRF's JSONRenderer) encodes the rest.
        try:
            return super(LibraryRenderer, self).render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            # Text with a lone surrogate, which UTF-8 cannot encode (the parser refuses it in a
            # body; one from anywhere else must not answer 500): written as JSON escapes.
            escaping = copy.copy(self)
            escaping.ensure_ascii = True
            return super(LibraryRenderer, escaping).render(
                data, accepted_media_type, renderer_context
            )

    # DRF's settings as this project has them (UNICODE_JSON, COMPACT_JSON, STRICT_JSON): the
    # only ones orjson's output matches.
    @property
    def _orjson_writes_alike(self) -> bool:
        return self.compact and not self.ensure_ascii and self.strict
