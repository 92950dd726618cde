"""`bank_promote` (spec 03 §10; acceptance 07 §3.18): a quarantined note moves out of `_inbox/`
with its frontmatter rebuilt, its links rewritten for the new place, registered, and the note
deleted — through the same governance as a new document. Plans and diffs are snapshotted; every
refusal leaves the bank unchanged; the old path then says where the note went."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import write_calls
from planners import Clock, Ids

from mbank.cli import main
from mbank.journal import history, read_records, record_data, where_did_it_go
from mbank.model import RefusalError
from mbank.plan import plan_data
from mbank.read import PathLookup, document_of
from mbank.reducers.promote import TOOL
from mbank.shipped_files import seed_files
from mbank.snapshot import Bank
from mbank.validate import findings
from mbank.writes import run_undo

TODAY = "2026-09-14"

NOTE = """\
---
title: Captured Terms
doc_kind: domain
purpose: Terms heard in a session, to be placed.
derived_from:
  - ../domain/model.md
tags:
  - session
---
# Terms We Heard

The [model](../domain/model.md) names a book;
see also [the model's entities](../domain/model.md#entities).

- [Context](../product/context.md)
- [Elsewhere](https://example.com/x.md), [absolute](/domain/model.md), [gone](../nowhere.md)

```md
[in a fence](../domain/model.md)
```
"""


def seed(root: Path) -> Path:
    for path, text in seed_files("ebook_parser", TODAY).items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def write(root: Path, path: str, content: str | bytes) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content, encoding="utf-8")


class Session:
    """One bank, with a clock and ids shared by every write of a test."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.clock = Clock()
        self.ids = Ids()

    def engine(self) -> dict[str, Any]:
        return {"clock": self.clock, "make_id": self.ids, "cwd": str(self.root.parent)}

    def create(self, **arguments: Any) -> dict[str, Any]:
        return write_calls.create(Bank(self.root), arguments, **self.engine())

    def promote(self, dry_run: bool = False, **arguments: Any) -> dict[str, Any]:
        return write_calls.promote(Bank(self.root), arguments, dry_run=dry_run, **self.engine())

    def refused(self, **arguments: Any) -> tuple[str, str]:
        with pytest.raises(RefusalError) as caught:
            self.promote(**arguments)
        return caught.value.refusal.rule, caught.value.refusal.message

    def planned(self, **arguments: Any) -> dict[str, Any]:
        bank = Bank(self.root)
        outcome = write_calls.outcome(TOOL, bank, arguments, clock=Clock(), make_id=Ids())
        return plan_data(outcome.plan)

    def recorded(self, **arguments: Any) -> dict[str, Any]:
        plan = self.planned(**arguments)
        result = self.promote(dry_run=True, **arguments)
        text = json.dumps({"plan": plan, "result": result}).replace(str(self.root), "<ROOT>")
        return dict(json.loads(text))

    def read(self, path: str) -> str:
        return (self.root / path).read_text(encoding="utf-8")

    def findings(self) -> list[tuple[str, str, str]]:
        return [(f.rule, f.path, f.message) for f in findings(Bank(self.root).refresh())]


@pytest.fixture
def session(tmp_path: Path) -> Session:
    """A seeded bank with `domain/model.md` and a captured note `_inbox/terms.md`."""
    root = seed(tmp_path / "bank")
    made = Session(root)
    made.create(
        docKind="domain",
        path="domain/model.md",
        title="Domain Model",
        purpose="The entities of the parser.",
        derivedFrom=["../product/context.md"],
        body="Books and chapters.\n\n## Entities\n\nBook, Chapter.\n",
    )
    write(root, "_inbox/terms.md", NOTE)
    return made


# --------------------------------------------------------------------------------------------
# Plans (snapshotted)
# --------------------------------------------------------------------------------------------


def test_plan_promote_with_relinking(session: Session, snapshot: Any) -> None:
    arguments = {"path": "_inbox/terms.md", "to": "domain/terms.md", "derivedFrom": ["model.md"]}
    assert session.recorded(**arguments) == snapshot


def test_plan_promote_into_a_templated_kind(session: Session, snapshot: Any) -> None:
    write(
        session.root,
        "_inbox/decision.md",
        "---\ntitle: Keep One Model\ndoc_kind: adr\npurpose: Why one model.\n---\n"
        "We decided to keep one model.\n",
    )
    arguments = {
        "path": "_inbox/decision.md",
        "to": "adr/ADR-20260914T120000Z-keep-one-model.md",
        "derivedFrom": ["../domain/model.md"],
        "status": "draft",
    }
    assert session.recorded(**arguments) == snapshot


# --------------------------------------------------------------------------------------------
# What a promotion does
# --------------------------------------------------------------------------------------------


def test_a_promotion_moves_rebuilds_relinks_registers_and_deletes(session: Session) -> None:
    result = session.promote(path="_inbox/terms.md", to="domain/terms.md", derivedFrom=["model.md"])
    assert list(result) == [
        "from",
        "to",
        "promoted",
        "dryRun",
        "frontmatter",
        "template",
        "registeredIn",
        "warnings",
        "preview",
        "journalId",
    ]
    assert result["promoted"] is True and result["dryRun"] is False
    assert (result["from"], result["to"]) == ("_inbox/terms.md", "domain/terms.md")
    assert not (session.root / "_inbox/terms.md").exists()
    assert result["frontmatter"] == {
        "title": "Captured Terms",
        "doc_kind": "domain",
        "doc_function": "canonical",
        "purpose": "Terms heard in a session, to be placed.",
        "derived_from": ["model.md"],
        "status": "active",
    }
    assert result["template"] is None
    assert result["registeredIn"] == ["domain/README.md"]
    assert (
        result["warnings"]
        == ["Link rewritten for the new location: ../domain/model.md -> model.md"] * 3
    )
    text = session.read("domain/terms.md")
    assert "# Captured Terms\n\nThe [model](model.md) names a book;\n" in text
    assert "[the model's entities](model.md#entities)" in text
    assert "[in a fence](model.md)" in text
    assert "[Context](../product/context.md)" in text
    assert "(https://example.com/x.md)" in text and "(/domain/model.md)" in text
    assert "(../nowhere.md)" in text
    assert "tags" not in text
    assert session.read("domain/README.md").endswith(
        "- [Captured Terms](terms.md) — Terms heard in a session, to be placed.\n"
    )
    assert session.findings() == []


def test_a_destination_at_the_root_rewrites_every_resolving_link(session: Session) -> None:
    result = session.promote(
        path="_inbox/terms.md", to="terms.md", derivedFrom=["domain/model.md"], status="draft"
    )
    assert result["warnings"] == [
        "Link rewritten for the new location: ../domain/model.md -> domain/model.md",
        "Link rewritten for the new location: ../domain/model.md -> domain/model.md",
        "Link rewritten for the new location: ../product/context.md -> product/context.md",
        "Link rewritten for the new location: ../domain/model.md -> domain/model.md",
    ]
    assert result["registeredIn"] == ["README.md"]


def test_status_defaults_to_active_and_the_note_needs_derived_from_for_it(
    session: Session, assert_unchanged: Any
) -> None:
    write(
        session.root,
        "_inbox/bare.md",
        "---\ntitle: Bare\ndoc_kind: domain\npurpose: No sources.\n---\nText.\n",
    )
    with assert_unchanged(session.root):
        assert session.refused(path="_inbox/bare.md", to="domain/bare.md") == (
            "derived-from-required",
            "Governance requires every active non-root document to declare derived_from.",
        )
    drafted = session.promote(path="_inbox/bare.md", to="domain/bare.md", status="draft")
    assert drafted["frontmatter"]["status"] == "draft"
    assert drafted["warnings"][0] == (
        "No derived_from: governance requires one before this document can become active."
    )


def test_the_notes_own_derived_from_is_resolved_from_the_destination(
    session: Session, assert_unchanged: Any
) -> None:
    """Upstream parity: `../domain/model.md` written for `_inbox/` does not resolve from a
    deeper destination; the caller passes `derivedFrom`."""
    with assert_unchanged(session.root):
        assert session.refused(path="_inbox/terms.md", to="domain/deep/terms.md") == (
            "derived-from-unresolved",
            'derived_from "../domain/model.md" does not resolve to a document of this bank '
            "(tried domain/domain/model.md).",
        )
    result = session.promote(path="_inbox/terms.md", to="product/terms.md")
    assert result["frontmatter"]["derived_from"] == ["../domain/model.md"]


def test_overrides_replace_the_notes_fields(session: Session) -> None:
    result = session.promote(
        path="_inbox/terms.md",
        to="domain/glossary.md",
        docKind="domain",
        title="Glossary",
        purpose="Terms of the parser.",
        derivedFrom=["model.md"],
        canonicalFor=["parser_terms"],
        mustNotDefine=[],
        status="draft",
    )
    assert result["frontmatter"] == {
        "title": "Glossary",
        "doc_kind": "domain",
        "doc_function": "canonical",
        "purpose": "Terms of the parser.",
        "derived_from": ["model.md"],
        "canonical_for": ["parser_terms"],
        "must_not_define": [],
        "status": "draft",
    }
    assert "# Glossary\n" in session.read("domain/glossary.md")


def test_a_templates_base_fields_flow_in_with_placeholders_skipped_and_the_date_filled(
    session: Session,
) -> None:
    write(
        session.root,
        "_inbox/decision.md",
        "---\ntitle: Keep One Model\ndoc_kind: adr\ndoc_function: derived\n"
        "purpose: Why one model.\n---\n",
    )
    result = session.promote(
        path="_inbox/decision.md",
        to="adr/ADR-20260914T120000Z-keep.md",
        derivedFrom=["../domain/model.md"],
    )
    fm = result["frontmatter"]
    assert result["template"] == "flows/templates/adr/ADR-ID.md"
    assert fm["doc_function"] == "derived"
    assert fm["decision_status"] == "proposed" and fm["date"] == TODAY
    assert fm["must_not_define"] == ["current_system_state", "implementation_plan"]
    assert not any("placeholder" in warning for warning in result["warnings"])
    assert session.read("adr/ADR-20260914T120000Z-keep.md").endswith("---\n# Keep One Model\n")


def test_a_note_that_owns_a_key_may_keep_it_but_not_take_anothers(
    session: Session, assert_unchanged: Any
) -> None:
    write(
        session.root,
        "_inbox/owner.md",
        "---\ntitle: Owner\ndoc_kind: domain\npurpose: Owns a key.\ncanonical_for:\n"
        "  - book_terms\n---\nText.\n",
    )
    write(
        session.root,
        "_inbox/rival.md",
        "---\ntitle: Rival\ndoc_kind: domain\npurpose: Owns the same key.\ncanonical_for:\n"
        "  - book_terms\n---\nText.\n",
    )
    with assert_unchanged(session.root):
        assert session.refused(
            path="_inbox/owner.md", to="domain/owner.md", derivedFrom=["model.md"]
        ) == (
            "canonical-owned",
            'canonical_for "book_terms" is already owned by _inbox/rival.md. One fact, one home.',
        )
    (session.root / "_inbox/rival.md").unlink()
    result = session.promote(path="_inbox/owner.md", to="domain/owner.md", derivedFrom=["model.md"])
    assert result["frontmatter"]["canonical_for"] == ["book_terms"]


def test_a_crlf_note_with_a_bom_comes_out_lf_without_the_bom(session: Session) -> None:
    write(
        session.root,
        "_inbox/crlf.md",
        b"\xef\xbb\xbf---\r\ntitle: Windows Note\r\ndoc_kind: domain\r\n"
        b"purpose: Written on Windows.\r\n---\r\n# Windows Note\r\n\r\nLine one.\r\n",
    )
    session.promote(path="_inbox/crlf.md", to="domain/windows.md", derivedFrom=["model.md"])
    data = (session.root / "domain/windows.md").read_bytes()
    assert b"\r" not in data and not data.startswith(b"\xef\xbb\xbf")
    assert data.endswith(b"---\n# Windows Note\n\nLine one.\n")
    write(session.root, "_inbox/bom.md", b"\xef\xbb\xbfPlain note.\n")
    session.promote(
        path="_inbox/bom.md",
        to="domain/bom.md",
        title="Bom",
        purpose="A note without frontmatter.",
        docKind="domain",
        derivedFrom=["model.md"],
    )
    assert session.read("domain/bom.md").endswith("---\n# Bom\n\nPlain note.\n")


def test_without_an_index_the_no_index_warning_comes_after_the_relinks(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    write(root, "notes/a.md", "---\ntitle: A\n---\n# A\n")
    write(
        root,
        "_inbox/n.md",
        "---\ntitle: N\ndoc_kind: x\npurpose: p\n---\nSee [a](../notes/a.md).\n",
    )
    result = Session(root).promote(path="_inbox/n.md", to="notes/n.md")
    assert result["registeredIn"] == []
    assert result["warnings"][:2] == [
        "Link rewritten for the new location: ../notes/a.md -> a.md",
        "No index found to register this document in; navigation will not reach it.",
    ]


# --------------------------------------------------------------------------------------------
# Gates (§10 steps 1–9), each leaving the bank unchanged
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "rule", "message"),
    [
        ({"path": ""}, "path-empty", "`path` is required."),
        (
            {"path": "_inbox/../../x.md"},
            "path-outside",
            "Path must stay inside the bank: _inbox/../../x.md",
        ),
        (
            {"path": "_inbox/none.md"},
            "not-a-document",
            "Not a document of this bank: _inbox/none.md",
        ),
        (
            {"path": "domain/model.md"},
            "not-quarantined",
            "Only quarantined documents can be promoted; domain/model.md is not in _inbox/.",
        ),
        (
            {"path": "_inbox/latin.md"},
            "not-text",
            "_inbox/latin.md is not UTF-8 text, so mbank does not write to it.",
        ),
        ({"to": "../x.md"}, "path-outside", "Path must stay inside the bank: ../x.md"),
        (
            {"to": "_inbox/again.md"},
            "stays-quarantined",
            "Promotion must leave the quarantine; give a destination outside _inbox/.",
        ),
        ({"to": "domain/terms.txt"}, "path-not-md", "Path must end in .md: domain/terms.txt"),
        (
            {"to": "domain/.hidden.md"},
            "path-hidden",
            "Path goes through a hidden (dot) name, which the bank does not index: "
            "domain/.hidden.md",
        ),
        (
            {"to": "dist/terms.md"},
            "path-skipped-dir",
            'Path goes through "dist/", which the bank does not index: dist/terms.md',
        ),
        (
            {"to": "domain/model.md"},
            "exists",
            "Refusing to overwrite an existing document: domain/model.md",
        ),
        ({"title": " "}, "title-required", "`title` is required."),
        (
            {"purpose": ""},
            "purpose-required",
            "`purpose` is required: it is the signal bank_route ranks on.",
        ),
        (
            {"docKind": ""},
            "doc-kind-required",
            "`docKind` is required: the captured note does not declare one.",
        ),
        (
            {"derivedFrom": ["missing.md"]},
            "derived-from-unresolved",
            'derived_from "missing.md" does not resolve to a document of this bank '
            "(tried domain/missing.md).",
        ),
    ],
)
def test_each_gate_refuses_with_its_exact_message(
    session: Session,
    assert_unchanged: Any,
    arguments: dict[str, Any],
    rule: str,
    message: str,
) -> None:
    write(session.root, "_inbox/latin.md", b"---\ntitle: Caf\xe9\n---\n")
    defaults = {"path": "_inbox/terms.md", "to": "domain/terms.md", "derivedFrom": ["model.md"]}
    with assert_unchanged(session.root):
        assert session.refused(**{**defaults, **arguments}) == (rule, message)


def test_a_note_without_purpose_or_kind_needs_them_given(
    session: Session, assert_unchanged: Any
) -> None:
    write(session.root, "_inbox/bare.md", "# Just A Heading\n\nText.\n")
    base = {"path": "_inbox/bare.md", "to": "domain/bare.md", "derivedFrom": ["model.md"]}
    with assert_unchanged(session.root):
        assert session.refused(**base)[0] == "purpose-required"
        assert session.refused(**base, purpose="Why.")[0] == "doc-kind-required"
    result = session.promote(**base, purpose="Why.", docKind="domain")
    assert result["frontmatter"]["title"] == "Just A Heading"


def test_an_unindexed_file_or_an_escaping_link_at_the_destination_is_refused(
    session: Session, tmp_path: Path, assert_unchanged: Any
) -> None:
    write(session.root, "domain/notes.md.txt", "x")
    (session.root / "domain/taken.md").symlink_to(session.root / "domain/notes.md.txt")
    outside = tmp_path / "outside"
    outside.mkdir()
    (session.root / "out").symlink_to(outside, target_is_directory=True)
    base = {"path": "_inbox/terms.md", "derivedFrom": ["model.md"]}
    with assert_unchanged(session.root), assert_unchanged(outside):
        assert session.refused(**base, to="domain/taken.md") == (
            "exists-unindexed",
            "A file already exists at domain/taken.md but is not indexed. Refusing to "
            "overwrite it.",
        )
        assert session.refused(**base, to="out/terms.md") == (
            "path-symlink",
            "Path leads outside the bank through a symbolic link: out/terms.md",
        )


def test_a_fixture_document_outside_the_inbox_is_not_quarantined_even_if_not_text(
    fixture_plus: Path, assert_unchanged: Any
) -> None:
    with assert_unchanged(fixture_plus):
        assert Session(fixture_plus).refused(path="broken/latin1.md", to="x.md") == (
            "not-quarantined",
            "Only quarantined documents can be promoted; broken/latin1.md is not in _inbox/.",
        )


# --------------------------------------------------------------------------------------------
# Dry run, journal, where it went, undo
# --------------------------------------------------------------------------------------------


def test_a_dry_run_writes_nothing_and_shows_the_three_ops(
    session: Session, assert_unchanged: Any
) -> None:
    arguments = {"path": "_inbox/terms.md", "to": "domain/terms.md", "derivedFrom": ["model.md"]}
    with assert_unchanged(session.root):
        result = session.promote(dry_run=True, **arguments)
    assert result["promoted"] is False and result["dryRun"] is True
    assert "journalId" not in result
    diff = result["diff"]
    assert diff.index("+++ b/domain/terms.md") < diff.index("+++ b/domain/README.md")
    assert diff.index("+++ b/domain/README.md") < diff.index("+++ /dev/null")
    assert "--- a/_inbox/terms.md\n+++ /dev/null\n" in diff


def test_the_old_path_says_where_the_note_went(session: Session) -> None:
    result = session.promote(path="_inbox/terms.md", to="domain/terms.md", derivedFrom=["model.md"])
    journal_id = result["journalId"]
    record = record_data(read_records(str(session.root))[-1])
    assert record["tool"] == "bank_promote"
    assert (record["from"], record["to"]) == ("_inbox/terms.md", "domain/terms.md")
    expected = (
        "Not a document of this bank: _inbox/terms.md. It was promoted to domain/terms.md on "
        f"2026-09-14 (journal {journal_id})."
    )
    snapshot = Bank(session.root).refresh()
    with pytest.raises(RefusalError) as read_refusal:
        document_of(
            snapshot,
            "_inbox/terms.md",
            PathLookup(not_a_document_note=lambda path: where_did_it_go(str(session.root), path)),
        )
    assert read_refusal.value.refusal.message == expected
    assert session.refused(path="_inbox/terms.md", to="domain/other.md") == (
        "not-a-document",
        expected,
    )
    touching = history(str(session.root), path="_inbox/terms.md")
    assert [entry["id"] for entry in touching["records"]] == [journal_id]


def test_undo_brings_the_note_back_and_takes_the_registration_out(session: Session) -> None:
    before_index = session.read("domain/README.md")
    session.promote(path="_inbox/terms.md", to="domain/terms.md", derivedFrom=["model.md"])
    run_undo(Bank(session.root), clock=session.clock, make_id=session.ids)
    assert session.read("_inbox/terms.md") == NOTE
    assert session.read("domain/README.md") == before_index
    assert not (session.root / "domain/terms.md").exists()


def test_a_note_captured_with_bank_create_promotes_cleanly(session: Session) -> None:
    captured = session.create(
        docKind="domain",
        path="anywhere/captured.md",
        title="Captured",
        purpose="A fact heard in a session.",
        inbox=True,
        body="A book is a parsed file; see [the model](../domain/model.md).",
    )
    assert captured["path"] == "_inbox/captured.md"
    result = session.promote(path=captured["path"], to="domain/books.md", derivedFrom=["model.md"])
    assert result["warnings"] == [
        "Link rewritten for the new location: ../domain/model.md -> model.md"
    ]
    assert session.findings() == []


# --------------------------------------------------------------------------------------------
# The CLI (spec 04 §9.2–§9.4)
# --------------------------------------------------------------------------------------------


def test_cli_promote_human_output(
    session: Session, capsys: pytest.CaptureFixture[str], snapshot: Any
) -> None:
    argv = ["--root", str(session.root), "promote", "_inbox/terms.md", "--to", "domain/terms.md"]
    argv += ["--derived", "model.md"]
    assert main([*argv, "--dry-run"]) == 0
    dry = capsys.readouterr().out
    assert main(argv) == 0
    real, journal = capsys.readouterr().out.rsplit("journal: ", 1)
    assert journal.rstrip("\n") == read_records(str(session.root))[-1].id
    assert real.startswith("PROMOTED _inbox/terms.md -> domain/terms.md\n")
    assert dry.startswith("WOULD PROMOTE _inbox/terms.md -> domain/terms.md\n")
    assert {"dry": dry, "real": real} == snapshot


def test_cli_promote_json_overrides_and_lists(
    session: Session, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "--root",
            str(session.root),
            "promote",
            "_inbox/terms.md",
            "--to",
            "domain/glossary.md",
            "--kind",
            "domain",
            "--title",
            "Glossary",
            "--purpose",
            "Terms.",
            "--derived",
            "model.md",
            "--canonical",
            "parser_terms,book_terms",
            "--must-not-define",
            "pricing",
            "--status",
            "draft",
            "--json",
        ]
    )
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["promoted"] is True
    assert result["frontmatter"]["canonical_for"] == ["parser_terms", "book_terms"]
    assert result["frontmatter"]["must_not_define"] == ["pricing"]
    assert result["frontmatter"]["status"] == "draft"


def test_cli_promote_refusal_and_usage_errors(
    session: Session, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(session.root)
    assert main(["--root", root, "promote", "domain/model.md", "--to", "x.md"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "mbank: Only quarantined documents can be promoted; domain/model.md is not in _inbox/.\n"
    )
    with pytest.raises(SystemExit) as usage:
        main(["--root", root, "promote", "_inbox/terms.md"])
    assert usage.value.code == 2
