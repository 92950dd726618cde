"""Gates on a path a write will create: the walk must see it, and nothing may be overwritten.

Pure (spec 03 §2.1 and §4.3 step 4, spec 01 §2.3). Two facts about the disk are outside the
snapshot and are gathered by the tool's shell into `intent.facts[ON_DISK_FACT]`, one
`PathOnDisk` per bank path the plan may create: whether anything exists there (a file the
walk does not index — a symlink, a non-markdown name — still blocks a create), and whether
the path's real location leaves the bank through a symbolic link. A path with no fact is
taken to be free and inside the bank (the snapshot's own view).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

import msgspec

from mbank.model import Intent
from mbank.paths import check_write_target, refuse
from mbank.projection import Snapshot

FactT = TypeVar("FactT", bound=msgspec.Struct)

# intent.facts key (filled by the tool's shell): {bank path: PathOnDisk}
ON_DISK_FACT = "onDisk"


class PathOnDisk(msgspec.Struct, frozen=True):
    """What the disk says about a bank path a write may create.

    `exists`: something is there (`os.path.lexists`). `escapes`: the real path of the file,
    or of its deepest existing ancestor directory when it does not exist yet, is not inside
    the bank's real root (spec 01 §2.3, `path-symlink`).
    """

    exists: bool = False
    escapes: bool = False


def path_fact(intent: Intent, key: str, path: str, kind: type[FactT]) -> FactT:
    """The shell's `kind` fact for a bank path in `intent.facts[key]`, else `kind()`: the
    snapshot's default (free, inside the bank)."""
    facts = intent.facts.get(key)
    if isinstance(facts, Mapping):
        fact = facts.get(path)
        if isinstance(fact, kind):
            return fact
    return kind()


def on_disk(intent: Intent, path: str) -> PathOnDisk:
    """The shell's fact for a bank path, or the snapshot's default (free, inside the bank)."""
    return path_fact(intent, ON_DISK_FACT, path, PathOnDisk)


def refuse_symlink_escape(intent: Intent, path: str) -> None:
    """`path-symlink`: the path leads outside the bank through a symbolic link."""
    if on_disk(intent, path).escapes:
        raise refuse("path-symlink", f"Path leads outside the bank through a symbolic link: {path}")


def refuse_existing(snapshot: Snapshot, intent: Intent, path: str) -> None:
    """`exists` for a document at the path; `exists-unindexed` for anything else there."""
    if path in snapshot.docs:
        raise refuse("exists", f"Refusing to overwrite an existing document: {path}")
    if on_disk(intent, path).exists:
        raise refuse(
            "exists-unindexed",
            f"A file already exists at {path} but is not indexed. Refusing to overwrite it.",
        )


def check_new_document_path(snapshot: Snapshot, intent: Intent, path: str) -> None:
    """The target checks of `bank_create` step 4 (also `bank_promote`'s destination), in order.

    `path-not-md`, `path-hidden`, `path-skipped-dir`, `path-symlink`, `exists`,
    `exists-unindexed`.
    """
    check_write_target(path, must_be_md=True)
    refuse_symlink_escape(intent, path)
    refuse_existing(snapshot, intent, path)
