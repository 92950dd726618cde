"""`bank_edit` (spec 03 §5, spec 07 §3.15): one exact fragment of a body, never a guess."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from document_writes import Writer, apply_diff, normalise, run_cli
from planners import no_findings, plan_move

from mbank.model import RefusalError
from mbank.read import read as read_documents
from mbank.reducers.edit import TOOL, format_edit, gate_and_plan
from mbank.validate import findings
from mbank.writes import execute

EDIT = "bank_edit"
RULES_PATH = "domain/rules.md"


def identities(writer: Writer) -> set[tuple[str, str, str]]:
    return {(f.rule, f.path, f.message) for f in findings(writer.bank.refresh())}


@pytest.fixture
def writer(fixture_plus: Path) -> Writer:
    return Writer(fixture_plus)


def test_edit_plans_one_replace_of_the_document(writer: Writer, snapshot: Any) -> None:
    arguments = {
        "path": "domain/rules.md",
        "find": "L1 rejects below 60.",
        "replace": "L1 rejects below 65.",
    }
    planned = writer.planned(gate_and_plan, TOOL, arguments)
    assert [op["kind"] for op in planned["plan"]["ops"]] == ["replace"]
    assert planned == snapshot


def test_edit_result_has_the_spec_keys_in_order(writer: Writer, snapshot: Any) -> None:
    arguments = {"path": "domain/rules.md", "find": "fails L1", "replace": "fails level one"}
    dry = writer.call(EDIT, {**arguments, "section": "invariants"}, dry_run=True)
    assert list(dry) == [
        "path",
        "section",
        "edited",
        "dryRun",
        "bytesBefore",
        "bytesAfter",
        "context",
        "diff",
    ]
    assert dry["edited"] is False and dry["section"] == "Invariants"
    real = writer.call(EDIT, arguments)
    assert list(real) == [
        "path",
        "edited",
        "dryRun",
        "bytesBefore",
        "bytesAfter",
        "context",
        "journalId",
    ]
    assert real["edited"] is True
    assert real["bytesAfter"] == real["bytesBefore"] + len("level one") - len("L1")
    assert normalise({"dry": dry, "real": real}, writer.root) == snapshot


def test_the_dry_run_diff_applied_to_the_pre_state_gives_the_post_state(writer: Writer) -> None:
    arguments = {"path": "domain/rules.md", "find": "L2 flags below 75.", "replace": "L2 flags."}
    before = writer.text("domain/rules.md")
    dry = writer.call(EDIT, arguments, dry_run=True)
    assert writer.text("domain/rules.md") == before
    writer.call(EDIT, arguments)
    patched = apply_diff({"domain/rules.md": before}, dry["diff"])
    assert patched["domain/rules.md"] == writer.text("domain/rules.md")


def test_context_is_80_characters_either_side_of_the_replacement(writer: Writer) -> None:
    result = writer.call(
        EDIT, {"path": "domain/rules.md", "find": "L2 flags below 75.", "replace": "L2 flags."}
    )
    body = writer.text("domain/rules.md").split("---\n", 2)[2]
    at = body.index("L2 flags.")
    assert result["context"] == body[at - 80 : at + len("L2 flags.") + 80]


def test_edit_changes_one_table_row(writer: Writer, snapshot: Any) -> None:
    row = "| [Service Architecture](engineering/architecture.md) | Components of the service"
    arguments = {
        "path": "README.md",
        "find": row,
        "replace": row.replace("Components of", "The parts of"),
    }
    planned = writer.planned(gate_and_plan, TOOL, arguments)
    assert planned == snapshot
    before = writer.text("README.md")
    writer.call(EDIT, arguments)
    after = writer.text("README.md")
    changed = [
        (old, new)
        for old, new in zip(before.splitlines(), after.splitlines(), strict=True)
        if old != new
    ]
    assert len(changed) == 1 and changed[0][1].startswith("| [Service Architecture]")


def test_a_renamed_heading_is_addressable_at_once(writer: Writer) -> None:
    writer.call(EDIT, {"path": "domain/rules.md", "find": "## Thresholds", "replace": "## Limits"})
    snapshot = writer.bank.refresh()
    read = read_documents(snapshot, "domain/rules.md", section="Limits")
    assert read["content"].startswith("## Limits\n\nL1 rejects below 60.")
    result = writer.call(
        EDIT,
        {
            "path": "domain/rules.md",
            "find": "L1 rejects",
            "replace": "Level one rejects",
            "section": "limits",
        },
        dry_run=True,
    )
    assert result["section"] == "Limits"


def test_section_narrows_the_search(writer: Writer) -> None:
    # "L1" occurs in Thresholds (twice) and Invariants (once)
    result = writer.call(
        EDIT,
        {"path": "domain/rules.md", "find": "L1", "replace": "level one", "section": "Invariants"},
    )
    text = writer.text("domain/rules.md")
    assert "A job that fails level one never reaches the scorer" in text
    assert "L1 rejects below 60." in text
    assert result["section"] == "Invariants"


def test_several_occurrences_are_refused_with_the_count(
    writer: Writer, assert_unchanged: Any
) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(
            EDIT, {"path": "domain/rules.md", "find": "Thresholds", "replace": "Limits"}
        ) == (
            "found-several",
            "Found 2 times in domain/rules.md. Give more surrounding text, or pass section to "
            "narrow it: replacing the first of several is a guess, and this tool does not guess.",
        )
        assert writer.refusal(
            EDIT,
            {"path": "domain/rules.md", "find": "L1", "replace": "x", "section": "Thresholds"},
        ) == (
            "found-several",
            'Found 2 times in domain/rules.md under "Thresholds". Give more surrounding text, or '
            "pass section to narrow it: replacing the first of several is a guess, and this tool "
            "does not guess.",
        )


def test_a_missing_fragment_is_refused_with_its_first_80_characters_as_json(
    writer: Writer, assert_unchanged: Any
) -> None:
    long = "Ünïcode “quoted” " + "x" * 100
    with assert_unchanged(writer.root):
        assert writer.refusal(EDIT, {"path": "domain/rules.md", "find": long, "replace": "y"}) == (
            "not-found",
            'Not found in domain/rules.md: "Ünïcode “quoted” '
            + "x" * 63
            + '". Read the document first — the text must match exactly, whitespace included.',
        )
        assert writer.refusal(
            EDIT,
            {
                "path": "domain/rules.md",
                "find": "L2 flags",
                "replace": "y",
                "section": "Invariants",
            },
        ) == (
            "not-found",
            'Not found in domain/rules.md under "Invariants": "L2 flags". Read the document '
            "first — the text must match exactly, whitespace included.",
        )


def test_the_frontmatter_is_out_of_reach(writer: Writer, assert_unchanged: Any) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(
            EDIT, {"path": "domain/rules.md", "find": "doc_kind:", "replace": "kind:"}
        ) == (
            "not-found",
            'Not found in domain/rules.md: "doc_kind:". Read the document first — the text must '
            "match exactly, whitespace included.",
        )


def test_whitespace_must_match_exactly(writer: Writer, assert_unchanged: Any) -> None:
    with assert_unchanged(writer.root):
        reason, _ = writer.refusal(
            EDIT, {"path": "domain/rules.md", "find": "L1  rejects", "replace": "x"}
        )
    assert reason == "not-found"


def test_find_is_required_and_must_differ_from_replace(
    writer: Writer, assert_unchanged: Any
) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(EDIT, {"path": "domain/rules.md", "find": "", "replace": "x"}) == (
            "find-required",
            "`find` is required: this tool replaces an exact fragment, never a whole document.",
        )
        assert writer.refusal(EDIT, {"path": "domain/rules.md", "find": "L1", "replace": "L1"}) == (
            "find-equals-replace",
            "`find` and `replace` are identical; nothing to do.",
        )


def test_templates_are_edited_by_hand(writer: Writer, assert_unchanged: Any) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(
            EDIT, {"path": "flows/templates/adr/ADR-ID.md", "find": "Context", "replace": "x"}
        ) == (
            "template",
            "flows/templates/adr/ADR-ID.md is a template. Templates are edited by hand, not "
            "through the server.",
        )


def test_unknown_paths_and_non_text_documents_are_refused(
    writer: Writer, assert_unchanged: Any
) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(EDIT, {"path": "./nowhere.md", "find": "a", "replace": "b"}) == (
            "not-a-document",
            "Not a document of this bank: ./nowhere.md",
        )
        assert writer.refusal(EDIT, {"path": "broken/latin1.md", "find": "a", "replace": "b"}) == (
            "not-text",
            "broken/latin1.md is not UTF-8 text, so mbank does not write to it.",
        )
        assert writer.refusal(EDIT, {"path": "../x.md", "find": "a", "replace": "b"}) == (
            "path-outside",
            "Path must stay inside the bank: ../x.md",
        )
        assert writer.refusal(EDIT, {"path": "  ", "find": "a", "replace": "b"}) == (
            "path-empty",
            "`path` is required.",
        )


def test_a_moved_path_is_answered_with_where_it_went(writer: Writer, assert_unchanged: Any) -> None:
    (writer.root / "_inbox").mkdir()
    (writer.root / "_inbox" / "n.md").write_text("---\ntitle: Note\n---\n# Note\n\nCaptured.\n")
    outcome = execute(
        writer.bank,
        "bank_promote",
        {"from": "_inbox/n.md", "to": "domain/terms.md", "index": "domain/README.md"},
        plan_move,
        dry_run=False,
        findings_for=no_findings,
        clock=writer.clock,
        make_id=writer.ids,
    )
    with assert_unchanged(writer.root):
        assert writer.refusal(EDIT, {"path": "_inbox/n.md", "find": "a", "replace": "b"}) == (
            "not-a-document",
            "Not a document of this bank: _inbox/n.md. It was promoted to domain/terms.md on "
            f"2026-09-14 (journal {outcome.journal_id}).",
        )


def test_section_refusals_name_the_real_sections(writer: Writer, assert_unchanged: Any) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(
            EDIT, {"path": "domain/rules.md", "find": "a", "replace": "b", "section": "Missing"}
        ) == (
            "section-not-found",
            'Section "Missing" not found in domain/rules.md. Available: Thresholds | Invariants '
            "| Пороги",
        )
        assert writer.refusal(
            EDIT, {"path": "README.md", "find": "a", "replace": "b", "section": "e"}
        ) == (
            "section-ambiguous",
            'Section "e" matches several sections in README.md: Sections | Key Documents | '
            "Housekeeping. Give the full heading.",
        )


def test_an_edit_that_would_add_an_error_is_refused_by_the_post_check(
    writer: Writer, assert_unchanged: Any
) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(
            EDIT, {"path": "domain/README.md", "find": "](glossary.md)", "replace": "](gone.md)"}
        ) == (
            "postcheck",
            "This write would add 1 validation error, so nothing was written:\n"
            "- [dangling-index-entry] domain/README.md: Index links to a file that does not "
            "exist: gone.md",
        )


def test_an_edit_adds_no_finding(writer: Writer) -> None:
    before = identities(writer)
    writer.call(
        EDIT, {"path": "domain/rules.md", "find": "L1 rejects", "replace": "Level 1 rejects"}
    )
    assert identities(writer) == before


def test_a_new_warning_is_reported(writer: Writer) -> None:
    result = writer.call(
        EDIT,
        {"path": "domain/README.md", "find": "- [Domain Glossary](glossary.md)", "replace": "-"},
    )
    assert result["warnings"] == [
        "New warning unregistered-doc on domain/glossary.md: No index links to this document, "
        "so navigation cannot reach it."
    ]


def test_a_crlf_file_stays_crlf(tmp_path: Path, snapshot: Any) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    text = "---\ntitle: Notes\ndoc_kind: domain\nstatus: draft\n---\n# Notes\n\n## One\n\nFirst.\n"
    (root / "notes.md").write_bytes(text.replace("\n", "\r\n").encode())
    writer = Writer(root)
    result = writer.call(
        EDIT, {"path": "notes.md", "find": "First.\r\n", "replace": "First line.\nSecond.\n"}
    )
    data = (root / "notes.md").read_bytes()
    assert data == text.replace("First.\n", "First line.\nSecond.\n").replace("\n", "\r\n").encode()
    assert result["bytesAfter"] == len(data)


def test_a_bom_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    text = "\ufeff---\ntitle: Notes\nstatus: draft\n---\n# Notes\n\nFirst.\n"
    (root / "notes.md").write_text(text, encoding="utf-8")
    writer = Writer(root)
    writer.call(EDIT, {"path": "notes.md", "find": "First.", "replace": "Second."})
    assert (root / "notes.md").read_bytes() == text.replace("First.", "Second.").encode()


def test_one_row_of_a_10000_row_table(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    rows = "\n".join(f"| row {n} | value {n} |" for n in range(10_000))
    table = f"| a | b |\n|---|---|\n{rows}\n"
    text = f"---\ntitle: Big\n---\n# Big\n\n## Table\n\n{table}\n## After\n\nEnd.\n"
    (root / "big.md").write_text(text)
    writer = Writer(root)
    started = time.monotonic()
    writer.call(
        EDIT,
        {
            "path": "big.md",
            "find": "| row 9999 | value 9999 |",
            "replace": "| row 9999 | changed |",
            "section": "Table",
        },
    )
    assert time.monotonic() - started < 10
    assert writer.text("big.md") == text.replace("| value 9999 |", "| changed |")


def test_a_section_among_10000_headings(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    sections = "".join(f"## Part {n}\n\nText {n}.\n\n" for n in range(10_000))
    text = f"---\ntitle: Many\n---\n# Many\n\n{sections}"
    (root / "many.md").write_text(text)
    writer = Writer(root)
    started = time.monotonic()
    writer.call(
        EDIT, {"path": "many.md", "find": "Text", "replace": "Line", "section": "Part 9876"}
    )
    assert time.monotonic() - started < 10
    assert writer.text("many.md") == text.replace("Text 9876.", "Line 9876.")


def test_human_output(writer: Writer, snapshot: Any) -> None:
    arguments = {
        "path": "domain/rules.md",
        "find": "L1",
        "replace": "L-one",
        "section": "Invariants",
    }
    dry = format_edit(writer.call(EDIT, arguments, dry_run=True))
    real = format_edit(writer.call(EDIT, arguments))
    assert dry.startswith('WOULD EDIT domain/rules.md under "Invariants"  (')
    assert real.startswith('EDITED domain/rules.md under "Invariants"  (')
    assert normalise({"dry": dry, "real": real}, writer.root) == snapshot


def test_refusals_raise_refusal_errors_through_the_shell(writer: Writer) -> None:
    with pytest.raises(RefusalError) as caught:
        writer.call(EDIT, {"path": "domain/rules.md", "find": "", "replace": "x"})
    assert caught.value.refusal.rule == "find-required"


def test_cli_edit(writer: Writer, capsys: Any, snapshot: Any, assert_unchanged: Any) -> None:
    root = str(writer.root)
    argv = ["--root", root, "edit", RULES_PATH, "--find", "L1 rejects", "--replace", "L-1 rejects"]
    with assert_unchanged(writer.root):
        dry = run_cli([*argv, "--dry-run"], capsys)
        refused = run_cli(
            ["--root", root, "edit", RULES_PATH, "--find", "L1", "--replace", "x"], capsys
        )
    assert dry[0] == 0 and dry[1].startswith("WOULD EDIT domain/rules.md  (1327 -> 1328 bytes)\n")
    assert refused == (
        1,
        "",
        "mbank: Found 3 times in domain/rules.md. Give more surrounding text, or pass section "
        "to narrow it: replacing the first of several is a guess, and this tool does not guess.\n",
    )
    real = run_cli(["--json", *argv], capsys)
    assert real[0] == 0 and real[2] == ""
    data = json.loads(real[1])
    assert data["edited"] is True and data["dryRun"] is False and "journalId" in data
    assert normalise({"dry": dry[1], "json": data}, writer.root) == snapshot
    record = (writer.root / ".mbank" / "journal.jsonl").read_text().splitlines()[-1]
    assert json.loads(record)["via"] == "cli"


GALLERY = {
    "section-narrowed": {
        "path": RULES_PATH,
        "find": "fails L1",
        "replace": "fails level one",
        "section": "Invariants",
    },
    "heading-renamed": {"path": RULES_PATH, "find": "## Thresholds", "replace": "## Limits"},
    "russian-section": {
        "path": RULES_PATH,
        "find": "Пороги проверяются",
        "replace": "Пороги сверяются",
        "section": "пороги",
    },
    "crlf-file": {"path": "crlf.md", "find": "First.", "replace": "First, CRLF kept."},
    "bom-file": {"path": "bom.md", "find": "First.", "replace": "First, BOM kept."},
}


@pytest.mark.parametrize("name", sorted(GALLERY))
def test_every_kind_of_edit_plan(writer: Writer, snapshot: Any, name: str) -> None:
    text = "---\ntitle: Notes\nstatus: draft\n---\n# Notes\n\nFirst.\n"
    (writer.root / "crlf.md").write_bytes(text.replace("\n", "\r\n").encode())
    (writer.root / "bom.md").write_bytes(("\ufeff" + text).encode())
    assert writer.planned(gate_and_plan, TOOL, GALLERY[name]) == snapshot
