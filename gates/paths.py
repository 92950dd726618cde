"""Gates on a path a write will create: the walk must see it, and nothing may be overwritten.

Pure (spec 03 §2.1 and §4.3 step 4, spec 01 §2.3). Two facts about the disk are outside the
snapshot and are gathered by the tool's shell into its facts' `on_disk` map, one `PathOnDisk`
per bank path the plan may create: whether anything exists there (a file the walk does not
index — a symlink, a non-markdown name — still blocks a create), and whether the path's real
location leaves the bank through a symbolic link. A gate asking about a path the shell did not
gather is a bug in the tool's `fact_paths`, and fails loudly (`FactNotGathered`) rather than
reading the path as free.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

import msgspec

from mbank.paths import check_linkable, check_write_target, refuse, shown
from mbank.projection import Snapshot

FactT = TypeVar("FactT", bound=msgspec.Struct)


class FactNotGathered(LookupError):
    """A gate asked for a path fact the tool's shell was never told to gather."""


class PathOnDisk(msgspec.Struct, frozen=True):
    """What the disk says about a bank path a write may create.

    `exists`: something is there (`os.path.lexists`). `escapes`: the real path of the file,
    or of its deepest existing ancestor directory when it does not exist yet, is not inside
    the bank's real root (spec 01 §2.3, `path-symlink`).
    """

    exists: bool = False
    escapes: bool = False


def path_fact(facts: Mapping[str, FactT], path: str) -> FactT:
    """The shell's fact for a bank path; `FactNotGathered` when it was not gathered."""
    try:
        return facts[path]
    except KeyError:
        raise FactNotGathered(f"no outside fact was gathered for {path}") from None


def refuse_symlink_escape(on_disk: Mapping[str, PathOnDisk], path: str) -> None:
    """`path-symlink`: the path leads outside the bank through a symbolic link."""
    if path_fact(on_disk, path).escapes:
        raise refuse("path-symlink", f"Path leads outside the bank through a symbolic link: {path}")


# Linux's PATH_MAX, the terminating NUL included: no longer path can be created.
PATH_MAX = 4096


def refuse_too_long(root: str, path: str) -> None:
    """`path-too-long`: the new file's absolute path is past what the system can create (the
    open would fail mid-plan otherwise, issue 13 item 8)."""
    size = len(f"{root}/{path}".encode("utf-8", "surrogatepass"))
    if size >= PATH_MAX:
        raise refuse(
            "path-too-long",
            f"Path is {size} bytes with the bank root, past the {PATH_MAX - 1} a file path may "
            f"have: {shown(path[:40])}…. Use a shorter path.",
        )


def refuse_existing(snapshot: Snapshot, on_disk: Mapping[str, PathOnDisk], path: str) -> None:
    """`exists` for a document at the path; `exists-unindexed` for anything else there."""
    if path in snapshot.docs:
        raise refuse("exists", f"Refusing to overwrite an existing document: {path}")
    if path_fact(on_disk, path).exists:
        raise refuse(
            "exists-unindexed",
            f"A file already exists at {path} but is not indexed. Refusing to overwrite it.",
        )


def check_new_document_path(
    snapshot: Snapshot, on_disk: Mapping[str, PathOnDisk], path: str
) -> None:
    """The target checks of `bank_create` step 4 (also `bank_promote`'s destination), in order.

    `path-not-md`, `path-hidden`, `path-skipped-dir`, `path-unlinkable`, `path-too-long`,
    `path-symlink`, `exists`, `exists-unindexed`.
    """
    check_write_target(path, must_be_md=True)
    check_linkable(path)
    refuse_too_long(snapshot.root, path)
    refuse_symlink_escape(on_disk, path)
    refuse_existing(snapshot, on_disk, path)
