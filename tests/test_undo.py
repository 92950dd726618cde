"""`mbank undo` (spec 03 §14.10): the inverse plan, its refusals, and undo as a journaled write."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from planners import (
    Clock,
    Ids,
    no_findings,
    plan_create_registered,
    plan_move,
    plan_new_section,
    small_bank,
    stand_in_findings_for,
    tree_bytes,
)

import mbank.journal as journal
from mbank.model import JournalRecord, RecordOp, RefusalError
from mbank.plan import plan_data, sha256_hex
from mbank.reducers.undo import format_undo, plan_undo
from mbank.snapshot import Bank
from mbank.writes import execute, run_undo

MOVE_ARGS = {"from": "_inbox/n.md", "to": "domain/terms.md", "index": "domain/README.md"}


class Session:
    """One bank with a deterministic clock and ids, for writes and undos."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bank = Bank(root)
        self.clock = Clock()
        self.ids = Ids()

    def promote(self) -> str:
        outcome = execute(
            self.bank,
            "bank_promote",
            MOVE_ARGS,
            plan_move,
            dry_run=False,
            findings_for=no_findings,
            clock=self.clock,
            make_id=self.ids,
        )
        assert outcome.journal_id is not None
        return outcome.journal_id

    def create(self, path: str) -> str:
        outcome = execute(
            self.bank,
            "bank_create",
            {"path": path, "index": "domain/README.md"},
            plan_create_registered,
            dry_run=False,
            findings_for=no_findings,
            clock=self.clock,
            make_id=self.ids,
        )
        assert outcome.journal_id is not None
        return outcome.journal_id

    def undo(self, record_id: str | None = None, *, dry_run: bool = False) -> dict[str, Any]:
        return run_undo(
            self.bank,
            record_id=record_id,
            dry_run=dry_run,
            clock=self.clock,
            make_id=self.ids,
            findings_for=no_findings,
        )


@pytest.fixture
def session(tmp_path: Path) -> Session:
    root = small_bank(tmp_path / "bank")
    (root / "_inbox").mkdir()
    (root / "_inbox" / "n.md").write_bytes(b"---\ntitle: Note\n---\n# Note\n\nCaptured.\n")
    return Session(root)


def test_undo_restores_every_touched_file_byte_for_byte_and_is_journaled(
    session: Session, snapshot: Any
) -> None:
    pre = tree_bytes(session.root)
    promoted = session.promote()
    result = session.undo()
    post = tree_bytes(session.root)
    assert post == pre
    assert result == {
        "undone": promoted,
        "tool": "bank_promote",
        "time": "2026-09-14T12:05:01Z",
        "files": [
            {"path": "_inbox/n.md", "action": "recreated"},
            {"path": "domain/README.md", "action": "restored"},
            {"path": "domain/terms.md", "action": "deleted"},
        ],
        "dryRun": False,
        "journalId": "20260914T120502Z-000002",
    }
    last = journal.record_data(journal.read_records(str(session.root))[-1])
    assert last["tool"] == "undo" and last["via"] == "cli" and last["undoOf"] == promoted
    assert [op["kind"] for op in last["ops"]] == ["create", "replace", "delete"]
    assert {**last, "mbank": "<VERSION>"} == snapshot


def test_an_undo_dry_run_prints_the_diff_and_writes_nothing(
    session: Session, assert_unchanged: Any
) -> None:
    session.promote()
    with assert_unchanged(session.root), journal.bank_lock(str(session.root), "other"):
        result = session.undo(dry_run=True)
    assert result["dryRun"] is True and "journalId" not in result
    assert result["diff"].startswith("--- /dev/null\n+++ b/_inbox/n.md\n")
    assert "--- a/domain/terms.md\n+++ /dev/null\n" in result["diff"]


def test_undo_of_an_undo_by_id_reapplies_the_original(session: Session) -> None:
    # issue 14: an undo without an id never targets an undo; naming one re-applies its write
    session.promote()
    after_promote = tree_bytes(session.root)
    first = session.undo()
    second = session.undo(first["journalId"])
    assert second["undone"] == first["journalId"] and second["tool"] == "undo"
    assert tree_bytes(session.root) == after_promote


