"""How many times an admin page counted a list: the COUNT statements one view runs."""

from __future__ import annotations

from collections.abc import Callable

from django.db import connection
from django.test.utils import CaptureQueriesContext


def counts_of(client, path: str, counted: Callable[[str], bool]) -> tuple[int, str]:
    """The `SELECT COUNT(*)` statements of one view of `path` that `counted` picks, and the
    page."""
    with CaptureQueriesContext(connection) as queries:
        page = client.get(path).content.decode()
    statements = [q["sql"] for q in queries.captured_queries]
    return len([s for s in statements if s.startswith("SELECT COUNT(*)") and counted(s)]), page
