"""The outside facts a write tool's gates need, gathered by the shell before any gate runs.

A tool's facts Struct names the facts it needs by their standard field names
(`mbank.write_declaration.FACT_NAMES`); `gather_facts` gathers exactly those — the cheap ones
first, then the path facts about the paths the tool's pure `fact_paths` names — and builds
the Struct, so every fact a gate reads was gathered (required fields, no defaults).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import msgspec

from mbank.gates.init import SeedTarget
from mbank.gates.paths import PathOnDisk
from mbank.journal import read_records, undo_facts, where_did_it_go
from mbank.model import sha256_hex
from mbank.paths import is_within
from mbank.snapshot import Bank, Snapshot
from mbank.write_declaration import FACT_NAMES, FactPaths, KnownFacts, WriteTool

FactsT = TypeVar("FactsT", bound=msgspec.Struct)


def path_on_disk(bank: Bank, path: str) -> PathOnDisk:
    """Whether something exists at a bank path, and whether its real location leaves the bank.

    For a path that does not exist yet, the real location is that of its deepest existing
    ancestor (spec 01 §2.3, `path-symlink`).
    """
    absolute = os.path.join(bank.root, *path.split("/"))
    exists = os.path.lexists(absolute)
    probe = absolute
    while not os.path.lexists(probe):
        if probe == bank.root or os.path.dirname(probe) == probe:
            # Not even the root exists: nothing on disk can lead outside it, and the engine
            # refuses a write to a missing root with its own message (`root-missing`).
            return PathOnDisk(exists=exists, escapes=False)
        probe = os.path.dirname(probe)
    escapes = not is_within(os.path.realpath(probe), bank.real_root)
    return PathOnDisk(exists=exists, escapes=escapes)


def gone_facts(bank: Bank, snapshot: Snapshot, paths: Iterable[str]) -> dict[str, str]:
    """The journal's "where did it go" for each path that is not a document (§14.9)."""
    notes: dict[str, str] = {}
    for path in paths:
        if path in snapshot.docs:
            continue
        note = where_did_it_go(bank.root, path)
        if note:
            notes[path] = note
    return notes


def seed_target_facts(
    bank: Bank, snapshot: Snapshot, paths: Iterable[str]
) -> dict[str, SeedTarget]:
    """`{bank path: SeedTarget}`: what the disk holds where init or materialize would write.

    A path that is a symbolic link counts as escaping (the apply step refuses to write
    through one); the pre-image hash is read only for a regular file that is not a document
    (the snapshot already holds every document's).
    """
    found: dict[str, SeedTarget] = {}
    for path in paths:
        absolute = os.path.join(bank.root, *path.split("/"))
        exists = os.path.lexists(absolute)
        # A root that does not exist yet is created by init itself: nothing there can escape.
        escapes = os.path.lexists(bank.root) and (
            path_on_disk(bank, path).escapes or os.path.islink(absolute)
        )
        digest: str | None = None
        if exists and not escapes and path not in snapshot.docs:
            try:
                if os.path.isfile(absolute):
                    with open(absolute, "rb") as handle:
                        digest = sha256_hex(handle.read())
            except OSError:
                digest = None
        found[path] = SeedTarget(exists=exists, escapes=escapes, sha256=digest)
    return found


def _shipped_templates() -> dict[str, str]:
    from mbank.shipped_files import shipped_templates

    return shipped_templates()


class _Gathering:
    """One gathering: the bank, the snapshot, the arguments and, once named, the paths."""

    def __init__(self, bank: Bank, snapshot: Snapshot, args: Any) -> None:
        self.bank = bank
        self.snapshot = snapshot
        self.args = args
        self.paths = FactPaths()

    def root_not_directory(self) -> bool:
        return os.path.lexists(self.bank.root) and not os.path.isdir(self.bank.root)

    def starter(self) -> dict[str, str]:
        from mbank.shipped_files import starter_files

        return starter_files()

    def starter_location(self) -> str:
        from mbank.shipped_files import starter_location

        return starter_location()

    def on_disk(self) -> dict[str, PathOnDisk]:
        return {path: path_on_disk(self.bank, path) for path in self.paths.on_disk}

    def gone(self) -> dict[str, str]:
        return gone_facts(self.bank, self.snapshot, self.paths.gone)

    def seed_targets(self) -> dict[str, SeedTarget]:
        return seed_target_facts(self.bank, self.snapshot, self.paths.seed_targets)

    def undo(self) -> Any:
        from mbank.reducers.undo import UndoJournal, undo_target

        # the pure planner picks the target (the undo stack); the facts are about that record
        target = undo_target(read_records(self.bank.root), getattr(self.args, "id", None))
        found = undo_facts(self.bank.root, target.id if target is not None else None)
        return msgspec.convert(found, UndoJournal)


def gather_facts(tool: WriteTool[Any, FactsT], bank: Bank, snapshot: Snapshot, args: Any) -> FactsT:
    """The tool's facts Struct, every field gathered (see the module docstring)."""
    return gather_named(
        tool.facts, lambda known: tool.fact_paths(snapshot, args, known), bank, snapshot, args
    )


def gather_named(
    facts: type[FactsT],
    name_paths: Callable[[KnownFacts], FactPaths],
    bank: Bank,
    snapshot: Snapshot,
    args: Any,
) -> FactsT:
    """Gather the fields of `facts` by name; `name_paths` names the paths of the path facts."""
    wanted = msgspec.structs.fields(facts)
    unknown = [field.name for field in wanted if field.name not in FACT_NAMES]
    if unknown:
        raise TypeError(f"{facts.__name__} asks for facts nobody gathers: {', '.join(unknown)}")
    names = {field.name for field in wanted}
    inner = bank.has_inner_root_dir()
    templates = _shipped_templates() if "templates" in names else {}
    gathering = _Gathering(bank, snapshot, args)
    gathering.paths = name_paths(KnownFacts(inner_root_dir=inner, templates=templates))
    values: dict[str, Any] = {}
    for name in names:
        if name == "inner_root_dir":
            values[name] = inner
        elif name == "templates":
            values[name] = templates
        else:
            values[name] = getattr(gathering, name)()
    return facts(**values)
