"""Where the journal lives in a bank (spec 03 §14.1), and the names every part shares."""

from __future__ import annotations

import os
import sys

MBANK_DIR = ".mbank"
JOURNAL_FILE = "journal.jsonl"
WAL_DIR = "wal"
OBJECTS_DIR = "objects"
LOCK_FILE = "lock"
QUARANTINE_DIR = "quarantine"
GITIGNORE_FILE = ".gitignore"
GITIGNORE_TEXT = "wal/\nlock\nobjects/\n"
RECORD_VERSION = 1
LOCK_TIMEOUT = 10.0
LOCK_INTERVAL = 0.05
INTENT_STRING_LIMIT = 4096
TEMP_PREFIX = ".mbank-"
TEMP_SUFFIX = ".tmp"
DIRECTORY_MODE = 0o755


def log(message: str) -> None:
    """One `mbank: …` line on stderr (recovery and readers report this way, spec 03 §14.6)."""
    print(f"mbank: {message}", file=sys.stderr, flush=True)


def mbank_version() -> str:
    """The installed distribution's version, `0.0.0` when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mbank")
    except PackageNotFoundError:  # pragma: no cover - bare checkout
        return "0.0.0"


def journal_dir(root: str) -> str:
    """`<root>/.mbank`."""
    return os.path.join(root, MBANK_DIR)


def journal_path(root: str) -> str:
    """`<root>/.mbank/journal.jsonl`."""
    return os.path.join(root, MBANK_DIR, JOURNAL_FILE)


def wal_dir(root: str) -> str:
    """`<root>/.mbank/wal`."""
    return os.path.join(root, MBANK_DIR, WAL_DIR)


def object_path(root: str, digest: str) -> str:
    """Where the object with this sha256 lives: `objects/<2 hex>/<62 hex>` (§14.3)."""
    return os.path.join(root, MBANK_DIR, OBJECTS_DIR, digest[:2], digest[2:])


def has_journal_dir(root: str) -> bool:
    """True when the bank has a `.mbank/` directory (a real write has happened here)."""
    return os.path.isdir(journal_dir(root))


def bank_absolute(root: str, bank_path: str) -> str:
    """The absolute path of a bank path (`/`-separated, relative to the root)."""
    return os.path.join(root, *bank_path.split("/"))
