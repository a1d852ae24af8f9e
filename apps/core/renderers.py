"""The JSON renderer of /v1: snake_case keys out as camelCase, the same bytes, less work.

djangorestframework_camel_case's `camelize` runs a regular expression on every key of every
object and tries `iter()` on every value (an exception raised and caught per number and per
date). A 1,000-unit batch answer has about 40,000 keys and values, so that walk cost more than
the verification itself (issue 18, docs/performance.md). This walk converts each distinct key
once (a bounded memo; a dict whose keys are all in it is rebuilt in one comprehension) and
dispatches on the value's type; anything it does not know (lazy strings, sets, generators...)
goes to the library's own function, so the output is the same. An answer built with its final
keys (apps.core.camel_case.CamelCased: verification's) is not walked at all.
"""

from __future__ import annotations

from djangorestframework_camel_case import util
from djangorestframework_camel_case.render import CamelCaseJSONRenderer as LibraryRenderer

from apps.core.camel_case import CAMEL_KEYS, CamelCased, camel_key

_PLAIN = frozenset({str, int, float, bool, type(None)})


def camelize(data):
    """What `djangorestframework_camel_case.util.camelize(data)` returns, rendered alike."""
    kind = type(data)
    if kind in _PLAIN or kind is CamelCased:  # CamelCased: its keys are the final ones
        return data
    if isinstance(data, str):  # text choices (a policy's status): a string to the encoder
        return data
    if kind is list or kind is tuple:
        return [camelize(item) for item in data]
    if isinstance(data, dict):
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
                return util.camelize(data)
            # Inlined for the leaves (most values of a big answer): no call per key or value.
            new_key = CAMEL_KEYS.get(key) or camel_key(key)
            out[new_key] = value if type(value) in _PLAIN else camelize(value)
        return out
    if isinstance(data, list):  # ReturnList and other list subclasses
        return [camelize(item) for item in data]
    return util.camelize(data)


class CamelCaseJSONRenderer(LibraryRenderer):
    def render(self, data, *args, **kwargs):
        # The library renderer's parent (DRF's JSONRenderer) does the encoding.
        return super(LibraryRenderer, self).render(camelize(data), *args, **kwargs)
