"""Write-ahead entries: `.mbank/wal/<id>.json`, a plan being applied (spec 03 §14.5 step 4)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import msgspec

from mbank.journal import durable
from mbank.journal.layout import MBANK_DIR, QUARANTINE_DIR, WAL_DIR, bank_absolute
from mbank.journal.tree import BadEntry, mbank_for_reading, open_directory


class WalOp(msgspec.Struct, frozen=True):
    """One op of a write-ahead entry, with the pre-image needed to roll it back.

    `mode` (mbank's addition to §14.5's shape) is the pre-image's permission bits, so that a
    rolled-back delete comes back with the bits it had.
    """

    path: str
    kind: str
    before: str | None
    after: str | None
    preimage: bytes | None
    mode: int | None = None


class WalDir(msgspec.Struct, frozen=True):
    """A directory an apply may remove once its deletes leave it empty, with its bits."""

    path: str
    mode: int


class WalEntry(msgspec.Struct, frozen=True):
    """`.mbank/wal/<id>.json`: a plan being applied (§14.5 step 4).

    `pruned` (mbank's addition to §14.5's shape, absent from older entries) lists the
    directories this apply may remove once its deletes leave them empty (undo does, see
    `apply_plan`), deepest first; recovery re-creates the missing ones before it restores
    the files that lived in them.
    """

    id: str
    tool: str
    time: str
    ops: tuple[WalOp, ...]
    dirs: tuple[str, ...]
    pruned: tuple[WalDir, ...] = ()


def _names_in(root: str, directory: str) -> list[str]:
    """The names in `.mbank/<directory>/`, none when it is missing or not a real directory."""
    with mbank_for_reading(root) as base:
        if base is None:
            return []
        try:
            descriptor = open_directory(base, directory, f"{MBANK_DIR}/{directory}")
        except (OSError, BadEntry):
            return []
        try:
            return sorted(os.listdir(descriptor))
        finally:
            os.close(descriptor)


def is_entry_name(name: str) -> bool:
    """`<id>.json`: a write-ahead entry (its temp file, `.<id>.json.tmp`, is not one)."""
    return name.endswith(".json") and not name.startswith(".")


def pending_wal_ids(root: str) -> list[str]:
    """The ids of write-ahead entries on disk (interrupted writes), in name order."""
    return [name[: -len(".json")] for name in _names_in(root, WAL_DIR) if is_entry_name(name)]


def quarantined(root: str) -> list[str]:
    """The names in `.mbank/quarantine/`: entries recovery could not settle (writes stop)."""
    return _names_in(root, QUARANTINE_DIR)


def interrupted_notices(root: str) -> list[str]:
    """What a read-only subcommand prints on stderr for each interrupted write (§14.6).

    Recovery belongs to the next write (issue 13: reads write nothing, a server start
    neither), so that is what the notice points to.
    """
    notices = [
        f"mbank: a write was interrupted ({entry}); the next write to this bank rolls it back."
        for entry in pending_wal_ids(root)
    ]
    if quarantined(root):
        notices.append(
            "mbank: writes to this bank are stopped until a person checks .mbank/quarantine/ "
            "(a write-ahead entry recovery could not settle)."
        )
    return notices


def recreate_dirs(root: str, removed: Sequence[WalDir]) -> None:
    """Re-create removed directories that are missing, shallowest first, with their bits."""
    for entry in sorted(removed, key=lambda item: item.path.count("/")):
        absolute = bank_absolute(root, entry.path)
        if os.path.lexists(absolute):
            continue
        os.mkdir(absolute, entry.mode)
        os.chmod(absolute, entry.mode)
        durable.fsync_dir(os.path.dirname(absolute))
