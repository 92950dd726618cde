"""`bank_discard` (spec 03 §11; acceptance 07 §3.18) and the quarantine listing (04 §3): a
note leaves `_inbox/` only with a reason, which the journal keeps with its title, purpose and
pre-image; documents in the bank proper are never deleted; the old path says when and why."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import write_calls
from planners import Clock, Ids

from mbank.cli import main
from mbank.inbox import format_inbox, inbox_listing
from mbank.journal import read_object, read_records, record_data
from mbank.model import RefusalError
from mbank.plan import plan_data
from mbank.reducers.discard import TOOL
from mbank.shipped_files import seed_files
from mbank.snapshot import Bank
from mbank.validate import findings
from mbank.writes import run_undo

TODAY = "2026-09-14"
NOTE = "---\ntitle: Stale Idea\ndoc_kind: domain\npurpose: An idea nobody needs.\n---\n# Stale\n"


def seed(root: Path) -> Path:
    for path, text in seed_files("ebook_parser", TODAY).items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    bank = seed(tmp_path / "bank")
    (bank / "_inbox").mkdir()
    (bank / "_inbox/idea.md").write_text(NOTE, encoding="utf-8")
    return bank


def discard(root: Path, dry_run: bool = False, **arguments: Any) -> dict[str, Any]:
    return write_calls.discard(Bank(root), arguments, dry_run=dry_run, clock=Clock(), make_id=Ids())


def refused(root: Path, **arguments: Any) -> tuple[str, str]:
    with pytest.raises(RefusalError) as caught:
        discard(root, **arguments)
    return caught.value.refusal.rule, caught.value.refusal.message


def test_plan_discard(root: Path, snapshot: Any) -> None:
    arguments = {"path": "_inbox/idea.md", "reason": "  Folded into domain/model.md.  "}
    bank = Bank(root)
    outcome = write_calls.outcome(TOOL, bank, arguments, clock=Clock(), make_id=Ids())
    result = discard(root, dry_run=True, **arguments)
    recorded = json.loads(
        json.dumps({"plan": plan_data(outcome.plan), "result": result}).replace(str(root), "<ROOT>")
    )
    assert recorded == snapshot


def test_a_discard_deletes_the_note_and_returns_its_fields_in_order(root: Path) -> None:
    result = discard(root, path="_inbox/idea.md", reason="  Not worth keeping. ")
    assert result == {
        "path": "_inbox/idea.md",
        "title": "Stale Idea",
        "purpose": "An idea nobody needs.",
        "reason": "Not worth keeping.",
        "discarded": True,
        "dryRun": False,
        "bytes": len(NOTE.encode()),
        "journalId": "20260914T120501Z-000001",
    }
    assert list(result) == [
        "path",
        "title",
        "purpose",
        "reason",
        "discarded",
        "dryRun",
        "bytes",
        "journalId",
    ]
    assert not (root / "_inbox/idea.md").exists()
    assert findings(Bank(root).refresh()) == ()


def test_the_reason_title_purpose_and_pre_image_are_on_the_record(root: Path) -> None:
    discard(root, path="_inbox/idea.md", reason="Duplicate of domain/model.md.")
    record = record_data(read_records(str(root))[-1])
    assert record["tool"] == "bank_discard"
    assert record["reason"] == "Duplicate of domain/model.md."
    assert (record["title"], record["purpose"]) == ("Stale Idea", "An idea nobody needs.")
    assert [(op["path"], op["kind"], op["after"]) for op in record["ops"]] == [
        ("_inbox/idea.md", "delete", None)
    ]
    assert read_object(str(root), record["ops"][0]["before"]) == NOTE.encode()


def test_the_old_path_says_when_and_why_it_was_discarded(root: Path) -> None:
    result = discard(root, path="_inbox/idea.md", reason="Stale.")
    assert refused(root, path="_inbox/idea.md", reason="Again.") == (
        "not-a-document",
        "Not a document of this bank: _inbox/idea.md. It was discarded on 2026-09-14 "
        f"(journal {result['journalId']}), with the reason: Stale.",
    )


def test_undo_brings_a_discarded_note_back(root: Path) -> None:
    discard(root, path="_inbox/idea.md", reason="Stale.")
    run_undo(Bank(root), clock=Clock(), make_id=Ids("u"))
    assert (root / "_inbox/idea.md").read_text(encoding="utf-8") == NOTE


def test_a_dry_run_writes_nothing_and_shows_the_deletion(root: Path, assert_unchanged: Any) -> None:
    with assert_unchanged(root):
        result = discard(root, dry_run=True, path="_inbox/idea.md", reason="Stale.")
    assert result["discarded"] is False and result["dryRun"] is True
    assert result["diff"].startswith("--- a/_inbox/idea.md\n+++ /dev/null\n@@ -1,6 +0,0 @@\n")
    assert "journalId" not in result and "warnings" not in result


def test_a_non_text_note_may_be_discarded(root: Path) -> None:
    (root / "_inbox/latin.md").write_bytes(b"---\ntitle: Caf\xe9\n---\n")
    dry = discard(root, dry_run=True, path="_inbox/latin.md", reason="Unreadable.")
    assert dry["diff"] == "Binary file _inbox/latin.md deleted\n"
    assert dry["title"] == "latin" and dry["purpose"] == ""
    discard(root, path="_inbox/latin.md", reason="Unreadable.")
    assert not (root / "_inbox/latin.md").exists()


def test_a_crlf_note_is_discarded_like_any_other(root: Path) -> None:
    (root / "_inbox/crlf.md").write_bytes(NOTE.replace("\n", "\r\n").encode())
    result = discard(root, path="_inbox/crlf.md", reason="Stale.")
    assert result["title"] == "Stale Idea" and not (root / "_inbox/crlf.md").exists()


@pytest.mark.parametrize(
    ("arguments", "rule", "message"),
    [
        ({"path": ""}, "path-empty", "`path` is required."),
        ({"path": "../x.md"}, "path-outside", "Path must stay inside the bank: ../x.md"),
        (
            {"path": "_inbox\\idea.md"},
            "path-backslash",
            'Path contains a backslash; bank paths use "/": _inbox\\idea.md',
        ),
        (
            {"path": "_inbox/none.md"},
            "not-a-document",
            "Not a document of this bank: _inbox/none.md",
        ),
        (
            {"path": "product/context.md"},
            "not-quarantined",
            "Only quarantined documents can be discarded; product/context.md is not in _inbox/. "
            "Documents in the bank proper are removed by hand, deliberately.",
        ),
        (
            {"reason": "   "},
            "reason-required",
            "`reason` is required: a note is dropped on the record, or not at all.",
        ),
        (
            {"reason": None},
            "reason-required",
            "`reason` is required: a note is dropped on the record, or not at all.",
        ),
    ],
)
def test_each_gate_refuses_with_its_exact_message(
    root: Path, assert_unchanged: Any, arguments: dict[str, Any], rule: str, message: str
) -> None:
    with assert_unchanged(root):
        assert refused(root, **{"path": "_inbox/idea.md", "reason": "r", **arguments}) == (
            rule,
            message,
        )


def test_the_not_quarantined_gate_comes_before_the_reason(
    root: Path, assert_unchanged: Any
) -> None:
    with assert_unchanged(root):
        assert refused(root, path="README.md", reason="")[0] == "not-quarantined"


# --------------------------------------------------------------------------------------------
# The quarantine listing (memorybank://inbox, mbank inbox)
# --------------------------------------------------------------------------------------------

NOW = datetime(2026, 9, 14, 12, 0, tzinfo=UTC)


def aged(root: Path, path: str, days: float) -> None:
    moment = NOW.timestamp() - days * 86_400
    os.utime(root / path, (moment, moment))


def test_the_inbox_lists_oldest_first_with_whole_day_ages(root: Path, snapshot: Any) -> None:
    (root / "_inbox/b.md").write_text(NOTE.replace("Stale Idea", "B"), encoding="utf-8")
    (root / "_inbox/a.md").write_text("# No Header\n", encoding="utf-8")
    (root / "_inbox/sub").mkdir()
    (root / "_inbox/sub/c.md").write_text(NOTE, encoding="utf-8")
    aged(root, "_inbox/idea.md", 2.5)
    aged(root, "_inbox/b.md", 10.01)
    aged(root, "_inbox/a.md", 2.99)
    aged(root, "_inbox/sub/c.md", -1)
    listing = inbox_listing(Bank(root).refresh(), NOW)
    assert [(e["path"], e["ageDays"]) for e in listing["entries"]] == [
        ("_inbox/b.md", 10),
        ("_inbox/a.md", 2),
        ("_inbox/idea.md", 2),
        ("_inbox/sub/c.md", 0),
    ]
    assert list(listing) == ["root", "count", "entries"] and listing["count"] == 4
    assert list(listing["entries"][0]) == [
        "path",
        "title",
        "purpose",
        "docKind",
        "status",
        "ageDays",
        "bytes",
    ]
    listing["root"] = "<ROOT>"
    assert {"json": listing, "text": format_inbox(listing)} == snapshot


def test_an_empty_inbox_says_so(tmp_path: Path) -> None:
    listing = inbox_listing(Bank(seed(tmp_path / "bank")).refresh(), NOW)
    assert listing["count"] == 0 and listing["entries"] == []
    assert format_inbox(listing) == "(inbox empty)\n"


# --------------------------------------------------------------------------------------------
# The CLI (spec 04 §9.2–§9.4)
# --------------------------------------------------------------------------------------------


def test_cli_discard_human_output(
    root: Path, capsys: pytest.CaptureFixture[str], snapshot: Any
) -> None:
    argv = ["--root", str(root), "discard", "_inbox/idea.md", "--reason", "Stale."]
    assert main([*argv, "--dry-run"]) == 0
    dry = capsys.readouterr().out
    assert main(argv) == 0
    real, journal = capsys.readouterr().out.rsplit("journal: ", 1)
    assert journal.rstrip("\n") == read_records(str(root))[-1].id
    assert (
        real
        == f"DISCARDED _inbox/idea.md  ({len(NOTE)} bytes)\ntitle: Stale Idea\nreason: Stale.\n"
    )
    assert {"dry": dry} == snapshot


def test_cli_discard_json_refusal_and_usage(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(root), "discard", "README.md", "--reason", "x"]) == 1
    assert capsys.readouterr().err.startswith(
        "mbank: Only quarantined documents can be discarded; README.md is not in _inbox/."
    )
    with pytest.raises(SystemExit) as usage:
        main(["--root", str(root), "discard", "_inbox/idea.md"])
    assert usage.value.code == 2
    capsys.readouterr()
    assert main(["--root", str(root), "discard", "_inbox/idea.md", "--reason", "x", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["discarded"] is True and result["reason"] == "x"


def test_cli_inbox_lists_the_quarantine_and_writes_nothing(
    root: Path, capsys: pytest.CaptureFixture[str], assert_unchanged: Any
) -> None:
    now = datetime.now(UTC).timestamp()
    os.utime(root / "_inbox/idea.md", (now - 3.5 * 86_400, now - 3.5 * 86_400))
    with assert_unchanged(root):
        assert main(["--root", str(root), "inbox"]) == 0
        text = capsys.readouterr().out
        assert main(["--root", str(root), "inbox", "--json"]) == 0
        result = json.loads(capsys.readouterr().out)
    assert text == (
        "   3d  _inbox/idea.md  [domain]\n       Stale Idea\n       An idea nobody needs.\n\n"
        "total: 1\n"
    )
    assert result["root"] == str(root) and result["count"] == 1
    assert result["entries"][0]["ageDays"] == 3
    (root / "_inbox/idea.md").unlink()
    assert main(["--root", str(root), "inbox"]) == 0
    assert capsys.readouterr().out == "(inbox empty)\n"
