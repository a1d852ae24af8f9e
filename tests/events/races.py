"""Two writers at once on PostgreSQL, for the race tests of this package: each thread has its
own connection and the database arbitrates, as between two server processes."""

from __future__ import annotations

import threading
import time

from django.db import connection, transaction


def while_holding(first, second) -> list:
    """Run `first` in a transaction, then `second` on another connection while it is still
    open; commit `first` after a second; `second`'s answers."""
    answers: list = []

    def run():
        answers.append(second())
        connection.close()

    with transaction.atomic():
        first()
        other = threading.Thread(target=run)
        other.start()
        time.sleep(1.0)
    other.join(30)
    return answers