def test_a_second_undo_reverts_the_write_before_not_the_first_undo(session: Session) -> None:
    pre = tree_bytes(session.root)
    promoted = session.promote()
    after_promote = tree_bytes(session.root)
    created = session.create("domain/a.md")
    first = session.undo()
    assert first["undone"] == created and tree_bytes(session.root) == after_promote
    second = session.undo()
    assert second["undone"] == promoted and tree_bytes(session.root) == pre


def test_undo_when_every_write_is_undone_is_refused(
    session: Session, assert_unchanged: Any
) -> None:
    session.promote()
    session.undo()
    with assert_unchanged(session.root), pytest.raises(RefusalError) as caught:
        session.undo()
    assert (caught.value.refusal.rule, caught.value.refusal.message) == (
        "undo-nothing-left",
        "Nothing to undo: every write in the journal is already undone. To re-apply one, "
        "undo its undo by id (memorybank://journal, or mbank history, lists them).",
    )


def test_undo_of_a_named_record(session: Session) -> None:
    created = session.create("domain/a.md")
    session.create("domain/b.md")
    with pytest.raises(RefusalError) as caught:
        session.undo(created)  # domain/README.md moved on since
    assert caught.value.refusal.message == (
        f"Cannot undo {created}: these files changed after it was applied: domain/README.md."
    )


def test_a_named_record_whose_files_still_match_is_undone(session: Session) -> None:
    promoted = session.promote()
    (session.root / "domain" / "other.md").write_text("# Other\n", encoding="utf-8")
    result = session.undo(promoted)
    assert result["undone"] == promoted
    assert (session.root / "_inbox" / "n.md").exists()


# --------------------------------------------------------------------------------------------
# Refusals, in order
# --------------------------------------------------------------------------------------------


def test_undo_on_an_empty_journal_is_refused(session: Session, assert_unchanged: Any) -> None:
    with assert_unchanged(session.root), pytest.raises(RefusalError) as caught:
        session.undo()
    assert (caught.value.refusal.rule, caught.value.refusal.message) == (
        "undo-empty",
        "Nothing to undo: the journal is empty.",
    )
    assert not (session.root / ".mbank").exists()


def test_undo_of_an_unknown_id_is_refused(session: Session, assert_unchanged: Any) -> None:
    session.promote()
    with assert_unchanged(session.root), pytest.raises(RefusalError) as caught:
        session.undo("20990101T000000Z-ffffff")
    assert (caught.value.refusal.rule, caught.value.refusal.message) == (
        "undo-unknown",
        "No journal record has id 20990101T000000Z-ffffff.",
    )


def test_undo_of_a_record_already_undone_is_refused(
    session: Session, assert_unchanged: Any
) -> None:
    promoted = session.promote()
    undone = session.undo()["journalId"]
    with assert_unchanged(session.root), pytest.raises(RefusalError) as caught:
        session.undo(promoted)
    assert (caught.value.refusal.rule, caught.value.refusal.message) == (
        "undo-already",
        f"{promoted} was already undone by {undone}.",
    )


def test_a_record_whose_undo_was_undone_can_be_undone_again(session: Session) -> None:
    pre = tree_bytes(session.root)
    promoted = session.promote()
    first = session.undo()
    session.undo(first["journalId"])
    result = session.undo(promoted)
    assert result["undone"] == promoted
    assert tree_bytes(session.root) == pre


def test_undo_names_every_file_that_moved_in_op_order(
    session: Session, assert_unchanged: Any
) -> None:
    promoted = session.promote()
    (session.root / "domain" / "terms.md").write_text("edited\n", encoding="utf-8")
    (session.root / "_inbox" / "n.md").write_text("back by hand\n", encoding="utf-8")
    with assert_unchanged(session.root), pytest.raises(RefusalError) as caught:
        session.undo()
    assert (caught.value.refusal.rule, caught.value.refusal.message) == (
        "undo-moved",
        f"Cannot undo {promoted}: these files changed after it was applied: "
        "domain/terms.md, _inbox/n.md.",
    )


def test_undo_without_the_pre_image_in_objects_is_refused(
    session: Session, assert_unchanged: Any
) -> None:
    promoted = session.promote()
    index_before = journal.read_records(str(session.root))[0].ops[1].before
    assert index_before is not None
    os.unlink(journal.object_path(str(session.root), index_before))
    with assert_unchanged(session.root), pytest.raises(RefusalError) as caught:
        session.undo()
    assert (caught.value.refusal.rule, caught.value.refusal.message) == (
        "undo-missing-object",
        f"Cannot undo {promoted}: the earlier content of domain/README.md is no longer in "
        ".mbank/objects.",
    )


