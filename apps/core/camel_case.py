"""Key names between the API's camelCase and Python's snake_case, with the library's rules.

djangorestframework-camel-case converts every body at the parser and the renderer; the few
places that name a single key (an error's `field`, a legacy filter, a rule stored as JSON) use
its helpers too, with the same options as the parser, so a name never converts two ways.
"""

from __future__ import annotations

from django.conf import settings
from djangorestframework_camel_case.util import (
    camel_to_underscore,
    camelize_re,
    underscore_to_camel,
)


class CamelCased(dict):
    """An answer built with the API's camelCase keys all the way down (verification's, whose
    shapes write the final keys once): the renderer sends it as it is, without the walk that
    rebuilds every dict of other answers (a 1,000-unit batch's 40,000 keys, issue 18)."""

    __slots__ = ()


class DataKeyed(dict):
    """A mapping keyed by data, not by field names (a report's `byUnitType`, keyed by unit
    types' names, which the admin edits): the renderer keeps its keys as they are and
    converts only the field names inside its values. A data key is never renamed: "Day_cab
    tractor" must stay the name its rows show, not become "DayCab tractor". Made by
    apps.core.serializers.DataKeyedDictField."""

    __slots__ = ()


CAMEL_KEYS: dict[str, str] = {}
_KEYS_KEPT = 4096  # field names are few; a dict keyed by data must not grow the memo forever


def camel_key(key: str) -> str:
    """snake_case -> camelCase, each distinct key converted once (the renderer's hot path)."""
    new = CAMEL_KEYS.get(key)
    if new is None:
        new = camelize_re.sub(underscore_to_camel, key) if "_" in key else key
        if len(CAMEL_KEYS) < _KEYS_KEPT:
            CAMEL_KEYS[key] = new
    return new


def camel(name: str | None) -> str | None:
    """snake_case -> camelCase (as the renderer does), also inside dotted paths of nested fields."""
    if name is None:
        return None
    return camel_key(name)


def snake(name: str) -> str:
    """camelCase -> snake_case, as the JSON parser does."""
    return camel_to_underscore(name, **settings.JSON_CAMEL_CASE.get("JSON_UNDERSCOREIZE", {}))


SNAKE_KEYS: dict[str, str] = {}
_CONTAINERS = (dict, list)


def snake_key(key: str) -> str:
    """`snake(key)`, each distinct key converted once (a body's keys are few and repeat)."""
    new = SNAKE_KEYS.get(key)
    if new is None:
        new = snake(key)
        if len(SNAKE_KEYS) < _KEYS_KEPT:  # the keys come from callers: the memo stays bounded
            SNAKE_KEYS[key] = new
    return new


class KeySentTwice(ValueError):
    """Two keys of one object that name one field (`minimumLimit` and `minimum_limit`): which
    one the caller meant is unknown, so neither is taken. `path` is where, as sent."""

    def __init__(self, keys: list[str]):
        super().__init__(keys)
        self.keys = keys
        self.path: list[str] = []


def underscoreize(data):
    """What the library's `underscoreize(data, **JSON_UNDERSCOREIZE)` returns for decoded JSON
    (dicts with string keys, lists, strings, numbers, booleans, null; the settings name no
    ignored fields or keys), without its three calls and a caught exception per value: a
    1,000-VIN batch body is a thousand strings, which the library's walk visited one by one.

    Two keys of one object that convert to one name (`minimumLimit` and `minimum_limit`) raise
    KeySentTwice: the library kept the later one, so the order of the keys decided the value."""
    kind = type(data)
    if kind is dict:
        try:
            converted = {
                snake_key(key): underscoreize(value) if type(value) in _CONTAINERS else value
                for key, value in data.items()
            }
        except KeySentTwice as exc:
            raise _located(exc, data.items()) from None
        if len(converted) != len(data):
            named: dict[str, list[str]] = {}
            for key in data:
                named.setdefault(snake_key(key), []).append(key)
            raise KeySentTwice(next(keys for keys in named.values() if len(keys) > 1))
        return converted
    if kind is list:
        try:
            return [underscoreize(item) if type(item) in _CONTAINERS else item for item in data]
        except KeySentTwice as exc:
            raise _located(exc, enumerate(data)) from None
    return data


def _located(exc: KeySentTwice, members) -> KeySentTwice:
    """`exc`, its path starting with the key or index of the member that raised it (found
    again: only a refused body pays for the search)."""
    for at, value in members:
        if type(value) in _CONTAINERS:
            try:
                underscoreize(value)
            except KeySentTwice as inner:
                inner.path.insert(0, str(at))
                return inner
    return exc
