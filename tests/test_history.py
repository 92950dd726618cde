"""History and the journal resource (spec 03 §14.8; 04 §3, §9.3, §9.4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
from planners import Clock, Ids, no_findings, plan_create_registered, plan_move, small_bank

import mbank.journal as journal
from mbank.model import JournalRecord, RecordOp
from mbank.snapshot import Bank
from mbank.writes import execute


def record(number: int, **extra: Any) -> JournalRecord:
    """A hand-made record `20260914T1200NNZ-0000NN` creating `doc-NN.md`."""
    return JournalRecord(
        v=1,
        id=f"20260914T12{number // 60:02d}{number % 60:02d}Z-{number:06x}",
        time=f"2026-09-14T12:{number // 60:02d}:{number % 60:02d}Z",
        tool=extra.pop("tool", "bank_create"),
        via="mcp",
        mbank="0.1.0",
        intent={"path": f"doc-{number}.md"},
        ops=extra.pop("ops", (RecordOp(f"doc-{number}.md", "create", None, "a" * 64),)),
        warnings=(),
        **extra,
    )


def write_journal(root: Path, records: list[JournalRecord]) -> None:
    (root / ".mbank").mkdir(parents=True, exist_ok=True)
    lines = b"".join(msgspec.json.encode(r) + b"\n" for r in records)
    (root / ".mbank" / "journal.jsonl").write_bytes(lines)


def test_history_of_a_bank_never_written_is_empty_and_writes_nothing(
    tmp_path: Path, assert_unchanged: Any
) -> None:
    root = small_bank(tmp_path / "bank")
    with assert_unchanged(root):
        assert journal.history(str(root)) == {"root": str(root), "total": 0, "records": []}
        assert journal.journal_resource(str(root)) == {
            "root": str(root),
            "total": 0,
            "records": [],
        }
        assert journal.journal_summary(str(root)) == {"records": 0}
    assert not (root / ".mbank").exists()


def test_history_lists_newest_first_twenty_by_default(tmp_path: Path) -> None:
    write_journal(tmp_path, [record(n) for n in range(1, 31)])
    result = journal.history(str(tmp_path))
    assert result["total"] == 30
    assert [r["intent"]["path"] for r in result["records"]] == [
        f"doc-{n}.md" for n in range(30, 10, -1)
    ]
    assert len(journal.history(str(tmp_path), limit=3)["records"]) == 3


def test_the_journal_resource_holds_the_50_most_recent_records(tmp_path: Path) -> None:
    write_journal(tmp_path, [record(n) for n in range(1, 61)])
    result = journal.journal_resource(str(tmp_path))
    assert result["total"] == 60
    assert len(result["records"]) == 50
    assert result["records"][0]["intent"] == {"path": "doc-60.md"}
    assert result["records"][-1]["intent"] == {"path": "doc-11.md"}


def test_history_by_path_matches_ops_and_promotion_sources_and_destinations(
    tmp_path: Path,
) -> None:
    write_journal(
        tmp_path,
        [
            record(1),
            record(2, tool="bank_promote", from_="_inbox/n.md", to="domain/n.md", ops=()),
            record(3, ops=(RecordOp("domain/n.md", "replace", "a" * 64, "b" * 64),)),
            record(4),
        ],
    )
    by_source = journal.history(str(tmp_path), path="_inbox/n.md")
    assert [r["id"][-6:] for r in by_source["records"]] == ["000002"]
    assert by_source["total"] == 1
    by_destination = journal.history(str(tmp_path), path="domain/n.md")
    assert [r["id"][-6:] for r in by_destination["records"]] == ["000003", "000002"]
    assert journal.history(str(tmp_path), path="doc-4.md")["total"] == 1


def test_a_real_promotion_is_found_by_its_source_and_its_destination(tmp_path: Path) -> None:
    root = small_bank(tmp_path / "bank")
    (root / "_inbox").mkdir()
    (root / "_inbox" / "n.md").write_text("# Note\n", encoding="utf-8")
    bank, clock, ids = Bank(root), Clock(), Ids()
    arguments = {"from": "_inbox/n.md", "to": "domain/terms.md", "index": "domain/README.md"}
    execute(
        bank,
        "bank_promote",
        arguments,
        plan_move,
        dry_run=False,
        findings_for=no_findings,
        clock=clock,
        make_id=ids,
    )
    execute(
        bank,
        "bank_create",
        {"path": "domain/x.md", "index": "domain/README.md"},
        plan_create_registered,
        dry_run=False,
        findings_for=no_findings,
        clock=clock,
        make_id=ids,
    )
    for path in ("_inbox/n.md", "domain/terms.md"):
        found = journal.history(str(root), path=path)["records"]
        assert [r["tool"] for r in found] == ["bank_promote"]
    assert journal.history(str(root), path="domain/README.md")["total"] == 2


def test_the_human_history_lists_each_record_and_its_ops(tmp_path: Path, snapshot: Any) -> None:
    write_journal(
        tmp_path,
        [
            record(1),
            record(
                2,
                tool="bank_discard",
                reason="Folded into rules.",
                ops=(RecordOp("_inbox/n.md", "delete", "a" * 64, None),),
            ),
            record(
                3,
                tool="bank_promote",
                ops=(
                    RecordOp("domain/n.md", "create", None, "a" * 64),
                    RecordOp("domain/README.md", "replace", "a" * 64, "b" * 64),
                    RecordOp("_inbox/m.md", "delete", "b" * 64, None),
                ),
            ),
        ],
    )
    text = journal.format_history(journal.history(str(tmp_path)))
    assert text.splitlines()[:4] == [
        "20260914T120003Z-000003  2026-09-14T12:00:03Z  bank_promote  3 files",
        "  create  domain/n.md",
        "  replace domain/README.md",
        "  delete  _inbox/m.md",
    ]
    assert "bank_discard  1 file  reason: Folded into rules." in text
    assert text == snapshot


def test_the_human_history_says_when_no_record_matches(tmp_path: Path) -> None:
    assert journal.format_history(journal.history(str(tmp_path))) == "(no records)\n"
    write_journal(tmp_path, [record(1)])
    filtered = journal.history(str(tmp_path), path="other.md")
    assert journal.format_history(filtered) == "(no records)\n"


def test_stats_reports_the_journal_through_its_reader(tmp_path: Path) -> None:
    write_journal(tmp_path, [record(1), record(2, tool="bank_edit")])
    assert journal.journal_summary(str(tmp_path)) == {
        "records": 2,
        "last": {"time": "2026-09-14T12:00:02Z", "tool": "bank_edit"},
    }
    from mbank.stats import bank_stats

    bank = Bank(tmp_path)
    assert bank_stats(bank.refresh(), 1.0)["journal"]["records"] == 2


# --------------------------------------------------------------------------------------------
# The CLI: mbank history
# --------------------------------------------------------------------------------------------


def test_cli_history_prints_the_records_and_its_json_equals_the_result(
    tmp_path: Path, capsys: Any, assert_unchanged: Any
) -> None:
    from mbank.cli import main

    root = small_bank(tmp_path / "bank")
    write_journal(root, [record(1), record(2, tool="bank_edit")])
    with assert_unchanged(root):
        assert main(["history", "--root", str(root), "--limit", "1"]) == 0
        human = capsys.readouterr()
        assert main(["history", "--root", str(root), "--json"]) == 0
        machine = capsys.readouterr()
    assert human.out == (
        "20260914T120002Z-000002  2026-09-14T12:00:02Z  bank_edit  1 file\n  create  doc-2.md\n"
    )
    assert human.err == ""
    import json

    assert json.loads(machine.out) == journal.history(str(root))


def test_cli_history_normalises_the_path_filter(tmp_path: Path, capsys: Any) -> None:
    from mbank.cli import main

    root = small_bank(tmp_path / "bank")
    write_journal(root, [record(1), record(2)])
    assert main(["history", "--root", str(root), "--json", "--path", "./doc-1.md"]) == 0
    import json

    result = json.loads(capsys.readouterr().out)
    assert result["total"] == 1 and result["records"][0]["intent"] == {"path": "doc-1.md"}
    assert main(["history", "--root", str(root), "--path", "../x.md"]) == 1
    refused = capsys.readouterr()
    assert refused.out == "" and refused.err == "mbank: Path must stay inside the bank: ../x.md\n"


def test_cli_history_says_on_stderr_that_a_write_was_interrupted(
    tmp_path: Path, capsys: Any, assert_unchanged: Any
) -> None:
    from mbank.cli import main

    root = small_bank(tmp_path / "bank")
    write_journal(root, [record(1)])
    (root / ".mbank" / "wal").mkdir()
    (root / ".mbank" / "wal" / "20260914T130000Z-abcdef.json").write_text("{}")
    with assert_unchanged(root):
        assert main(["history", "--root", str(root)]) == 0
    captured = capsys.readouterr()
    assert captured.err == (
        "mbank: a write was interrupted (20260914T130000Z-abcdef); the next write "
        "to this bank rolls it back.\n"
    )
    assert captured.out.startswith("20260914T120001Z-000001")


def test_cli_history_limit_is_bounded(tmp_path: Path, capsys: Any) -> None:
    import pytest

    from mbank.cli import main

    with pytest.raises(SystemExit) as caught:
        main(["history", "--root", str(tmp_path), "--limit", "1001"])
    assert caught.value.code == 2