def test_undo_goes_through_the_post_check(session: Session) -> None:
    session.promote()
    (session.root / "domain" / "glossary.md").write_text(
        "---\ntitle: Glossary\nderived_from:\n  - terms.md\n---\n# Glossary\n", encoding="utf-8"
    )
    with pytest.raises(RefusalError) as caught:
        run_undo(session.bank, clock=session.clock, findings_for=stand_in_findings_for)
    assert caught.value.refusal.rule == "postcheck"
    assert "[broken-derived-from] domain/glossary.md" in caught.value.refusal.message


# --------------------------------------------------------------------------------------------
# The pure planner and the human output
# --------------------------------------------------------------------------------------------


def _record(record_id: str, ops: tuple[RecordOp, ...], **extra: Any) -> JournalRecord:
    return JournalRecord(
        1, record_id, "2026-09-14T12:00:00Z", "bank_promote", "mcp", "0.1.0", {}, ops, (), **extra
    )


def test_the_undo_plan_inverts_the_ops_in_reverse_order(snapshot: Any) -> None:
    old_index, new_index, note = b"index\n", b"index\n- [N](n.md)\n", b"# N\n"
    target = _record(
        "20260914T120000Z-000001",
        (
            RecordOp("domain/n.md", "create", None, sha256_hex(note)),
            RecordOp("domain/README.md", "replace", sha256_hex(old_index), sha256_hex(new_index)),
            RecordOp("_inbox/n.md", "delete", sha256_hex(note), None),
        ),
    )
    outcome = plan_undo(
        [target],
        None,
        {
            "domain/n.md": sha256_hex(note),
            "domain/README.md": sha256_hex(new_index),
            "_inbox/n.md": None,
        },
        {sha256_hex(old_index): old_index, sha256_hex(note): note},
    )
    assert [(op.kind, op.path) for op in outcome.plan.ops] == [
        ("create", "_inbox/n.md"),
        ("replace", "domain/README.md"),
        ("delete", "domain/n.md"),
    ]
    assert outcome.notes.undo_of == target.id
    assert plan_data(outcome.plan) == snapshot


def test_the_human_undo_output(snapshot: Any) -> None:
    result = {
        "undone": "20260914T120501Z-000001",
        "tool": "bank_promote",
        "time": "2026-09-14T12:05:01Z",
        "files": [
            {"path": "_inbox/n.md", "action": "recreated"},
            {"path": "domain/terms.md", "action": "deleted"},
        ],
        "dryRun": False,
        "journalId": "20260914T120502Z-000002",
    }
    assert format_undo(result) == (
        "UNDONE 20260914T120501Z-000001 (bank_promote, 2026-09-14T12:05:01Z)\n"
        "  recreated _inbox/n.md\n"
        "  deleted domain/terms.md\n"
        "journal: 20260914T120502Z-000002\n"
    )
    dry = {**result, "dryRun": True, "diff": "--- a/x\n"}
    del dry["journalId"]
    assert format_undo(dry) == snapshot


# --------------------------------------------------------------------------------------------
# The CLI: mbank undo
# --------------------------------------------------------------------------------------------


