"""The write tools' shells: one thin function per tool, shared by the CLI and the MCP server.

Each function gathers the outside facts its gates need, runs the write engine
(`mbank.writes.execute`) with the tool's pure `gate_and_plan`, and returns the tool's full
result dict (camelCase, in spec order) with the fields every write result has (spec 03
§1.3). No logic lives here that a surface would not share.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mbank.gates.documents import GONE_FACT, INNER_ROOT_DIR_FACT
from mbank.gates.paths import ON_DISK_FACT, PathOnDisk
from mbank.journal import where_did_it_go
from mbank.model import RefusalError, sha256_hex
from mbank.paths import is_within
from mbank.snapshot import Bank, Snapshot
from mbank.writes import GateAndPlan, GatherFacts, WriteOutcome, execute

# --------------------------------------------------------------------------------------------
# Outside facts
# --------------------------------------------------------------------------------------------


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


def bank_path_or_none(bank: Bank, snapshot: Snapshot, given: Any) -> str | None:
    """The bank path a caller's path names, or None when the gate will refuse it anyway."""
    if not isinstance(given, str):
        return None
    try:
        return bank.relative(given, snapshot)
    except RefusalError:
        return None


def on_disk_facts(bank: Bank, paths: Iterable[str | None]) -> dict[str, PathOnDisk]:
    """`{bank path: PathOnDisk}` for each path given (None entries skipped)."""
    return {path: path_on_disk(bank, path) for path in paths if path is not None}


def gone_facts(bank: Bank, snapshot: Snapshot, paths: Iterable[str | None]) -> dict[str, str]:
    """The journal's "where did it go" for each path that is not a document (§14.9)."""
    notes: dict[str, str] = {}
    for path in paths:
        if path is None or path in snapshot.docs:
            continue
        note = where_did_it_go(bank.root, path)
        if note:
            notes[path] = note
    return notes


ShapeResult = Callable[
    [Mapping[str, Any], bool, Mapping[str, Any], tuple[str, ...]], dict[str, Any]
]


def _run_write(
    bank: Bank,
    tool: str,
    arguments: Mapping[str, Any],
    gate_and_plan: GateAndPlan,
    gather: GatherFacts,
    dry_run: bool,
    engine: Mapping[str, Any],
    **options: Any,
) -> WriteOutcome:
    """Run a write through the engine; a `dryRun` argument joins the `dry_run` flag."""
    args = dict(arguments)
    dry = dry_run or bool(args.pop("dryRun", False))
    return execute(
        bank, tool, args, gate_and_plan, dry_run=dry, gather_facts=gather, **options, **engine
    )


def _shaped(outcome: WriteOutcome, shape: ShapeResult) -> dict[str, Any]:
    """The tool's result from its reducer's `<tool>_result(result, applied, common, warnings)`."""
    return shape(outcome.result, outcome.applied, outcome.common_fields(), outcome.warnings)


# --------------------------------------------------------------------------------------------
# bank_create, bank_promote, bank_discard (spec 03 §4, §10, §11)
# --------------------------------------------------------------------------------------------


def create_facts(bank: Bank, arguments: Mapping[str, Any]) -> GatherFacts:
    """The outside facts of `bank_create`: the target's and its section index's disk state,
    the root-name directory, and the shipped templates."""
    from mbank.catalogue import section_for
    from mbank.reducers.create import inbox_target
    from mbank.reducers.templates import TEMPLATES_FACT
    from mbank.shipped_files import shipped_templates

    def gather(snapshot: Snapshot) -> dict[str, Any]:
        target = bank_path_or_none(bank, snapshot, arguments.get("path"))
        paths: list[str | None] = []
        if target is not None:
            if arguments.get("inbox"):
                target = inbox_target(target)
            section = section_for(target)
            paths = [target, f"{section.dir}/README.md" if section is not None else None]
        return {
            INNER_ROOT_DIR_FACT: bank.has_inner_root_dir(),
            TEMPLATES_FACT: shipped_templates(),
            ON_DISK_FACT: on_disk_facts(bank, paths),
        }

    return gather


def create(
    bank: Bank, arguments: Mapping[str, Any], *, dry_run: bool = False, **engine: Any
) -> dict[str, Any]:
    """`bank_create`: a governed document from its template, registered (`CreateResult`)."""
    from mbank.reducers.create import TOOL, create_result, gate_and_plan

    outcome = _run_write(
        bank, TOOL, arguments, gate_and_plan, create_facts(bank, arguments), dry_run, engine
    )
    return _shaped(outcome, create_result)


