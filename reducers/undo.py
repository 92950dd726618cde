"""Planning `bank_undo` / `mbank undo`: the inverse of one journal record (spec 03 §14.10).

Undo is a stack (issue 14): without an id it reverts the newest write that is not itself an
undo and has not been undone, so N undos revert the last N writes; `id` names any record,
an undo included (undoing an undo re-applies the write it reverted).

Pure. The shell gathers the outside facts (`journal.undo_facts`): the journal's records, the
current sha256 of every file the target record touched, and the pre-images still in
`.mbank/objects/`. From those this module refuses, in the spec's order, or returns the plan:
the record's ops in reverse order, each inverted, each with the record's post-image as its
precondition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import msgspec

from mbank.model import (
    AnyFileOp,
    CreateFile,
    DeleteFile,
    Intent,
    JournalNotes,
    JournalRecord,
    Plan,
    PlanOutcome,
    ReplaceFile,
)
from mbank.paths import refuse
from mbank.projection import Snapshot
from mbank.reducers.report import delta_lines
from mbank.write_declaration import CliArg, Published, WriteTool

TOOL = "bank_undo"
UNDO_TOOL = "undo"  # the plan's and the journal record's tool name (spec 03 §14.2)
ACTIONS = {"replace": "restored", "create": "deleted", "delete": "recreated"}


class UndoArgs(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The arguments of `bank_undo`: the record to revert (None: the newest write standing)."""

    id: Annotated[str | None, Published(words="undoId")] = None
    dry_run: bool = False


class UndoJournal(msgspec.Struct, frozen=True):
    """What the journal holds for undo: the records (oldest first), the current sha256 of
    each path the target touched (None: absent) and the pre-images kept (sha256 → bytes)."""

    records: tuple[JournalRecord, ...]
    current: dict[str, str | None]
    objects: dict[str, bytes]


class UndoFacts(msgspec.Struct, frozen=True):
    """The outside facts of `mbank undo`."""

    undo: UndoJournal


def _is_undone(record_id: str, undoers: Mapping[str, list[str]], seen: frozenset[str]) -> bool:
    # A record is undone when some undo of it is not itself undone (an undo of an undo
    # re-applies the original). `seen` guards against a malformed journal that loops.
    for undo_id in undoers.get(record_id, []):
        if undo_id in seen:
            continue
        if not _is_undone(undo_id, undoers, seen | {undo_id}):
            return True
    return False


def _standing_undo(record: JournalRecord, records: Sequence[JournalRecord]) -> str | None:
    """The newest undo of `record` that has not itself been undone, if any."""
    undoers: dict[str, list[str]] = {}
    for candidate in records:
        if candidate.undo_of is not None:
            undoers.setdefault(candidate.undo_of, []).append(candidate.id)
    for undo_id in reversed(undoers.get(record.id, [])):
        if not _is_undone(undo_id, undoers, frozenset({record.id, undo_id})):
            return undo_id
    return None


def undo_target(records: Sequence[JournalRecord], record_id: str | None) -> JournalRecord | None:
    """The record an undo reverts: `record_id`'s, else the newest write that is not an undo
    and is not undone (None: no such record)."""
    if record_id is not None:
        return next((record for record in records if record.id == record_id), None)
    for record in reversed(records):
        if record.undo_of is None and _standing_undo(record, records) is None:
            return record
    return None


def plan_undo(
    records: Sequence[JournalRecord],
    record_id: str | None,
    current: Mapping[str, str | None],
    objects: Mapping[str, bytes],
) -> PlanOutcome:
    """The plan reverting `record_id` (or the newest write standing), or the spec's refusal.

    `current` maps each path the record touched to its sha256 now (None: absent); `objects`
    maps sha256 → pre-image bytes for the pre-images available.
    """
    if not records:
        raise refuse("undo-empty", "Nothing to undo: the journal is empty.")
    found = undo_target(records, record_id)
    if found is None and record_id is not None:
        raise refuse("undo-unknown", f"No journal record has id {record_id}.")
    if found is None:
        raise refuse(
            "undo-nothing-left",
            "Nothing to undo: every write in the journal is already undone. To re-apply one, "
            "undo its undo by id (memorybank://journal, or mbank history, lists them).",
        )
    target = found
    standing = _standing_undo(target, records)
    if standing is not None:
        raise refuse("undo-already", f"{target.id} was already undone by {standing}.")
    moved = [op.path for op in target.ops if current.get(op.path) != op.after]
    if moved:
        raise refuse(
            "undo-moved",
            f"Cannot undo {target.id}: these files changed after it was applied: "
            + ", ".join(moved)
            + ".",
        )
    for op in target.ops:
        if op.before is not None and op.before not in objects:
            raise refuse(
                "undo-missing-object",
                f"Cannot undo {target.id}: the earlier content of {op.path} is no longer in "
                ".mbank/objects.",
            )
    ops: list[AnyFileOp] = []
    files: list[dict[str, str]] = []
    for op in reversed(target.ops):
        if op.kind == "create":
            assert op.after is not None
            ops.append(DeleteFile(path=op.path, before=op.after))
        elif op.kind == "replace":
            assert op.before is not None and op.after is not None
            ops.append(
                ReplaceFile(
                    path=op.path, content=objects[op.before], before=op.after, after=op.before
                )
            )
        else:
            assert op.before is not None
            ops.append(CreateFile(path=op.path, content=objects[op.before], after=op.before))
        files.append({"path": op.path, "action": ACTIONS[op.kind]})
    return PlanOutcome(
        plan=Plan(UNDO_TOOL, tuple(ops)),
        result={"undone": target.id, "tool": target.tool, "time": target.time, "files": files},
        notes=JournalNotes(undo_of=target.id),
    )


def gate_and_plan_undo(snapshot: Snapshot, intent: Intent[UndoArgs, UndoFacts]) -> PlanOutcome:
    """The engine's entry for undo: the facts come from `journal.undo_facts` via the intent."""
    journal = intent.facts.undo
    return plan_undo(journal.records, intent.args.id, journal.current, journal.objects)


def undo_result(result: Mapping[str, Any], common: Mapping[str, Any]) -> dict[str, Any]:
    """`UndoResult = {undone, tool, time, files, dryRun, diff?, journalId?}` (§14.10)."""
    return {
        "undone": result["undone"],
        "tool": result["tool"],
        "time": result["time"],
        "files": list(result["files"]),
        **common,
    }


def format_undo(result: Mapping[str, Any]) -> str:
    """The human rendering of `mbank undo` (spec 04 §9.3)."""
    verb = "WOULD UNDO" if result["dryRun"] else "UNDONE"
    lines = [f"{verb} {result['undone']} ({result['tool']}, {result['time']})"]
    lines.extend(f"  {entry['action']} {entry['path']}" for entry in result["files"])
    if "journalId" in result:
        lines.append(f"journal: {result['journalId']}")
    text = "\n".join(lines) + "\n" + delta_lines(result)
    if result["dryRun"] and "diff" in result:
        text += "--- diff ---\n" + result["diff"]
    return text


WRITE_TOOL = WriteTool(
    name=TOOL,
    command="undo",
    help="revert the newest write not yet undone (or --id ID)",
    args=UndoArgs,
    facts=UndoFacts,
    gate_and_plan=gate_and_plan_undo,
    shape=lambda result, _applied, common, _warnings: undo_result(result, common),
    render=format_undo,
    cli=(CliArg(("--id",), "id", metavar="ID", help="the record to undo"),),
    journal_name=UNDO_TOOL,
    prunes_dirs_of="undone",
)
