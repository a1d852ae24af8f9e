"""A bounded per-process memo: what a process may remember of rows or tokens it has checked.

Emptied when full and refilled one entry at a time, so it never outgrows `limit` entries;
no eviction order to keep, since the memos that use it are cheap to refill (a token verified
again, a permission set read again) and hold nothing other processes would need to see."""

from __future__ import annotations

from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedMemo(dict[K, V], Generic[K, V]):
    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit

    def remember(self, key: K, value: V) -> None:
        """Store `value` under `key`, emptying the memo first when it is full."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
