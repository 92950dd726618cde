"""`bank_update_section` (spec 03 §6, spec 07 §3.15): write one existing `##` section."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from typing import Any

import pytest
from document_writes import Writer, apply_diff, normalise, run_cli

from mbank.reducers.update_section import TOOL, format_update_section, gate_and_plan
from mbank.validate import findings

UPDATE = "bank_update_section"
RULES = "domain/rules.md"


def identities(writer: Writer) -> set[tuple[str, str, str]]:
    return {(f.rule, f.path, f.message) for f in findings(writer.bank.refresh())}


def head_of(text: str) -> str:
    return text[: text.index("---\n", 4) + 4]


@pytest.fixture
def writer(fixture_plus: Path) -> Writer:
    return Writer(fixture_plus)


def test_replace_plans_one_replace_op(writer: Writer, snapshot: Any) -> None:
    arguments = {"path": RULES, "section": "thresholds", "content": "L1 rejects below 65."}
    planned = writer.planned(gate_and_plan, TOOL, arguments)
    assert [op["kind"] for op in planned["plan"]["ops"]] == ["replace"]
    assert planned == snapshot


def test_append_plans_the_old_text_then_the_new(writer: Writer, snapshot: Any) -> None:
    arguments = {
        "path": RULES,
        "section": "Invariants",
        "content": "Scores are never shown to customers.",
        "mode": "append",
    }
    planned = writer.planned(gate_and_plan, TOOL, arguments)
    assert planned["result"]["mode"] == "append"
    assert planned == snapshot


def test_replace_keeps_the_frontmatter_and_every_other_section(writer: Writer) -> None:
    before = writer.text(RULES)
    writer.call(UPDATE, {"path": RULES, "section": "Thresholds", "content": "L1 rejects below 65."})
    after = writer.text(RULES)
    assert head_of(after) == head_of(before)
    invariants = before[before.index("## Invariants") :]
    assert after.endswith(invariants)
    assert after[: after.index("## Thresholds")] == before[: before.index("## Thresholds")]
    assert "## Thresholds\n\nL1 rejects below 65.\n\n## Invariants" in after
    assert "L2 flags below 75" not in after


def test_append_keeps_the_old_content_first(writer: Writer) -> None:
    writer.call(
        UPDATE, {"path": RULES, "section": "Invariants", "content": "One more.", "mode": "append"}
    )
    after = writer.text(RULES)
    assert "the missing fields, never with a bare number.\n\nOne more.\n\n## Пороги" in after


def test_result_has_the_spec_keys_in_order(writer: Writer, snapshot: Any) -> None:
    arguments = {"path": RULES, "section": "пороги", "content": "Новый текст."}
    dry = writer.call(UPDATE, arguments, dry_run=True)
    assert list(dry) == [
        "path",
        "section",
        "mode",
        "updated",
        "dryRun",
        "bytesBefore",
        "bytesAfter",
        "preview",
        "diff",
    ]
    real = writer.call(UPDATE, arguments)
    assert list(real) == [
        "path",
        "section",
        "mode",
        "updated",
        "dryRun",
        "bytesBefore",
        "bytesAfter",
        "preview",
        "journalId",
    ]
    assert real["section"] == "Пороги" and real["updated"] is True and dry["updated"] is False
    assert real["preview"] == "## Пороги\n\nНовый текст.\n"
    assert normalise({"dry": dry, "real": real}, writer.root) == snapshot


def test_the_dry_run_diff_applied_to_the_pre_state_gives_the_post_state(writer: Writer) -> None:
    arguments = {"path": RULES, "section": "Invariants", "content": "Short.", "mode": "append"}
    before = writer.text(RULES)
    dry = writer.call(UPDATE, arguments, dry_run=True)
    assert writer.text(RULES) == before
    writer.call(UPDATE, arguments)
    assert apply_diff({RULES: before}, dry["diff"])[RULES] == writer.text(RULES)


def test_the_document_stays_valid(writer: Writer) -> None:
    before = identities(writer)
    writer.call(UPDATE, {"path": RULES, "section": "Thresholds", "content": "L1 rejects below 65."})
    writer.call(
        UPDATE, {"path": RULES, "section": "Thresholds", "content": "More.", "mode": "append"}
    )
    assert identities(writer) == before


def test_a_missing_section_is_refused_with_the_real_ones(
    writer: Writer, assert_unchanged: Any
) -> None:
    (writer.root / "plain.md").write_text("---\ntitle: Plain\n---\n# Plain\n\nNo sections.\n")
    with assert_unchanged(writer.root):
        assert writer.refusal(UPDATE, {"path": RULES, "section": "Missing", "content": "x"}) == (
            "section-not-found",
            'Section "Missing" not found in domain/rules.md. Available: Thresholds | Invariants '
            "| Пороги",
        )
        assert writer.refusal(UPDATE, {"path": "plain.md", "section": "Any", "content": "x"})[
            1
        ].endswith("Available: (none)")
        assert writer.refusal(UPDATE, {"path": "README.md", "section": "s", "content": "x"}) == (
            "section-ambiguous",
            'Section "s" matches several sections in README.md: Sections | Key Documents | '
            "Housekeeping. Give the full heading.",
        )
        # a Cyrillic name that matches nothing is refused, never answered with the first heading
        reason, _ = writer.refusal(UPDATE, {"path": RULES, "section": "Правила", "content": "x"})
        assert reason == "section-not-found"


def test_section_and_content_are_required(writer: Writer, assert_unchanged: Any) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(UPDATE, {"path": RULES, "section": " ", "content": "x"}) == (
            "section-required",
            "`section` is required: this tool writes one named section, never a whole document.",
        )
        assert writer.refusal(
            UPDATE, {"path": RULES, "section": "Thresholds", "content": " \n"}
        ) == (
            "content-required",
            "`content` is empty. To remove a section, edit the document by hand and say so.",
        )
        assert writer.refusal(UPDATE, {"path": RULES, "section": "Thresholds"}) == (
            "content-required",
            "`content` is empty. To remove a section, edit the document by hand and say so.",
        )


def test_document_refusals(writer: Writer, assert_unchanged: Any) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(
            UPDATE, {"path": "flows/templates/adr/ADR-ID.md", "section": "Context", "content": "x"}
        ) == (
            "template",
            "flows/templates/adr/ADR-ID.md is a template. Templates are edited by hand, not "
            "through the server.",
        )
        assert writer.refusal(
            UPDATE, {"path": "broken/latin1.md", "section": "x", "content": "x"}
        ) == ("not-text", "broken/latin1.md is not UTF-8 text, so mbank does not write to it.")
        assert writer.refusal(
            UPDATE, {"path": "domain/none.md", "section": "x", "content": "x"}
        ) == (
            "not-a-document",
            "Not a document of this bank: domain/none.md",
        )
        assert writer.refusal(UPDATE, {"path": "/etc/x.md", "section": "x", "content": "x"}) == (
            "path-outside",
            "Path must stay inside the bank: /etc/x.md",
        )


def test_inbox_notes_may_be_amended(writer: Writer) -> None:
    (writer.root / "_inbox").mkdir()
    note = "---\ntitle: Captured\nstatus: draft\n---\n# Captured\n\n## Finding\n\nFirst guess.\n"
    (writer.root / "_inbox" / "captured.md").write_text(note)
    result = writer.call(
        UPDATE, {"path": "_inbox/captured.md", "section": "Finding", "content": "Confirmed."}
    )
    assert result["updated"] is True
    assert writer.text("_inbox/captured.md") == note.replace("First guess.", "Confirmed.")


def test_content_file_inside_the_project(writer: Writer) -> None:
    source = writer.root.parent / "section.md"
    source.write_text("From a file.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    result = writer.call(
        UPDATE, {"path": RULES, "section": "Thresholds", "contentFile": str(source)}
    )
    assert result["updated"] is True
    assert "## Thresholds\n\nFrom a file.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## Invariants" in (
        writer.text(RULES)
    )


def test_content_file_refusals(writer: Writer, assert_unchanged: Any) -> None:
    (writer.root.parent / ".env").write_text("SECRET=1\n")
    with assert_unchanged(writer.root):
        assert writer.refusal(
            UPDATE, {"path": RULES, "section": "Thresholds", "content": "x", "contentFile": "a.md"}
        ) == ("file-both", "Pass either content or contentFile, not both.")
        assert writer.refusal(
            UPDATE, {"path": RULES, "section": "Thresholds", "contentFile": " "}
        ) == (
            "file-empty",
            "contentFile is empty. Pass a path, or use content for content you have in hand.",
        )
        assert writer.refusal(
            UPDATE, {"path": RULES, "section": "Thresholds", "contentFile": "missing.md"}
        ) == (
            "file-unreadable",
            'contentFile "missing.md" could not be read (no such file). The path is absolute, or '
            "relative to the server's working directory.",
        )
        reason, _ = writer.refusal(
            UPDATE, {"path": RULES, "section": "Thresholds", "contentFile": ".env"}
        )
        assert reason == "file-hidden"
        reason, _ = writer.refusal(
            UPDATE, {"path": RULES, "section": "Thresholds", "contentFile": "/etc/passwd"}
        )
        assert reason == "file-outside"


def test_the_section_ends_at_the_next_h2_and_holds_h1_and_h3_lines(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    text = (
        "---\ntitle: Doc\n---\n# Doc\n\n## First   ##\n\nOld.\n\n### Detail\n\nDeep.\n\n"
        "# Stray\n\nStill first.\n\n## Second\n\nKept.\n"
    )
    (root / "doc.md").write_text(text)
    writer = Writer(root)
    result = writer.call(UPDATE, {"path": "doc.md", "section": "first", "content": "New."})
    assert result["section"] == "First"
    assert (
        writer.text("doc.md")
        == "---\ntitle: Doc\n---\n# Doc\n\n## First\n\nNew.\n\n## Second\n\nKept.\n"
    )


def test_runs_of_blank_lines_collapse_in_the_whole_body(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    text = "---\ntitle: Doc\n---\n# Doc\n\n\n\nIntro.\n\n## One\n\nA.\n\n\n\n## Two\n\nB.\n\n\n"
    (root / "doc.md").write_text(text)
    writer = Writer(root)
    writer.call(UPDATE, {"path": "doc.md", "section": "Two", "content": "C.\n\n\n\nD."})
    assert writer.text("doc.md") == (
        "---\ntitle: Doc\n---\n# Doc\n\nIntro.\n\n## One\n\nA.\n\n## Two\n\nC.\n\nD.\n"
    )


def test_the_preview_is_the_first_20_lines_of_the_section(writer: Writer) -> None:
    content = "\n".join(f"line {n}" for n in range(30))
    result = writer.call(UPDATE, {"path": RULES, "section": "Thresholds", "content": content})
    assert result["preview"].split("\n") == ["## Thresholds", ""] + [f"line {n}" for n in range(18)]


def test_the_same_content_again_is_a_no_op(writer: Writer) -> None:
    arguments = {"path": RULES, "section": "Thresholds", "content": "L1 rejects below 65."}
    writer.call(UPDATE, arguments)
    records = writer.journal_count()
    again = writer.call(UPDATE, arguments)
    assert again["updated"] is False and "journalId" not in again
    assert writer.journal_count() == records
    assert writer.call(UPDATE, arguments, dry_run=True)["diff"] == ""


def test_a_crlf_file_stays_crlf_and_a_bom_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    text = "---\ntitle: Notes\n---\n# Notes\n\n## One\n\nFirst.\n\n## Two\n\nSecond.\n"
    (root / "crlf.md").write_bytes(text.replace("\n", "\r\n").encode())
    (root / "bom.md").write_bytes(("\ufeff" + text).encode())
    writer = Writer(root)
    for path in ("crlf.md", "bom.md"):
        writer.call(UPDATE, {"path": path, "section": "One", "content": "Changed.\r\nTwice."})
    expected = text.replace("First.", "Changed.\nTwice.")
    assert (root / "crlf.md").read_bytes() == expected.replace("\n", "\r\n").encode()
    assert (root / "bom.md").read_bytes() == ("\ufeff" + expected).encode()


def test_a_section_holding_a_10000_row_table(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    rows = "".join(f"| row {n} | value {n} |\n" for n in range(10_000))
    table = f"| a | b |\n|---|---|\n{rows}"
    text = f"---\ntitle: Big\n---\n# Big\n\n## Table\n\n{table}\n## After\n\nEnd.\n"
    (root / "big.md").write_text(text)
    writer = Writer(root)
    started = time.monotonic()
    writer.call(
        UPDATE, {"path": "big.md", "section": "Table", "content": "| new |", "mode": "append"}
    )
    assert time.monotonic() - started < 10
    assert writer.text("big.md") == text.replace(
        "| value 9999 |\n\n## After", "| value 9999 |\n\n| new |\n\n## After"
    )


def test_a_section_among_10000_headings(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    sections = "".join(f"## Part {n}\n\nText {n}.\n\n" for n in range(10_000))
    text = f"---\ntitle: Many\n---\n# Many\n\n{sections}"
    (root / "many.md").write_text(text)
    writer = Writer(root)
    started = time.monotonic()
    writer.call(UPDATE, {"path": "many.md", "section": "Part 5000", "content": "Replaced."})
    assert time.monotonic() - started < 10
    assert writer.text("many.md") == text.replace("Text 5000.", "Replaced.").rstrip() + "\n"


def test_human_output(writer: Writer, snapshot: Any) -> None:
    arguments = {"path": RULES, "section": "Invariants", "content": "Short.", "mode": "append"}
    dry = format_update_section(writer.call(UPDATE, arguments, dry_run=True))
    real = format_update_section(writer.call(UPDATE, arguments))
    same = format_update_section(
        writer.call(UPDATE, {**arguments, "mode": "replace", "content": writer_section(writer)})
    )
    assert dry.startswith("WOULD UPDATE domain/rules.md :: Invariants (append)  (")
    assert real.startswith("UPDATED domain/rules.md :: Invariants (append)  (")
    assert same.startswith("UNCHANGED domain/rules.md :: Invariants (replace)")
    assert normalise({"dry": dry, "real": real, "same": same}, writer.root) == snapshot


def writer_section(writer: Writer) -> str:
    text = writer.text(RULES)
    start = text.index("## Invariants\n") + len("## Invariants\n")
    return text[start : text.index("## Пороги")]


def test_cli_update_section(
    writer: Writer, capsys: Any, snapshot: Any, assert_unchanged: Any, monkeypatch: Any
) -> None:
    root = str(writer.root)
    argv = ["--root", root, "update-section", RULES, "thresholds"]
    with assert_unchanged(writer.root):
        dry = run_cli([*argv, "--content", "L1 rejects below 65.", "--dry-run"], capsys)
        refused = run_cli(
            ["--root", root, "update-section", RULES, "Missing", "--content", "x"], capsys
        )
        both = run_cli([*argv, "--content", "x", "--content-file", "a.md"], capsys)
    assert dry[0] == 0
    assert dry[1].startswith("WOULD UPDATE domain/rules.md :: Thresholds (replace)  (")
    assert "--- diff ---\n--- a/domain/rules.md\n" in dry[1]
    assert refused == (
        1,
        "",
        'mbank: Section "Missing" not found in domain/rules.md. Available: Thresholds | '
        "Invariants | Пороги\n",
    )
    assert both == (1, "", "mbank: Pass either content or contentFile, not both.\n")
    monkeypatch.setattr("sys.stdin", io.StringIO("Piped in.\n"))
    real = run_cli(["--json", *argv, "--content-file", "-", "--mode", "append"], capsys)
    assert real[0] == 0
    data = json.loads(real[1])
    assert data["updated"] is True and data["mode"] == "append"
    assert "\n\nPiped in.\n\n## Invariants" in writer.text(RULES)
    assert normalise({"dry": dry[1], "json": data}, writer.root) == snapshot


GALLERY = {
    "replace-russian": {"path": RULES, "section": "Пороги", "content": "Новый порог."},
    "append-inbox": {
        "path": "_inbox/n.md",
        "section": "Finding",
        "content": "More.",
        "mode": "append",
    },
    "crlf-file": {"path": "crlf.md", "section": "One", "content": "Changed."},
    "bom-file": {"path": "bom.md", "section": "Two", "content": "Changed.", "mode": "append"},
    "same-content": {"path": "crlf.md", "section": "Two", "content": "Second."},
}


@pytest.mark.parametrize("name", sorted(GALLERY))
def test_every_kind_of_update_plan(writer: Writer, snapshot: Any, name: str) -> None:
    text = "---\ntitle: Notes\n---\n# Notes\n\n## One\n\nFirst.\n\n## Two\n\nSecond.\n"
    (writer.root / "crlf.md").write_bytes(text.replace("\n", "\r\n").encode())
    (writer.root / "bom.md").write_bytes(("\ufeff" + text).encode())
    (writer.root / "_inbox").mkdir()
    (writer.root / "_inbox" / "n.md").write_text("---\ntitle: N\n---\n# N\n\n## Finding\n\nX.\n")
    assert writer.planned(gate_and_plan, TOOL, GALLERY[name]) == snapshot
