"""Test doubles for the working memory: an injected clock, seeded ids, a remember shortcut."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from mbank.memo.tools import MemoTools

START = 1_789_387_200.0  # 2026-09-14T12:00:00Z


class FakeClock:
    """A clock that only moves when a test moves it."""

    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def seeded_ids(seed: int = 7) -> Callable[[str], str]:
    """A deterministic id factory with the shape of 06 §2.1."""
    rng = random.Random(seed)

    def new_id(kind: str) -> str:
        return f"{kind[0]}_{rng.getrandbits(40):010x}"

    return new_id


def remember(tools: MemoTools, title: str, **options: Any) -> str:
    """`do_remember` without a key; returns the new id."""
    options.setdefault("idempotency_key", "")
    result = tools.do_remember(title, **options)
    node_id: str = result["applied_value"]["node"]["id"]
    return node_id
