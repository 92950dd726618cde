"""Shared fixtures for the working-memory tests: an injected clock and seeded ids."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mbank.memo.model import MemoConfig
from mbank.memo.store import MemoStore
from mbank.memo.tools import MemoTools

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # `bench.memo` holds the corpus generator the recall tests use
    sys.path.insert(0, str(REPO))
HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from memo_fixtures import FakeClock, seeded_ids  # noqa: E402


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_tools(clock: FakeClock) -> Callable[..., MemoTools]:
    def make(**options: Any) -> MemoTools:
        store = MemoStore(MemoConfig(**options), clock=clock, new_id=seeded_ids())
        return MemoTools(store)

    return make


@pytest.fixture
def tools(make_tools: Callable[..., MemoTools]) -> MemoTools:
    return make_tools()