def promote_facts(bank: Bank, arguments: Mapping[str, Any]) -> GatherFacts:
    """The outside facts of `bank_promote`: where a gone note went, the destination's disk
    state, the root-name directory, and the shipped templates."""
    from mbank.reducers.templates import TEMPLATES_FACT
    from mbank.shipped_files import shipped_templates

    def gather(snapshot: Snapshot) -> dict[str, Any]:
        source = bank_path_or_none(bank, snapshot, arguments.get("path"))
        destination = bank_path_or_none(bank, snapshot, arguments.get("to"))
        return {
            INNER_ROOT_DIR_FACT: bank.has_inner_root_dir(),
            TEMPLATES_FACT: shipped_templates(),
            GONE_FACT: gone_facts(bank, snapshot, [source]),
            ON_DISK_FACT: on_disk_facts(bank, [destination]),
        }

    return gather


def promote(
    bank: Bank, arguments: Mapping[str, Any], *, dry_run: bool = False, **engine: Any
) -> dict[str, Any]:
    """`bank_promote`: a note out of `_inbox/` as a governed, registered document."""
    from mbank.reducers.promote import TOOL, gate_and_plan, promote_result

    outcome = _run_write(
        bank, TOOL, arguments, gate_and_plan, promote_facts(bank, arguments), dry_run, engine
    )
    return _shaped(outcome, promote_result)


def discard_facts(bank: Bank, arguments: Mapping[str, Any]) -> GatherFacts:
    """The outside facts of `bank_discard`, as of every write to the one existing document its
    `path` argument names (`document_facts`)."""
    return document_facts(bank, arguments.get("path"))


def discard(
    bank: Bank, arguments: Mapping[str, Any], *, dry_run: bool = False, **engine: Any
) -> dict[str, Any]:
    """`bank_discard`: delete a note from `_inbox/`, the reason kept in the journal."""
    from mbank.reducers.discard import TOOL, discard_result, gate_and_plan

    outcome = _run_write(
        bank, TOOL, arguments, gate_and_plan, discard_facts(bank, arguments), dry_run, engine
    )
    return _shaped(outcome, discard_result)


# --------------------------------------------------------------------------------------------
# edit, update_section, rewrite, set_status, set_field (spec 03 §5–§9)
# --------------------------------------------------------------------------------------------


def document_facts(bank: Bank, given: Any) -> GatherFacts:
    """The outside facts of a write to one existing document (gates/documents.py).

    Whether `<root>/<root name>/` is a real directory (spec 01 §2.2 step 8), and, when the
    path names no document, the journal's "where did it go" sentence for it (spec 03 §14.9).
    """

    def gather(snapshot: Snapshot) -> dict[str, Any]:
        # a path the gate will refuse anyway has no "where did it go"
        path = bank_path_or_none(bank, snapshot, given)
        return {
            INNER_ROOT_DIR_FACT: bank.has_inner_root_dir(),
            GONE_FACT: gone_facts(bank, snapshot, [path]),
        }

    return gather


def finished_result(
    outcome: WriteOutcome, done: str, *, warnings_always: bool = False
) -> dict[str, Any]:
    """A tool's full result: its fields in spec order, the done-flag, warnings, the common fields.

    `warnings` stays where the reducer placed it when the tool always has it
    (`warnings_always`); otherwise it is appended only when non-empty (spec 03 §1.3).
    """
    result = dict(outcome.result)
    result[done] = outcome.applied
    if warnings_always or outcome.warnings:
        result["warnings"] = list(outcome.warnings)
    result.update(outcome.common_fields())
    return result


def _document_write(
    bank: Bank,
    tool: str,
    arguments: Mapping[str, Any],
    gate_and_plan: GateAndPlan,
    dry_run: bool,
    engine: dict[str, Any],
) -> WriteOutcome:
    gather = document_facts(bank, arguments.get("path"))
    return _run_write(bank, tool, arguments, gate_and_plan, gather, dry_run, engine)


def edit(
    bank: Bank, arguments: Mapping[str, Any], *, dry_run: bool = False, **engine: Any
) -> dict[str, Any]:
    """`bank_edit`: replace one exact fragment of a body (spec 03 §5)."""
    from mbank.reducers.edit import TOOL, gate_and_plan

    outcome = _document_write(bank, TOOL, arguments, gate_and_plan, dry_run, engine)
    return finished_result(outcome, "edited")


def update_section(
    bank: Bank, arguments: Mapping[str, Any], *, dry_run: bool = False, **engine: Any
) -> dict[str, Any]:
    """`bank_update_section`: replace or append to one named section (spec 03 §6)."""
    from mbank.reducers.update_section import TOOL, gate_and_plan

    outcome = _document_write(bank, TOOL, arguments, gate_and_plan, dry_run, engine)
    return finished_result(outcome, "updated")


def rewrite(
    bank: Bank, arguments: Mapping[str, Any], *, dry_run: bool = False, **engine: Any
) -> dict[str, Any]:
    """`bank_rewrite`: replace the whole body, frontmatter and index entry kept (spec 03 §7)."""
    from mbank.reducers.rewrite import TOOL, gate_and_plan

    outcome = _document_write(bank, TOOL, arguments, gate_and_plan, dry_run, engine)
    return finished_result(outcome, "rewritten", warnings_always=True)


