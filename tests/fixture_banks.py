"""Where the hand-written fixture banks live, and how a test gets a private copy of one.

A plain module (not conftest) so test modules can import it: `from conftest import …` is
ambiguous in a full run, because tests/memo/ has a conftest.py of its own.
"""

from __future__ import annotations

import shutil
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SNAPSHOT_ROOT = REPO / "snapshots"
FIXTURE_BANK = TESTS / "fixture-bank"
FIXTURE_OVERLAY = TESTS / "fixture-overlay"
TODAY = "2026-09-14"


def copy_fixture(target: Path, *, overlay: bool) -> Path:
    """Copy the base fixture (and the overlay over it) to `target` and return it."""
    shutil.copytree(FIXTURE_BANK, target)
    if overlay:
        shutil.copytree(FIXTURE_OVERLAY, target, dirs_exist_ok=True)
    return target
