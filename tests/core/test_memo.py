"""The bounded per-process memo behind the verified-token and permission-set memos."""

from __future__ import annotations

from apps.accounts import authentication, principal
from apps.core.memo import BoundedMemo


def test_a_full_memo_is_emptied_before_it_takes_the_next_entry():
    memo = BoundedMemo(2)
    memo.remember("a", 1)
    memo.remember("b", 2)
    assert memo == {"a": 1, "b": 2}
    memo.remember("c", 3)
    assert memo == {"c": 3}
    memo.remember("c", 4)
    assert memo == {"c": 4}


def test_the_process_memos_are_bounded():
    for memo in (authentication._VERIFIED_TOKENS, principal._PERMISSIONS):
        assert isinstance(memo, BoundedMemo) and memo.limit == 4096