def set_status(
    bank: Bank, arguments: Mapping[str, Any], *, dry_run: bool = False, **engine: Any
) -> dict[str, Any]:
    """`bank_set_status`: a lifecycle transition through the gates (spec 03 §8)."""
    from mbank.reducers.set_status import TOOL, gate_and_plan

    outcome = _document_write(bank, TOOL, arguments, gate_and_plan, dry_run, engine)
    return finished_result(outcome, "changed", warnings_always=True)


def set_field(
    bank: Bank, arguments: Mapping[str, Any], *, dry_run: bool = False, **engine: Any
) -> dict[str, Any]:
    """`bank_set_field`: one scalar frontmatter value (spec 03 §9)."""
    from mbank.reducers.set_field import TOOL, gate_and_plan

    outcome = _document_write(bank, TOOL, arguments, gate_and_plan, dry_run, engine)
    return finished_result(outcome, "changed")


# --------------------------------------------------------------------------------------------
# bank_init, bank_materialize_flows (spec 03 §12, §13)
# --------------------------------------------------------------------------------------------


def seed_target_facts(bank: Bank, snapshot: Snapshot, paths: Iterable[str]) -> dict[str, Any]:
    """`{bank path: SeedTarget}`: what the disk holds where init or materialize would write.

    A path that is a symbolic link counts as escaping (the apply step refuses to write
    through one); the pre-image hash is read only for a regular file that is not a document
    (the snapshot already holds every document's).
    """
    from mbank.gates.init import SeedTarget

    found: dict[str, Any] = {}
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


def init_facts(bank: Bank) -> GatherFacts:
    """The outside facts of `bank_init`: whether the root is something other than a
    directory, the package's starter set and where it was looked for, and the disk state of
    every seed path."""
    from mbank.gates.init import ROOT_NOT_DIRECTORY_FACT, SEED_TARGETS_FACT
    from mbank.reducers.init import SEED_PATHS, STARTER_FACT, STARTER_LOCATION_FACT
    from mbank.shipped_files import starter_files, starter_location

    def gather(snapshot: Snapshot) -> dict[str, Any]:
        return {
            ROOT_NOT_DIRECTORY_FACT: os.path.lexists(bank.root) and not os.path.isdir(bank.root),
            STARTER_FACT: starter_files(),
            STARTER_LOCATION_FACT: starter_location(),
            SEED_TARGETS_FACT: seed_target_facts(bank, snapshot, SEED_PATHS),
        }

    return gather


def init(
    bank: Bank, arguments: Mapping[str, Any], *, dry_run: bool = False, **engine: Any
) -> dict[str, Any]:
    """`bank_init`: seed the 24 starter documents where there is no bank (spec 03 §12).

    The root is created by the write itself, once every check has passed (a dry run or a
    refusal creates nothing). `engine` must not carry `create_root`.
    """
    from mbank.reducers.init import TOOL, gate_and_plan, init_result

    outcome = _run_write(
        bank, TOOL, arguments, gate_and_plan, init_facts(bank), dry_run, engine, create_root=True
    )
    return _shaped(outcome, init_result)


def materialize_facts(bank: Bank) -> GatherFacts:
    """The outside facts of `bank_materialize_flows`: the shipped templates and the disk
    state of every path they would be copied to."""
    from mbank.gates.init import SEED_TARGETS_FACT
    from mbank.reducers.templates import TEMPLATES_FACT
    from mbank.shipped_files import shipped_templates

    def gather(snapshot: Snapshot) -> dict[str, Any]:
        templates = shipped_templates()
        return {
            TEMPLATES_FACT: templates,
            SEED_TARGETS_FACT: seed_target_facts(bank, snapshot, templates),
        }

    return gather


def materialize_flows(
    bank: Bank, arguments: Mapping[str, Any], *, dry_run: bool = False, **engine: Any
) -> dict[str, Any]:
    """`bank_materialize_flows`: copy the shipped templates into `flows/templates/` (§13).

    A post-check refusal gains one line saying what to do: pass `force`, or restore the
    templates' sources first.
    """
    from mbank.paths import refuse
    from mbank.reducers.init import init_result
    from mbank.reducers.materialize_flows import POSTCHECK_HINT, TOOL, gate_and_plan

    try:
        outcome = _run_write(
            bank, TOOL, arguments, gate_and_plan, materialize_facts(bank), dry_run, engine
        )
    except RefusalError as exc:
        if exc.refusal.rule != "postcheck":
            raise
        raise refuse("postcheck", f"{exc.refusal.message}\n{POSTCHECK_HINT}") from None
    return _shaped(outcome, init_result)
