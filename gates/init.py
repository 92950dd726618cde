"""Gates of `bank_init` and `bank_materialize_flows`: seeding only where nothing is overwritten
by accident.

Pure (spec 03 §12, §13). Two outside facts come from the tool's shell in its facts Struct:
whether the bank root exists as something other than a directory (`root_not_directory`),
and, for every path the seed would write, what the disk holds there (`seed_targets`, one
`SeedTarget` per bank path; asking about a path that was not gathered is a bug and fails).

Choices where the spec is silent:

- The `name` checks look at the name as the root index will use it, stripped of surrounding
  whitespace: a trailing newline is not a second line, and the length counted is the length
  of the heading. A line break is anything `str.splitlines` breaks at (`\\n`, `\\r`, U+2028 …).
- A seed path that leads out of the bank through a symbolic link, or is itself a symbolic
  link, is refused with `path-symlink`, as the apply step would refuse it (§2.1).
- Something at a seed path that is not a document (an unreadable file, a directory) is never
  overwritten, `force` or not: `exists-unindexed`, the message `bank_create` uses. A regular
  file there that the walk skipped is replaced only with `force`, its pre-image read by the
  shell.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from mbank.gates.paths import path_fact
from mbank.paths import refuse
from mbank.projection import Snapshot

NAME_LIMIT = 100
TEMPLATES_PREFIX = "flows/templates/"
TEMPLATES_INDEX = "flows/templates/README.md"


class SeedTarget(msgspec.Struct, frozen=True):
    """What the disk holds at a bank path `init`/`materialize_flows` would write.

    `exists`: something is there (`os.path.lexists`). `escapes`: the path is a symbolic link,
    or its real location (or that of its deepest existing ancestor) is outside the bank.
    `sha256`: the hash of the bytes there when it is a readable regular file (None otherwise).
    """

    exists: bool = False
    escapes: bool = False
    sha256: str | None = None


# --------------------------------------------------------------------------------------------
# bank_init (§12)
# --------------------------------------------------------------------------------------------


def check_name(name: str) -> None:
    """`name-required`, `name-multiline`, `name-too-long`, in that order (§12 gate 1)."""
    project = name.strip()
    if not project:
        raise refuse("name-required", "`name` is required: it goes into the root index.")
    if len(project.splitlines()) > 1:
        raise refuse("name-multiline", "`name` must fit on one line: it is the project's name.")
    if len(project) > NAME_LIMIT:
        raise refuse(
            "name-too-long",
            f"`name` is {len(project)} characters; keep it to {NAME_LIMIT} or fewer: it is a "
            "heading, not a description.",
        )


def refuse_root_not_directory(root_not_directory: bool, root: str) -> None:
    """`root-not-directory`: the root exists as a file (or anything but a directory)."""
    if root_not_directory:
        raise refuse("root-not-directory", f"The bank root {root} exists and is not a directory.")


def refuse_bank_not_empty(count: int, force: bool) -> None:
    """`bank-not-empty`: documents are there and `force` was not given (§12 gate 3)."""
    if count >= 1 and not force:
        raise refuse(
            "bank-not-empty",
            f"This bank already holds {count} documents. Refusing to seed over them; pass "
            "force to override.",
        )


def seeding_over_warning(count: int, force: bool) -> tuple[str, ...]:
    """The warning of a forced init over existing documents (§12 gate 5)."""
    if force and count >= 1:
        return (f"Seeding over {count} existing documents.",)
    return ()


# --------------------------------------------------------------------------------------------
# bank_materialize_flows (§13)
# --------------------------------------------------------------------------------------------


def owned_templates(snapshot: Snapshot) -> int:
    """N of §13: documents under `flows/templates/` other than its `README.md`."""
    return sum(
        1 for path in snapshot.docs if path.startswith(TEMPLATES_PREFIX) and path != TEMPLATES_INDEX
    )


def refuse_templates_owned(count: int, force: bool) -> None:
    """`templates-owned`: the bank already holds templates and `force` was not given."""
    if count >= 1 and not force:
        raise refuse(
            "templates-owned",
            f"flows/templates/ already holds {count} documents of its own. Refusing to "
            "overwrite them; pass force to override.",
        )


def overwrote_warning(count: int, force: bool, dry_run: bool) -> tuple[str, ...]:
    """The warning of a forced materialisation over held templates (§13 gate 2)."""
    if not force or count < 1:
        return ()
    if dry_run:
        return (f"Would overwrite {count} documents that flows/ already held.",)
    return (f"Overwrote {count} documents that flows/ already held.",)


# --------------------------------------------------------------------------------------------
# Every path a seed writes (§2.1)
# --------------------------------------------------------------------------------------------


def check_seed_path(
    snapshot: Snapshot, seed_targets: Mapping[str, SeedTarget], path: str, force: bool
) -> str | None:
    """Refuse a seed path that cannot be written; return the pre-image hash to replace, if any.

    None means the path is free (a create). A document there is replaced (the callers' gates
    have already refused it without `force`); a readable regular file the walk did not index
    is replaced only with `force`.
    """
    target = path_fact(seed_targets, path)
    if target.escapes:
        raise refuse("path-symlink", f"Path leads outside the bank through a symbolic link: {path}")
    doc = snapshot.docs.get(path)
    if doc is not None:
        return doc.sha256
    if not target.exists:
        return None
    if not force or target.sha256 is None:
        raise refuse(
            "exists-unindexed",
            f"A file already exists at {path} but is not indexed. Refusing to overwrite it.",
        )
    return target.sha256
