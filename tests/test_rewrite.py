"""`bank_rewrite` (spec 03 §7, spec 07 §3.15): the whole body, frontmatter and index kept."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from document_writes import Writer, apply_diff, normalise, run_cli

from mbank.reducers.rewrite import TOOL, format_rewrite, gate_and_plan
from mbank.validate import findings

REWRITE = "bank_rewrite"
GLOSSARY = "domain/glossary.md"
NEW_BODY = (
    "# Domain Glossary\n\n## Terms\n\n- **Job**: one unit of work.\n- **Worker**: runs jobs.\n"
)


def identities(writer: Writer) -> set[tuple[str, str, str]]:
    return {(f.rule, f.path, f.message) for f in findings(writer.bank.refresh())}


def head_of(text: str) -> str:
    return text[: text.index("---\n", 4) + 4]


@pytest.fixture
def writer(fixture_plus: Path) -> Writer:
    return Writer(fixture_plus)


def test_rewrite_plans_one_replace_op(writer: Writer, snapshot: Any) -> None:
    planned = writer.planned(gate_and_plan, TOOL, {"path": GLOSSARY, "body": NEW_BODY})
    assert [op["kind"] for op in planned["plan"]["ops"]] == ["replace"]
    assert planned == snapshot


def test_the_frontmatter_and_the_index_entry_are_kept(writer: Writer) -> None:
    before = writer.text(GLOSSARY)
    index = writer.text("domain/README.md")
    result = writer.call(REWRITE, {"path": GLOSSARY, "body": NEW_BODY})
    after = writer.text(GLOSSARY)
    assert head_of(after) == head_of(before)
    assert after == head_of(before) + NEW_BODY
    assert writer.text("domain/README.md") == index
    assert result["rewritten"] is True and result["warnings"] == []


def test_result_has_the_spec_keys_in_order(writer: Writer, snapshot: Any) -> None:
    dry = writer.call(REWRITE, {"path": GLOSSARY, "body": NEW_BODY}, dry_run=True)
    assert list(dry) == [
        "path",
        "rewritten",
        "dryRun",
        "bytesBefore",
        "bytesAfter",
        "warnings",
        "preview",
        "diff",
    ]
    real = writer.call(REWRITE, {"path": GLOSSARY, "body": NEW_BODY})
    assert list(real) == [
        "path",
        "rewritten",
        "dryRun",
        "bytesBefore",
        "bytesAfter",
        "warnings",
        "preview",
        "journalId",
    ]
    assert real["bytesAfter"] == len((writer.root / GLOSSARY).read_bytes())
    assert normalise({"dry": dry, "real": real}, writer.root) == snapshot


def test_the_dry_run_diff_applied_to_the_pre_state_gives_the_post_state(writer: Writer) -> None:
    before = writer.text(GLOSSARY)
    dry = writer.call(REWRITE, {"path": GLOSSARY, "body": NEW_BODY}, dry_run=True)
    assert writer.text(GLOSSARY) == before
    writer.call(REWRITE, {"path": GLOSSARY, "body": NEW_BODY})
    assert apply_diff({GLOSSARY: before}, dry["diff"])[GLOSSARY] == writer.text(GLOSSARY)


def test_a_second_identical_rewrite_is_a_no_op_without_a_journal_record(writer: Writer) -> None:
    writer.call(REWRITE, {"path": GLOSSARY, "body": NEW_BODY})
    records = writer.journal_count()
    again = writer.call(REWRITE, {"path": GLOSSARY, "body": "\n\n" + NEW_BODY + "\n\n  "})
    assert again["rewritten"] is False and "journalId" not in again
    assert writer.journal_count() == records
    dry = writer.call(REWRITE, {"path": GLOSSARY, "body": NEW_BODY}, dry_run=True)
    assert dry["diff"] == "" and dry["rewritten"] is False


def test_heading_warnings(writer: Writer) -> None:
    none = writer.call(REWRITE, {"path": GLOSSARY, "body": "Just prose."}, dry_run=True)
    assert none["warnings"] == ["The new body has no level-one heading."]
    other = writer.call(REWRITE, {"path": GLOSSARY, "body": "# Words\n\nProse."}, dry_run=True)
    assert other["warnings"] == [
        'The new body\'s first heading "Words" differs from the title "Domain Glossary".'
    ]


def test_the_blank_line_after_the_frontmatter_stays(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    (root / "doc.md").write_text("---\ntitle: Doc\n---\n\n\n# Doc\n\nOld.\n")
    (root / "bare.md").write_text("\n# Bare\n\nOld.\n")
    writer = Writer(root)
    writer.call(REWRITE, {"path": "doc.md", "body": "\n\n# Doc\n\nNew.   \n\n"})
    writer.call(REWRITE, {"path": "bare.md", "body": "# Bare\n\nNew."})
    assert writer.text("doc.md") == "---\ntitle: Doc\n---\n\n\n# Doc\n\nNew.\n"
    assert writer.text("bare.md") == "# Bare\n\nNew.\n"


def test_body_refusals(writer: Writer, assert_unchanged: Any) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(REWRITE, {"path": GLOSSARY, "body": " \n\t"}) == (
            "body-required",
            "`body` is empty. bank_rewrite replaces the whole body and never leaves a document "
            "without one.",
        )
        assert writer.refusal(REWRITE, {"path": GLOSSARY}) == (
            "body-required",
            "`body` is empty. bank_rewrite replaces the whole body and never leaves a document "
            "without one.",
        )
        assert writer.refusal(REWRITE, {"path": GLOSSARY, "body": "\n  ---\ntitle: x\n---\n"}) == (
            "body-has-frontmatter",
            'The new body starts with a "---" frontmatter block. bank_rewrite keeps the '
            "document's frontmatter as it is; pass the body only.",
        )


def test_document_refusals(writer: Writer, assert_unchanged: Any) -> None:
    with assert_unchanged(writer.root):
        assert writer.refusal(REWRITE, {"path": "domain/unknown.md", "body": "x"}) == (
            "not-a-document",
            "Not a document of this bank: domain/unknown.md",
        )
        assert writer.refusal(
            REWRITE, {"path": "flows/templates/feature/brief.md", "body": "x"}
        ) == (
            "template",
            "flows/templates/feature/brief.md is a template. Templates are edited by hand, not "
            "through the server.",
        )
        assert writer.refusal(REWRITE, {"path": "broken/latin1.md", "body": "x"}) == (
            "not-text",
            "broken/latin1.md is not UTF-8 text, so mbank does not write to it.",
        )
        assert writer.refusal(REWRITE, {"path": "a/../../x.md", "body": "x"}) == (
            "path-outside",
            "Path must stay inside the bank: a/../../x.md",
        )


def test_body_file(writer: Writer) -> None:
    source = writer.root.parent / "body.md"
    source.write_text(NEW_BODY)
    result = writer.call(REWRITE, {"path": GLOSSARY, "bodyFile": str(source)})
    assert result["rewritten"] is True
    assert writer.text(GLOSSARY).endswith("---\n" + NEW_BODY)
    relative = writer.call(REWRITE, {"path": GLOSSARY, "bodyFile": "body.md"})
    assert relative["rewritten"] is False  # the same body: a no-op


def test_body_file_refusals(writer: Writer, assert_unchanged: Any) -> None:
    big = writer.root.parent / "big.md"
    big.write_bytes(b"x" * 1_000_001)
    latin = writer.root.parent / "latin.md"
    latin.write_bytes(b"caf\xe9\n")
    with assert_unchanged(writer.root):
        assert writer.refusal(REWRITE, {"path": GLOSSARY, "body": "x", "bodyFile": "b.md"}) == (
            "file-both",
            "Pass either body or bodyFile, not both.",
        )
        assert writer.refusal(REWRITE, {"path": GLOSSARY, "bodyFile": "big.md"}) == (
            "file-too-large",
            'bodyFile "big.md" is 1000001 bytes, past the 1000000 this accepts. Split it, or '
            "write the document in sections.",
        )
        assert writer.refusal(REWRITE, {"path": GLOSSARY, "bodyFile": "latin.md"}) == (
            "file-not-utf8",
            'bodyFile "latin.md" is not UTF-8 text.',
        )
        assert writer.refusal(REWRITE, {"path": GLOSSARY, "bodyFile": "x\x00.md"}) == (
            "file-nul",
            'bodyFile "x\x00.md" contains a NUL character.',
        )


def test_inbox_notes_may_be_rewritten(writer: Writer) -> None:
    (writer.root / "_inbox").mkdir()
    (writer.root / "_inbox" / "n.md").write_text("---\ntitle: Note\n---\n# Note\n\nOld.\n")
    result = writer.call(REWRITE, {"path": "_inbox/n.md", "body": "# Note\n\nNew."})
    assert result["rewritten"] is True
    assert writer.text("_inbox/n.md") == "---\ntitle: Note\n---\n# Note\n\nNew.\n"


def test_a_rewrite_adds_no_finding(writer: Writer) -> None:
    before = identities(writer)
    writer.call(REWRITE, {"path": GLOSSARY, "body": NEW_BODY})
    writer.call(REWRITE, {"path": "domain/rules.md", "body": "# Domain Rules\n\nShorter."})
    assert identities(writer) == before


def test_a_crlf_file_stays_crlf_and_a_bom_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    text = "---\ntitle: Notes\n---\n# Notes\n\nOld.\n"
    (root / "crlf.md").write_bytes(text.replace("\n", "\r\n").encode())
    (root / "bom.md").write_bytes(("\ufeff" + text).encode())
    (root / "bare.md").write_bytes("\ufeff# Bare\n\nOld.\n".encode())
    writer = Writer(root)
    for path in ("crlf.md", "bom.md"):
        writer.call(REWRITE, {"path": path, "body": "# Notes\r\n\r\nNew.\r\n"})
    writer.call(REWRITE, {"path": "bare.md", "body": "# Bare\n\nNew."})
    expected = text.replace("Old.", "New.")
    assert (root / "crlf.md").read_bytes() == expected.replace("\n", "\r\n").encode()
    assert (root / "bom.md").read_bytes() == ("\ufeff" + expected).encode()
    assert (root / "bare.md").read_bytes() == "\ufeff# Bare\n\nNew.\n".encode()


def test_human_output(writer: Writer, snapshot: Any) -> None:
    body = "# Glossary\n\nShort."
    dry = format_rewrite(writer.call(REWRITE, {"path": GLOSSARY, "body": body}, dry_run=True))
    real = format_rewrite(writer.call(REWRITE, {"path": GLOSSARY, "body": body}))
    same = format_rewrite(writer.call(REWRITE, {"path": GLOSSARY, "body": body}))
    assert dry.startswith("WOULD REWRITE domain/glossary.md  (")
    assert real.startswith("REWROTE domain/glossary.md  (")
    assert same.startswith("UNCHANGED domain/glossary.md  (")
    assert normalise({"dry": dry, "real": real, "same": same}, writer.root) == snapshot


def test_cli_rewrite(
    writer: Writer, capsys: Any, snapshot: Any, assert_unchanged: Any, monkeypatch: Any
) -> None:
    root = str(writer.root)
    with assert_unchanged(writer.root):
        dry = run_cli(
            ["--root", root, "rewrite", GLOSSARY, "--body", NEW_BODY, "--dry-run"], capsys
        )
        refused = run_cli(["--root", root, "rewrite", GLOSSARY, "--body", " "], capsys)
    assert dry[0] == 0 and dry[1].startswith("WOULD REWRITE domain/glossary.md  (536 -> ")
    assert refused[0] == 1 and refused[2].startswith("mbank: `body` is empty.")
    monkeypatch.setattr("sys.stdin", io.StringIO(NEW_BODY))
    real = run_cli(["--root", root, "rewrite", GLOSSARY, "--body-file", "-"], capsys)
    assert real[0] == 0 and real[1].startswith("REWROTE domain/glossary.md  (536 -> ")
    source = writer.root.parent / "body.md"
    source.write_text(NEW_BODY)
    again = run_cli(
        ["--json", "--root", root, "rewrite", GLOSSARY, "--body-file", str(source)], capsys
    )
    data = json.loads(again[1])
    assert data["rewritten"] is False and "journalId" not in data
    assert normalise({"dry": dry[1], "real": real[1], "json": data}, writer.root) == snapshot


GALLERY = {
    "no-h1": {"path": GLOSSARY, "body": "Only prose."},
    "inbox-note": {"path": "_inbox/n.md", "body": "# Note\n\nRewritten."},
    "lead-kept": {"path": "lead.md", "body": "# Lead\n\nNew."},
    "crlf-file": {"path": "crlf.md", "body": "# Notes\n\nNew."},
    "bom-no-frontmatter": {"path": "bare.md", "body": "# Bare\n\nNew."},
    "same-body": {"path": "lead.md", "body": "# Lead\n\nOld."},
}


@pytest.mark.parametrize("name", sorted(GALLERY))
def test_every_kind_of_rewrite_plan(writer: Writer, snapshot: Any, name: str) -> None:
    (writer.root / "_inbox").mkdir()
    (writer.root / "_inbox" / "n.md").write_text("---\ntitle: Note\n---\n# Note\n\nOld.\n")
    (writer.root / "lead.md").write_text("---\ntitle: Lead\n---\n\n# Lead\n\nOld.\n")
    (writer.root / "crlf.md").write_bytes(b"---\r\ntitle: Notes\r\n---\r\n# Notes\r\n\r\nOld.\r\n")
    (writer.root / "bare.md").write_bytes("\ufeff# Bare\n\nOld.\n".encode())
    assert writer.planned(gate_and_plan, TOOL, GALLERY[name]) == snapshot
