"""The journal (spec 03 §14; 07 §3.20): records, WAL, lock, atomic apply, rollback, recovery."""

from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from planners import (
    Clock,
    Ids,
    no_findings,
    plan_create_registered,
    plan_discard,
    plan_move,
    plan_new_section,
    plan_nothing,
    small_bank,
    tree_bytes,
)

import mbank.journal as journal
import mbank.journal.apply as journal_apply
from mbank.journal import durable
from mbank.model import Intent, JournalRecord, PlanOutcome, RecordOp, RefusalError
from mbank.plan import sha256_hex
from mbank.snapshot import Bank, Snapshot
from mbank.writes import GateAndPlan, WriteOutcome, execute

CREATE_ARGS = {"path": "domain/new.md", "index": "domain/README.md", "title": "New"}


class Writer:
    """Runs writes on one bank with a shared deterministic clock and id factory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bank = Bank(root)
        self.clock = Clock()
        self.ids = Ids()

    def __call__(
        self,
        planner: GateAndPlan = plan_create_registered,
        arguments: dict[str, Any] | None = None,
        *,
        tool: str = "bank_create",
        dry_run: bool = False,
        **options: Any,
    ) -> WriteOutcome:
        options.setdefault("findings_for", no_findings)
        return execute(
            self.bank,
            tool,
            CREATE_ARGS if arguments is None else arguments,
            planner,
            dry_run=dry_run,
            clock=self.clock,
            make_id=self.ids,
            **options,
        )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return small_bank(tmp_path / "bank")


@pytest.fixture
def write(root: Path) -> Writer:
    return Writer(root)


def records(root: Path) -> list[JournalRecord]:
    return journal.read_records(str(root))


def temp_files(root: Path) -> list[str]:
    return [
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.name.startswith(".mbank-") and path.name.endswith(".tmp")
    ]


def with_inbox_note(root: Path) -> Path:
    (root / "_inbox").mkdir()
    (root / "_inbox" / "n.md").write_text(
        "---\ntitle: Note\ndoc_kind: domain\npurpose: A captured note.\nstatus: draft\n---\n"
        "# Note\n\nCaptured.\n",
        encoding="utf-8",
    )
    return root


MOVE_ARGS = {"from": "_inbox/n.md", "to": "domain/terms.md", "index": "domain/README.md"}


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


def test_every_real_write_appends_exactly_one_record_with_the_spec_fields(
    root: Path, write: Writer, snapshot: Any
) -> None:
    outcome = write(arguments={**CREATE_ARGS, "warnings": ["careful"]})
    assert outcome.applied and outcome.journal_id == "20260914T120501Z-000001"
    (record,) = records(root)
    assert record.id == outcome.journal_id
    assert record.ops == (
        RecordOp("domain/new.md", "create", None, outcome.plan.ops[0].after),
        RecordOp(
            "domain/README.md",
            "replace",
            outcome.plan.ops[1].before,
            outcome.plan.ops[1].after,
        ),
    )
    line = (root / ".mbank" / "journal.jsonl").read_text(encoding="utf-8")
    assert line.endswith("\n") and line.count("\n") == 1
    data = journal.record_data(record)
    assert data["mbank"] == journal.mbank_version()
    assert "reason" not in data and "undoOf" not in data and "from" not in data
    assert {**data, "mbank": "<VERSION>"} == snapshot
    write(arguments={**CREATE_ARGS, "path": "domain/other.md"})
    assert len(records(root)) == 2


def test_records_are_compact_utf8_lines_with_non_ascii_unescaped(root: Path, write: Writer) -> None:
    write(arguments={**CREATE_ARGS, "title": "Правила"})
    raw = (root / ".mbank" / "journal.jsonl").read_bytes()
    assert "Правила".encode() in raw
    assert b"\\u" not in raw and b", " not in raw.split(b'"warnings"')[0]


def test_the_promote_and_discard_keys_are_kept_in_the_record(root: Path, write: Writer) -> None:
    with_inbox_note(root)
    write(plan_move, MOVE_ARGS, tool="bank_promote")
    (root / "_inbox" / "m.md").write_text("# M\n", encoding="utf-8")
    write(plan_discard, {"path": "_inbox/m.md", "reason": "Duplicate."}, tool="bank_discard")
    promote, discard = (journal.record_data(r) for r in records(root))
    assert promote["from"] == "_inbox/n.md" and promote["to"] == "domain/terms.md"
    assert discard["reason"] == "Duplicate." and discard["title"] == "M"


def test_dry_runs_refusals_and_no_ops_append_nothing_and_create_no_journal(
    root: Path, write: Writer, assert_unchanged: Any
) -> None:
    def refusing(snapshot: Snapshot, intent: Intent) -> PlanOutcome:
        from mbank.paths import refuse

        raise refuse("exists", "Refusing to overwrite an existing document: x.md")

    with assert_unchanged(root):
        dry = write(dry_run=True)
        nothing = write(plan_nothing)
        with pytest.raises(RefusalError):
            write(refusing)
    assert dry.dry_run and not dry.applied and dry.journal_id is None and dry.diff
    assert not nothing.applied and nothing.journal_id is None and nothing.diff is None
    assert nothing.common_fields() == {"dryRun": False}
    assert dry.common_fields()["diff"] == dry.diff
    assert not (root / ".mbank").exists()
    write()
    with assert_unchanged(root):
        write(arguments={**CREATE_ARGS, "path": "domain/x.md"}, dry_run=True)
        write(plan_nothing)
        with pytest.raises(RefusalError):
            write(refusing)
    assert len(records(root)) == 1


def test_a_dry_run_takes_no_lock(root: Path, write: Writer) -> None:
    write()
    with journal.bank_lock(str(root), "someone else"):
        outcome = write(arguments={**CREATE_ARGS, "path": "domain/x.md"}, dry_run=True)
    assert outcome.diff


def test_the_wal_entry_is_removed_after_commit_and_the_lock_is_free(
    root: Path, write: Writer
) -> None:
    write()
    assert os.listdir(root / ".mbank" / "wal") == []
    assert journal.lock_is_free(str(root))
    assert temp_files(root) == []


def test_the_lock_is_released_after_a_refusal_and_after_a_failed_apply(
    root: Path, write: Writer
) -> None:
    write()

    def fail(point: str) -> None:
        if point == "op-1-temp":
            raise RuntimeError("injected")

    with pytest.raises(RefusalError):
        write(arguments={**CREATE_ARGS, "path": "domain/a.md"}, fault=fail)
    assert journal.lock_is_free(str(root))
    with pytest.raises(RefusalError):
        write(arguments=CREATE_ARGS)  # the planner refuses: it exists
    assert journal.lock_is_free(str(root))


def test_the_lock_file_names_its_holder(root: Path, write: Writer) -> None:
    write()
    assert (root / ".mbank" / "lock").read_text() == f"{os.getpid()} bank_create\n"


def test_the_gitignore_is_written_once_and_never_overwritten(root: Path, write: Writer) -> None:
    write()
    ignore = root / ".mbank" / ".gitignore"
    assert ignore.read_text(encoding="utf-8") == "wal/\nlock\nobjects/\n"
    ignore.write_text("mine\n", encoding="utf-8")
    write(arguments={**CREATE_ARGS, "path": "domain/a.md"})
    assert ignore.read_text(encoding="utf-8") == "mine\n"
    ignore.unlink()
    write(arguments={**CREATE_ARGS, "path": "domain/b.md"})
    assert ignore.read_text(encoding="utf-8") == "wal/\nlock\nobjects/\n"


def test_the_journal_directories_have_mode_0755(root: Path, write: Writer) -> None:
    old = os.umask(0o077)
    try:
        write()
    finally:
        os.umask(old)
    for name in (".mbank", ".mbank/wal", ".mbank/objects"):
        assert (root / name).stat().st_mode & 0o777 == 0o755


def test_journal_ids_have_the_spec_shape_and_are_regenerated_on_collision(
    root: Path, write: Writer
) -> None:
    from datetime import UTC, datetime

    moment = datetime(2026, 9, 14, 12, 5, 1, tzinfo=UTC)
    assert re.fullmatch(r"20260914T120501Z-[0-9a-f]{6}", journal.random_journal_id(moment))
    first = write().journal_id
    assert first is not None
    given = iter([first, first, "20260914T120501Z-abcdef"])
    assert journal.fresh_journal_id(str(root), moment, lambda _m: next(given)) == (
        "20260914T120501Z-abcdef"
    )


def test_large_intent_strings_and_body_files_are_kept_by_hash(
    root: Path, write: Writer, tmp_path: Path
) -> None:
    body = tmp_path / "body.md"
    body.write_text("Body from a file.\n", encoding="utf-8")
    long = "x" * 4097
    write(arguments={**CREATE_ARGS, "bodyFile": str(body), "note": {"deep": [long, "short"]}})
    (record,) = records(root)
    digest = sha256_hex(long.encode())
    assert record.intent["note"] == {"deep": [{"sha256": digest, "bytes": 4097}, "short"]}
    assert journal.read_object(str(root), digest) == long.encode()
    body_digest = sha256_hex(b"Body from a file.\n")
    assert record.intent["bodyFile"] == str(body)
    assert record.intent["bodyFileContent"] == {"sha256": body_digest, "bytes": 18}
    assert journal.read_object(str(root), body_digest) == b"Body from a file.\n"
    assert (root / "domain" / "new.md").read_text(encoding="utf-8").endswith("Body from a file.\n")


def test_a_string_of_exactly_4096_bytes_stays_in_the_intent() -> None:
    intent, objects = journal.compact_intent({"body": "é" * 2048}, {})
    assert intent == {"body": "é" * 2048} and objects == {}


def test_pre_images_of_replaced_and_deleted_files_are_stored_as_objects(
    root: Path, write: Writer
) -> None:
    with_inbox_note(root)
    index_before = (root / "domain" / "README.md").read_bytes()
    note = (root / "_inbox" / "n.md").read_bytes()
    write(plan_move, MOVE_ARGS, tool="bank_promote")
    for content in (index_before, note):
        path = Path(journal.object_path(str(root), sha256_hex(content)))
        assert path.read_bytes() == content
        assert path.parent.parent == root / ".mbank" / "objects"


def test_a_replaced_file_keeps_its_permission_bits_and_a_new_file_gets_the_umask(
    root: Path, write: Writer
) -> None:
    (root / "domain" / "README.md").chmod(0o640)
    old = os.umask(0o027)
    try:
        write()
    finally:
        os.umask(old)
    assert (root / "domain" / "README.md").stat().st_mode & 0o777 == 0o640
    assert (root / "domain" / "new.md").stat().st_mode & 0o777 == 0o640


def test_a_write_creates_missing_directories_and_the_snapshot_is_refreshed(
    root: Path, write: Writer
) -> None:
    outcome = write(plan_new_section, {"path": "epics/EP-01/charter.md"})
    assert (root / "epics" / "EP-01" / "charter.md").is_file()
    assert "epics/README.md" in outcome.snapshot.docs
    assert outcome.snapshot is write.bank.refresh()


# --------------------------------------------------------------------------------------------
# Preconditions (§14.7), symlinks, failures mid-apply
# --------------------------------------------------------------------------------------------


def test_a_file_changed_between_plan_and_swap_aborts_and_the_other_writers_bytes_survive(
    root: Path, write: Writer
) -> None:
    pre = tree_bytes(root)
    index = root / "domain" / "README.md"

    def other_writer(point: str) -> None:
        if point == "op-2-temp":
            index.write_text(index.read_text(encoding="utf-8") + "- by hand\n", encoding="utf-8")

    with pytest.raises(RefusalError) as caught:
        write(fault=other_writer)
    assert caught.value.refusal.rule == "changed-on-disk"
    assert caught.value.refusal.message == (
        "domain/README.md changed on disk by someone else since it was read; nothing was written."
    )
    assert index.read_text(encoding="utf-8").endswith("- by hand\n")
    assert not (root / "domain" / "new.md").exists()
    after = tree_bytes(root)
    del pre["domain/README.md"], after["domain/README.md"]
    assert after == pre
    assert records(root) == [] and os.listdir(root / ".mbank" / "wal") == []
    assert temp_files(root) == []


def test_a_file_changed_after_the_snapshot_aborts_before_anything_is_written(
    root: Path, write: Writer
) -> None:
    def planner_then_someone_writes(snapshot: Snapshot, intent: Intent) -> PlanOutcome:
        outcome = plan_create_registered(snapshot, intent)
        (root / "domain" / "README.md").write_text("changed\n", encoding="utf-8")
        return outcome

    write(plan_create_registered, {**CREATE_ARGS, "path": "domain/first.md"})
    before = tree_bytes(root, include_journal=True)
    with pytest.raises(RefusalError) as caught:
        write(planner_then_someone_writes)
    assert caught.value.refusal.rule == "changed-on-disk"
    after = tree_bytes(root, include_journal=True)
    assert after.pop("domain/README.md")[0] == b"changed\n"
    before.pop("domain/README.md")
    after.pop(".mbank/lock"), before.pop(".mbank/lock")
    assert after == before


def test_a_create_over_a_file_that_appeared_meanwhile_is_refused(root: Path, write: Writer) -> None:
    def planner_then_file_appears(snapshot: Snapshot, intent: Intent) -> PlanOutcome:
        outcome = plan_create_registered(snapshot, intent)
        if intent.journal_id is not None and journal.has_journal_dir(str(root)):
            (root / "domain" / "new.md").write_text("theirs\n", encoding="utf-8")
        return outcome

    with pytest.raises(RefusalError) as caught:
        write(planner_then_file_appears)
    assert caught.value.refusal.message.startswith("domain/new.md changed on disk")
    assert (root / "domain" / "new.md").read_text(encoding="utf-8") == "theirs\n"


def test_a_write_through_a_symlink_leaving_the_bank_is_refused_at_apply_time(
    root: Path, write: Writer, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()

    def planner_then_link(snapshot: Snapshot, intent: Intent) -> PlanOutcome:
        outcome = plan_new_section(snapshot, intent)
        if not (root / "epics").is_symlink():  # the planner runs in both passes
            (root / "epics").symlink_to(outside)
        return outcome

    with pytest.raises(RefusalError) as caught:
        write(planner_then_link, {"path": "epics/x.md"})
    assert caught.value.refusal.rule == "path-symlink"
    assert caught.value.refusal.message == (
        "Path leads outside the bank through a symbolic link: epics/x.md"
    )
    assert list(outside.iterdir()) == []


@pytest.fixture
def read_only_dir() -> Iterator[Callable[[Path], None]]:
    """Make a directory refuse new entries, even for root (chattr +i), and undo it after."""
    made: list[tuple[Path, str]] = []

    def protect(directory: Path) -> None:
        if os.geteuid() == 0:
            if shutil.which("chattr") is None:
                pytest.skip("running as root without chattr: cannot make a read-only directory")
            done = subprocess.run(["chattr", "+i", str(directory)], capture_output=True)
            if done.returncode != 0:
                pytest.skip(f"chattr +i is not supported here: {done.stderr.decode().strip()}")
            made.append((directory, "chattr"))
        else:
            directory.chmod(0o555)
            made.append((directory, "chmod"))

    yield protect
    for directory, how in made:
        if how == "chattr":
            subprocess.run(["chattr", "-i", str(directory)], check=True)
        else:
            directory.chmod(0o755)


def test_a_read_only_target_directory_fails_the_write_and_every_file_is_restored(
    root: Path, write: Writer, read_only_dir: Callable[[Path], None]
) -> None:
    with_inbox_note(root)
    write(plan_nothing)  # nothing to do: no journal yet
    journal.ensure_journal_dir(str(root))
    pre = tree_bytes(root)
    read_only_dir(root / "_inbox")
    with pytest.raises(RefusalError) as caught:
        write(plan_move, MOVE_ARGS, tool="bank_promote")
    assert caught.value.refusal.rule == "apply-failed"
    assert re.fullmatch(
        r"The write failed \((operation not permitted|permission denied): _inbox/n\.md\); "
        r"every file was restored and nothing was written\.",
        caught.value.refusal.message,
    ), caught.value.refusal.message
    assert tree_bytes(root) == pre
    assert records(root) == [] and os.listdir(root / ".mbank" / "wal") == []
    assert journal.lock_is_free(str(root))


def test_a_full_disk_fails_the_write_and_every_file_is_restored(
    root: Path, write: Writer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pre = tree_bytes(root)
    original = durable.write_all

    def full_on_the_index(descriptor: int, data: bytes) -> None:
        if data.endswith(b"- [New](new.md) \xe2\x80\x94 A document created by a test.\n"):
            raise OSError(errno.ENOSPC, "No space left on device")
        original(descriptor, data)

    monkeypatch.setattr(durable, "write_all", full_on_the_index)
    with pytest.raises(RefusalError) as caught:
        write()
    assert caught.value.refusal.message == (
        "The write failed (no space left on device: domain/README.md); every file was "
        "restored and nothing was written."
    )
    assert tree_bytes(root) == pre
    assert temp_files(root) == [] and records(root) == []


FAULT_POINTS_3 = [
    "wal-written",
    "wal-synced",
    *(f"op-{i}-{stage}" for i in (1, 2, 3) for stage in ("temp", "swapped", "dirsynced")),
    "journal-partial",
    "journal-appended",
    "wal-removed",
]


@pytest.mark.parametrize("point", FAULT_POINTS_3)
@pytest.mark.parametrize("scenario", ["new-section", "move"])
def test_an_exception_at_any_point_of_apply_restores_the_pre_images_in_process(
    tmp_path: Path, point: str, scenario: str
) -> None:
    def fresh(name: str) -> Writer:
        bank = with_inbox_note(small_bank(tmp_path / name))
        return Writer(bank)

    planner, arguments = (
        (plan_new_section, {"path": "epics/EP-01/charter.md"})
        if scenario == "new-section"
        else (plan_move, MOVE_ARGS)
    )
    reference = fresh("reference")
    reference(planner, arguments)
    post = tree_bytes(reference.root)

    write = fresh("bank")
    pre = tree_bytes(write.root)

    def inject(name: str) -> None:
        if name == point:
            raise RuntimeError(f"injected at {name}")

    committed = point in ("journal-appended", "wal-removed")
    if committed:
        outcome = write(planner, arguments, fault=inject)
        assert outcome.applied
        assert tree_bytes(write.root) == post
        assert len(records(write.root)) == 1
    else:
        with pytest.raises(RefusalError) as caught:
            write(planner, arguments, fault=inject)
        assert caught.value.refusal.message == (
            f"The write failed (RuntimeError: injected at {point}); every file was restored "
            "and nothing was written."
        )
        assert tree_bytes(write.root) == pre
        assert records(write.root) == []
        journal_file = write.root / ".mbank" / "journal.jsonl"
        assert not journal_file.exists() or journal_file.read_bytes() == b""
    assert os.listdir(write.root / ".mbank" / "wal") == []
    assert temp_files(write.root) == []
    assert journal.lock_is_free(str(write.root))


# --------------------------------------------------------------------------------------------
# Recovery (§14.6)
# --------------------------------------------------------------------------------------------


def test_a_failed_restore_keeps_the_wal_entry_and_the_next_write_rolls_it_back(
    root: Path, write: Writer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pre = tree_bytes(root)

    def inject(point: str) -> None:
        if point == "op-2-swapped":
            raise RuntimeError("disk gone")

    def restore_fails(*_args: Any) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(journal_apply, "roll_back", restore_fails)
    with pytest.raises(RefusalError) as caught:
        write(fault=inject)
    assert caught.value.refusal.rule == "rollback-failed"
    assert caught.value.refusal.message == (
        "The write failed (RuntimeError: disk gone) and restoring failed too "
        "(input/output error); .mbank/wal/20260914T120501Z-000001.json was kept so that the "
        "next start rolls it back."
    )
    assert journal.pending_wal_ids(str(root)) == ["20260914T120501Z-000001"]
    assert tree_bytes(root) != pre
    assert journal.interrupted_notices(str(root)) == [
        "mbank: a write was interrupted (20260914T120501Z-000001); the next write "
        "to this bank rolls it back."
    ]
    monkeypatch.undo()
    capsys.readouterr()
    write(plan_nothing)  # any write recovers first, under the lock
    assert tree_bytes(root) == pre
    assert journal.pending_wal_ids(str(root)) == []
    assert capsys.readouterr().err == (
        "mbank: rolled back an interrupted write (20260914T120501Z-000001, bank_create).\n"
    )


def _wal_entry(root: Path, entry_id: str, ops: list[journal.WalOp]) -> None:
    entry = journal.WalEntry(entry_id, "bank_edit", "2026-09-14T12:05:01Z", tuple(ops), ())
    (root / ".mbank" / "wal" / f"{entry_id}.json").write_bytes(msgspec.json.encode(entry))


def test_recovery_truncates_a_partial_last_journal_line(root: Path, write: Writer) -> None:
    write()
    journal_file = root / ".mbank" / "journal.jsonl"
    complete = journal_file.read_bytes()
    journal_file.write_bytes(complete + b'{"v":1,"id":"2026')
    index = root / "domain" / "README.md"
    before = sha256_hex(index.read_bytes())
    _wal_entry(
        root,
        "20260914T130000Z-aaaaaa",
        [journal.WalOp("domain/README.md", "replace", before, "0" * 64, None)],
    )
    assert journal.recover_at_start(str(root)) == ["20260914T130000Z-aaaaaa"]
    assert journal_file.read_bytes() == complete


def test_recovery_removes_entries_that_do_not_parse_or_whose_record_exists(
    root: Path, write: Writer, capsys: pytest.CaptureFixture[str]
) -> None:
    done = write().journal_id
    assert done is not None
    wal = root / ".mbank" / "wal"
    (wal / "20260914T130000Z-bbbbbb.json").write_bytes(b'{"id": "20260914T1')
    _wal_entry(root, done, [journal.WalOp("domain/new.md", "create", None, "1" * 64, None)])
    post = tree_bytes(root)
    capsys.readouterr()
    # Issue 13 item 3: an entry that does not parse is no longer taken for "crashed while
    # writing" (entries are renamed into place once complete): it is quarantined and writes
    # stop until a person decides; the committed entry is still just removed.
    with pytest.raises(RefusalError) as caught:
        journal.recover_at_start(str(root))
    assert caught.value.refusal.message == (
        "Writes to this bank are stopped until a person decides: the write-ahead entry "
        "20260914T130000Z-bbbbbb.json is damaged and may belong to a half-applied write (no "
        "file it names can be read). Once you have looked, delete .mbank/quarantine/ to "
        "allow writes again; nothing was written."
    )
    assert os.listdir(wal) == [] and tree_bytes(root) == post
    assert sorted(os.listdir(root / ".mbank" / "quarantine")) == [
        "20260914T130000Z-bbbbbb.json",
        "20260914T130000Z-bbbbbb.json.reason",
    ]


def test_recovery_leaves_a_file_changed_after_the_interrupted_write_and_says_so(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal.ensure_journal_dir(str(root))
    rules = root / "domain" / "rules.md"
    before = sha256_hex(rules.read_bytes())
    rules.write_text("edited by hand\n", encoding="utf-8")
    stray = root / "domain" / ".mbank-0123456789abcdef.tmp"
    stray.write_bytes(b"half")
    _wal_entry(
        root,
        "20260914T130000Z-cccccc",
        [journal.WalOp("domain/rules.md", "replace", before, "2" * 64, b"old\n", 0o644)],
    )
    journal.recover_at_start(str(root))
    assert rules.read_text(encoding="utf-8") == "edited by hand\n"
    assert not stray.exists()
    assert capsys.readouterr().err == (
        "mbank: domain/rules.md changed after the interrupted write 20260914T130000Z-cccccc; "
        "left as it is.\n"
        "mbank: rolled back an interrupted write (20260914T130000Z-cccccc, bank_edit).\n"
    )


def test_recovery_restores_a_deleted_file_with_its_bits_and_removes_created_ones(
    root: Path,
) -> None:
    journal.ensure_journal_dir(str(root))
    rules = root / "domain" / "rules.md"
    content = rules.read_bytes()
    rules.unlink()
    (root / "epics").mkdir()
    (root / "epics" / "x.md").write_bytes(b"new\n")
    _wal_entry(
        root,
        "20260914T130000Z-dddddd",
        [
            journal.WalOp("epics/x.md", "create", None, sha256_hex(b"new\n"), None),
            journal.WalOp("domain/rules.md", "delete", sha256_hex(content), None, content, 0o600),
        ],
    )
    entry = root / ".mbank" / "wal" / "20260914T130000Z-dddddd.json"
    entry.write_bytes(entry.read_bytes().replace(b'"dirs":[]', b'"dirs":["epics"]'))
    journal.recover_at_start(str(root))
    assert rules.read_bytes() == content and rules.stat().st_mode & 0o777 == 0o600
    assert not (root / "epics").exists()


def test_read_only_callers_see_no_notice_without_an_interrupted_write(root: Path) -> None:
    assert journal.interrupted_notices(str(root)) == []
    assert journal.recover_at_start(str(root)) == []
    assert not (root / ".mbank").exists()


def test_a_journal_line_that_does_not_parse_is_skipped_with_a_stderr_note(
    root: Path, write: Writer, capsys: pytest.CaptureFixture[str]
) -> None:
    write()
    journal_file = root / ".mbank" / "journal.jsonl"
    journal_file.write_bytes(b"not json\n" + journal_file.read_bytes() + b'{"v": "x"}\n')
    capsys.readouterr()
    assert [r.id for r in records(root)] == ["20260914T120501Z-000001"]
    assert capsys.readouterr().err == (
        "mbank: skipped line 1 of .mbank/journal.jsonl: it does not parse.\n"
        "mbank: skipped line 3 of .mbank/journal.jsonl: it does not parse.\n"
    )


# --------------------------------------------------------------------------------------------
# The lock (§14.4)
# --------------------------------------------------------------------------------------------


def test_a_held_lock_refuses_the_write_with_the_exact_text(
    root: Path, write: Writer, assert_unchanged: Any
) -> None:
    write()
    with (
        journal.bank_lock(str(root), "other"),
        assert_unchanged(root),
        pytest.raises(RefusalError) as caught,
    ):
        write(arguments={**CREATE_ARGS, "path": "domain/x.md"}, lock_timeout=0.2)
    assert caught.value.refusal.rule == "lock-busy"
    assert caught.value.refusal.message == (
        "Another write to this bank is in progress (.mbank/lock is held); nothing was written. "
        "Try again."
    )


# --------------------------------------------------------------------------------------------
# "Where did it go?" (§14.9)
# --------------------------------------------------------------------------------------------


def test_where_did_it_go_names_the_promotion_the_discard_or_the_remover(
    root: Path, write: Writer
) -> None:
    with_inbox_note(root)
    write(plan_move, MOVE_ARGS, tool="bank_promote")
    assert journal.where_did_it_go(str(root), "_inbox/n.md") == (
        "It was promoted to domain/terms.md on 2026-09-14 (journal 20260914T120501Z-000001)."
    )
    (root / "_inbox" / "m.md").write_text("# M\n", encoding="utf-8")
    write(
        plan_discard, {"path": "_inbox/m.md", "reason": "Folded into rules."}, tool="bank_discard"
    )
    assert journal.where_did_it_go(str(root), "_inbox/m.md") == (
        "It was discarded on 2026-09-14 (journal 20260914T120502Z-000002), with the reason: "
        "Folded into rules."
    )
    write(plan_discard, {"path": "domain/rules.md", "reason": "x"}, tool="undo")
    assert journal.where_did_it_go(str(root), "domain/rules.md") == (
        "It was removed by undo on 2026-09-14 (journal 20260914T120503Z-000003)."
    )


def test_where_did_it_go_is_silent_when_the_newest_op_did_not_delete_the_path(
    root: Path, write: Writer
) -> None:
    write()
    (root / "domain" / "new.md").unlink()  # vanished by hand
    assert journal.where_did_it_go(str(root), "domain/new.md") is None
    assert journal.where_did_it_go(str(root), "never/was.md") is None
    assert journal.where_did_it_go(str(root / "nowhere"), "x.md") is None
