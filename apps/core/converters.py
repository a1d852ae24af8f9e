"""The `<id:...>` path converter of the API's routes.

It takes any one path segment, so that an id that is not an integer reaches
`SingleValuedQueryMiddleware`, which answers it 400 naming the parameter (contract section 13:
every integer in a path is ASCII digits only and at most 2^63-1, else 400), where Django's
`<int:...>` would not match and the request would fall through to a 404. An ASCII integer
arrives as an `int`, anything else as the string sent. Fixed words where an id could stand
(`/v1/vehicles/coverages`) are routes of their own, listed before the id patterns.
"""

from __future__ import annotations

from apps.core.params import is_ascii_int

# The same pattern for the viewsets' detail routes (`ScopedViewSet.lookup_value_regex`).
ID_SEGMENT = r"[^/]+"


class IdConverter:
    regex = ID_SEGMENT

    def to_python(self, value: str) -> int | str:
        return int(value) if is_ascii_int(value) else value

    def to_url(self, value) -> str:
        return str(value)
