"""do_spill, the bridge into the bank's _inbox/ (06 §13), through an injected create."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from memo_fixtures import FakeClock, remember
from write_calls import discard, init

from mbank.journal import read_records, where_did_it_go
from mbank.memo.model import MemoError
from mbank.memo.spill import SpillRefused, bank_inbox_writer
from mbank.memo.tools import MemoTools
from mbank.snapshot import Bank
from mbank.validate import findings


class FakeCreate:
    """Stands in for the bank's create pipeline (`bank_create` with `inbox: true`)."""

    def __init__(self, refuse: str | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.refuse = refuse

    def __call__(
        self,
        bank_root: Path,
        path: str,
        title: str,
        purpose: str,
        body: str,
        *,
        dry_run: bool = False,
    ) -> str:
        if self.refuse is not None:
            raise SpillRefused(self.refuse)
        self.calls.append(
            {"root": bank_root, "path": path, "title": title, "purpose": purpose, "body": body,
             "dry_run": dry_run}
        )  # fmt: skip
        return "--- diff" if dry_run else f"j-{len(self.calls)}"


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    (tmp_path / "_inbox").mkdir()
    return tmp_path


def _enable(tools: MemoTools, bank: Path, writer: FakeCreate) -> MemoTools:
    tools.bank_root = bank
    tools.inbox_writer = writer
    return tools


def test_spill_is_disabled_without_a_bank(tools: MemoTools) -> None:
    assert tools.spill_enabled is False
    with pytest.raises(MemoError) as caught:
        tools.do_spill("k")
    assert "--bank" in caught.value.message


def test_spill_writes_one_note_with_the_spec_path_title_purpose_and_body(
    tools: MemoTools, bank: Path, clock: FakeClock
) -> None:
    writer = FakeCreate()
    _enable(tools, bank, writer)
    task = remember(tools, "Ship the release", priority="high", tags=["ops"], session="s1",
                    body="Tag v1.2 and publish.")  # fmt: skip
    blocker = remember(tools, "CI is red", kind="blocker", priority="critical")
    tools.do_link(blocker, task, "", kind="blocks")
    done = remember(tools, "Old chore")
    tools.do_update_item(done, "", status="done")
    op = tools.store.state.op
    before = tools.store.state.canonical()

    result = tools.do_spill("k1")

    assert result["status"] == "success"
    assert result["applied_value"] == {
        "path": "_inbox/memo-20260914T120000Z.md",
        "items": 2,
        "omitted": 0,
        "journal_id": "j-1",
    }
    assert result["previous_value"] is None
    assert result["side_effects"] == ["writes one note into the bank's _inbox/"]
    assert "bank_discard" in result["compensation_hint"]
    [call] = writer.calls
    assert call["root"] == bank and call["dry_run"] is False
    assert call["title"] == "Working memory handoff 2026-09-14 12:00 UTC"
    assert call["purpose"] == (
        "Read when resuming this work: 2 open items carried over from a working-memory session."
    )
    assert call["body"] == (
        "2 open items, highest salience first; none left out by the limit. Captured from "
        "mbank's working memory and not yet reviewed.\n"
        "\n"
        "## Items\n"
        "\n"
        "### CI is red\n"
        "\n"
        f"- id: `{blocker}` · kind: blocker · status: pending · priority: critical\n"
        "\n"
        "### Ship the release\n"
        "\n"
        f"- id: `{task}` · kind: task · status: pending · priority: high · tags: ops · "
        "session: s1\n"
        f"- blocked by: CI is red (`{blocker}`)\n"
        "\n"
        "Tag v1.2 and publish.\n"
        "\n"
        "## Links\n"
        "\n"
        f"- `{blocker}` blocks `{task}`\n"
    )
    assert not call["body"].startswith("#")  # bank_create puts the H1 above it
    assert tools.store.state.op == op and tools.store.state.canonical() == before


def test_spill_by_session_with_a_limit_reports_what_was_left_out(
    tools: MemoTools, bank: Path
) -> None:
    writer = FakeCreate()
    _enable(tools, bank, writer)
    for i in range(3):
        remember(tools, f"item {i}", session="s2", body="x" * 1500)
    remember(tools, "elsewhere", session="other")
    result = tools.do_spill("k", session="s2", limit=2)
    assert result["applied_value"]["items"] == 2 and result["applied_value"]["omitted"] == 1
    call = writer.calls[0]
    assert call["title"].endswith(" — session s2")
    assert "1 left out by the limit" in call["body"]
    assert ("x" * 1000 + " …") in call["body"] and "x" * 1001 not in call["body"]
    assert "elsewhere" not in call["body"]


def test_spill_with_nothing_open_is_partial_and_writes_nothing(
    tools: MemoTools, bank: Path
) -> None:
    writer = FakeCreate()
    _enable(tools, bank, writer)
    result = tools.do_spill("k")
    assert result["status"] == "partial" and result["applied_value"] is None
    assert writer.calls == []


def test_spill_path_takes_a_suffix_when_taken(tools: MemoTools, bank: Path) -> None:
    writer = FakeCreate()
    _enable(tools, bank, writer)
    (bank / "_inbox" / "memo-20260914T120000Z.md").write_text("x")
    (bank / "_inbox" / "memo-20260914T120000Z-2.md").write_text("x")
    remember(tools, "Ship it")
    assert tools.do_spill("k")["applied_value"]["path"] == "_inbox/memo-20260914T120000Z-3.md"


def test_spill_dry_run_returns_the_diff_and_writes_nothing(tools: MemoTools, bank: Path) -> None:
    writer = FakeCreate()
    _enable(tools, bank, writer)
    remember(tools, "Ship it")
    result = tools.do_spill("k", dry_run=True)
    assert result["applied_value"] == {
        "path": "_inbox/memo-20260914T120000Z.md",
        "items": 1,
        "omitted": 0,
        "diff": "--- diff",
    }
    assert writer.calls[0]["dry_run"] is True and result["side_effects"] == []


def test_the_same_spill_key_replays_without_a_second_note(tools: MemoTools, bank: Path) -> None:
    writer = FakeCreate()
    _enable(tools, bank, writer)
    remember(tools, "Ship it")
    first = tools.do_spill("k")
    again = tools.do_spill("k")
    assert again == {**first, "replayed": True} and len(writer.calls) == 1


def test_a_bank_refusal_becomes_spill_refused(tools: MemoTools, bank: Path) -> None:
    _enable(tools, bank, FakeCreate(refuse="Refusing to overwrite an existing document: x.md"))
    remember(tools, "Ship it")
    with pytest.raises(MemoError) as caught:
        tools.do_spill("k")
    assert str(caught.value) == ("spill_refused: Refusing to overwrite an existing document: x.md")
    assert tools.store.idempotency.records == {}


@pytest.fixture
def seeded_bank(tmp_path: Path) -> Path:
    root = tmp_path / "memory_bank"
    init(Bank(root), {"name": "handoff"})
    return root


def test_spill_writes_through_the_real_create_pipeline(tools: MemoTools, seeded_bank: Path) -> None:
    """The real bridge: one note in `_inbox/`, journaled as an ordinary `bank_create` record
    (via mcp), no finding added, and the note answers "where did it go" once discarded."""
    before = findings(Bank(seeded_bank).refresh())
    tools.bank_root, tools.inbox_writer = seeded_bank, bank_inbox_writer
    remember(tools, "Ship the parser fix")
    remember(tools, "Check the flaky retry test")
    result = tools.do_spill("handoff-1")
    assert result["status"] == "success"
    applied = result["applied_value"]
    path = applied["path"]
    assert path.startswith("_inbox/memo-") and applied["items"] == 2
    snapshot = Bank(seeded_bank).refresh()
    doc = snapshot.docs[path]
    assert doc.title.startswith("Working memory handoff ") and doc.layer == "inbox"
    assert "### Ship the parser fix" in snapshot.raw[path]
    assert findings(snapshot) == before
    record = read_records(str(seeded_bank))[-1]
    assert (record.tool, record.via, record.id) == ("bank_create", "mcp", applied["journal_id"])
    discard(Bank(seeded_bank), {"path": path, "reason": "Reviewed; nothing durable."})
    note = where_did_it_go(str(seeded_bank), path)
    assert note is not None and "discarded" in note


def test_spill_dry_run_through_the_real_pipeline_writes_nothing(
    tools: MemoTools, seeded_bank: Path, assert_unchanged: Any
) -> None:
    tools.bank_root, tools.inbox_writer = seeded_bank, bank_inbox_writer
    remember(tools, "Ship the parser fix")
    with assert_unchanged(seeded_bank):
        result = tools.do_spill("handoff-dry", dry_run=True)
    diff = result["applied_value"]["diff"]
    assert diff.startswith("--- /dev/null\n+++ b/_inbox/memo-")


def test_a_real_bank_refusal_arrives_as_spill_refused(tools: MemoTools, tmp_path: Path) -> None:
    missing = tmp_path / "no-bank-here"
    tools.bank_root, tools.inbox_writer = missing, bank_inbox_writer
    remember(tools, "Ship it")
    with pytest.raises(MemoError) as caught:
        tools.do_spill("k")
    assert caught.value.code == "spill_refused"
    assert str(caught.value) == f"spill_refused: The bank root {missing} does not exist."
    assert not missing.exists()