def test_cli_undo_dry_run_prints_the_diff_and_writes_nothing(
    session: Session, capsys: Any, assert_unchanged: Any
) -> None:
    from mbank.cli import main

    promoted = session.promote()
    with assert_unchanged(session.root):
        assert main(["undo", "--root", str(session.root), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        f"WOULD UNDO {promoted} (bank_promote, 2026-09-14T12:05:01Z)\n"
        "  recreated _inbox/n.md\n  restored domain/README.md\n  deleted domain/terms.md\n"
        "--- diff ---\n--- /dev/null\n+++ b/_inbox/n.md\n"
    )


def test_cli_undo_reverts_and_names_the_new_record(
    session: Session, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mbank.gates.postcheck as postcheck
    from mbank.cli import main

    pre = tree_bytes(session.root)
    promoted = session.promote()
    monkeypatch.setattr(postcheck, "default_findings_for", lambda: no_findings)
    assert main(["undo", "--root", str(session.root), "--id", promoted, "--json"]) == 0
    import json

    result = json.loads(capsys.readouterr().out)
    assert result["undone"] == promoted and result["dryRun"] is False
    last = journal.read_records(str(session.root))[-1]
    assert result["journalId"] == last.id and last.via == "cli" and last.undo_of == promoted
    assert tree_bytes(session.root) == pre


def test_cli_undo_refusal_goes_to_stderr_with_exit_code_1(session: Session, capsys: Any) -> None:
    from mbank.cli import main

    assert main(["undo", "--root", str(session.root)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "mbank: Nothing to undo: the journal is empty.\n"


# --------------------------------------------------------------------------------------------
# Directories: undo removes the ones the undone write created, once they are empty again
# --------------------------------------------------------------------------------------------


def _open_section(session: Session, path: str = "epics/EP-01/charter.md") -> str:
    outcome = execute(
        session.bank,
        "bank_create",
        {"path": path},
        plan_new_section,
        dry_run=False,
        findings_for=no_findings,
        clock=session.clock,
        make_id=session.ids,
    )
    assert outcome.journal_id is not None
    return outcome.journal_id


def test_a_record_names_the_directories_its_write_created(session: Session) -> None:
    _open_section(session)
    record = journal.read_records(str(session.root))[-1]
    assert record.dirs == ("epics", "epics/EP-01")
    assert journal.record_data(record)["dirs"] == ["epics", "epics/EP-01"]
    session.create("domain/plain.md")
    assert "dirs" not in journal.record_data(journal.read_records(str(session.root))[-1])


def test_undo_of_a_write_that_opened_directories_removes_them(session: Session) -> None:
    pre = tree_bytes(session.root)
    _open_section(session)
    session.undo()
    assert tree_bytes(session.root) == pre
    assert not (session.root / "epics").exists()


def test_undo_keeps_a_directory_that_was_there_before_the_undone_write(session: Session) -> None:
    (session.root / "epics").mkdir()
    pre = tree_bytes(session.root)
    _open_section(session)
    assert journal.read_records(str(session.root))[-1].dirs == ("epics/EP-01",)
    session.undo()
    assert tree_bytes(session.root) == pre
    assert (session.root / "epics").is_dir()


def test_undo_keeps_a_created_directory_that_holds_something_else_now(session: Session) -> None:
    _open_section(session)
    (session.root / "epics" / "EP-01" / "notes.txt").write_text("mine\n", encoding="utf-8")
    session.undo()
    assert sorted(p.name for p in (session.root / "epics").rglob("*")) == ["EP-01", "notes.txt"]


def test_undo_of_that_undo_recreates_the_directories_and_names_them(session: Session) -> None:
    _open_section(session)
    after = tree_bytes(session.root)
    first = session.undo()
    session.undo(first["journalId"])
    assert tree_bytes(session.root) == after
    assert journal.read_records(str(session.root))[-1].dirs == ("epics", "epics/EP-01")


@pytest.mark.parametrize("point", ["op-3-dirsynced", "journal-partial"])
def test_a_failure_after_the_directories_went_restores_them_with_the_files(
    session: Session, point: str
) -> None:
    _open_section(session)
    os.chmod(session.root / "epics", 0o750)
    after = tree_bytes(session.root)

    def inject(name: str) -> None:
        if name == point:
            raise RuntimeError(f"injected at {name}")

    with pytest.raises(RefusalError) as caught:
        run_undo(
            session.bank,
            clock=session.clock,
            make_id=session.ids,
            findings_for=no_findings,
            fault=inject,
        )
    assert caught.value.refusal.rule == "apply-failed"
    assert tree_bytes(session.root) == after  # the directories are back, with their bits
    assert len(journal.read_records(str(session.root))) == 1


def test_undo_of_an_epic_created_through_the_tool_leaves_no_empty_directory(
    tmp_path: Path,
) -> None:
    import write_calls
    from seeded_banks import Seeder

    seeder = Seeder(tmp_path / "bank")
    seeder.init()
    pre = tree_bytes(seeder.root)
    seeder.call(
        write_calls.create,
        {
            "docKind": "epic",
            "path": "epics/EP-001/charter.md",
            "title": "Parser Epic",
            "purpose": "The goal of the parser effort.",
            "derivedFrom": ["../../product/context.md"],
        },
    )
    assert (seeder.root / "epics" / "EP-001" / "charter.md").exists()
    run_undo(seeder.bank, clock=seeder.clock, make_id=seeder.ids)
    assert tree_bytes(seeder.root) == pre
