"""The generated tier (spec 07 §2.4, normative; ARCHITECTURE.md invariant 1).

A bank is created in a temporary directory by the current `init` and filled only through the
write tools, with git history made by dulwich (no `git` binary: the build runs with an empty
PATH). Zero findings are asserted after every step; every write is made twice — first as a dry
run, whose diff, applied to the pre-state with a strict patch algorithm, must give exactly the
post-state of the real write that follows (step 8).

The bank is built once for the module (`generated`); each test states one behaviour of the
spec's steps 1–8 from what the build recorded or from the finished bank, read-only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec
import pytest
import write_calls
from fixture_banks import TODAY
from git_history import commit_all, init_repo
from planners import tree_bytes
from seeded_banks import NAME, Seeder, patched, tree_texts

from mbank import catalogue, shipped_files
from mbank.changed import changed
from mbank.contract_diff import contract_diff
from mbank.graph import graph
from mbank.journal import journal_resource, read_records
from mbank.model import Finding, RefusalError
from mbank.projection import Snapshot
from mbank.read import read as read_documents
from mbank.route import route
from mbank.search import SearchIndex, search
from mbank.validate import findings
from mbank.writes import run_undo

ADR = "adr/ADR-20260914T120000Z-two-formats-one-model.md"
BRIEF = "features/FT-001/brief.md"
EPIC = "epics/EP-001/charter.md"

MODEL_BODY = """\
A parsed book holds chapters, sections and paragraphs, each with its own metadata.

## Entities

A book has chapters; a chapter has sections; a section has paragraphs. Footnotes hang off the \
paragraph that cites them.

## Invariants

Every paragraph belongs to exactly one section. Chapter order is the reading order of the source.
"""

RULES_BODY = """\
The filter decides which parsed books enter the corpus. It judges every book by the same three \
thresholds.

## Thresholds

A chapter must hold at least 200 words. The noise ratio must stay below 0.3. The language \
confidence must reach 0.9.

## Exceptions

Poetry collections are exempt from the chapter length threshold.
"""

ARCHITECTURE_BODY = """\
# Parser Architecture

The parser has three packages: readers, model and filter.

## Packages

Readers turn EPUB and FB2 files into the book model; the filter applies the thresholds.
"""

MODEL_OLD_SENTENCE = "Footnotes hang off the paragraph that cites them."
MODEL_NEW_SENTENCE = "Footnotes belong to the paragraph that cites them."
THRESHOLDS = (
    "A chapter must hold at least 250 words. The noise ratio must stay below 0.3. The language "
    "confidence must reach 0.9."
)
EXCEPTION = "Dictionaries are exempt from the noise ratio threshold."
GLOSSARY_PURPOSE = (
    "Every term of the book model and the filter, defined once and linked from where it is used."
)

Shell = Callable[..., dict[str, Any]]


class Generated:
    """The bank of the generated tier and what happened along the way."""

    def __init__(self, base: Path) -> None:
        self.project = init_repo(base / "project")
        self.seeder = Seeder(self.project / "memory_bank")
        self.root = self.seeder.root
        self.findings_after: dict[str, tuple[Finding, ...]] = {}
        self.diff_applies: dict[str, bool] = {}
        self.results: dict[str, dict[str, Any]] = {}
        self.refusals: dict[str, tuple[str, str, bool]] = {}
        self.texts: dict[str, dict[str, str | None]] = {}
        self.changes: dict[str, Any] = {}

    @property
    def snapshot(self) -> Snapshot:
        return self.seeder.bank.refresh()

    def check(self, step: str) -> None:
        self.findings_after[step] = findings(self.snapshot)

    def write(self, step: str, shell: Shell, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """A dry run, then the real write; the diff must turn the pre-state into the post-state."""
        pre = tree_texts(self.root)
        dry = self.seeder.call(shell, arguments, dry_run=True)
        assert tree_texts(self.root) == pre, f"{step}: the dry run wrote"
        result = self.seeder.call(shell, arguments)
        self.diff_applies[step] = patched(pre, dry["diff"]) == tree_texts(self.root)
        self.results[step] = result
        self.texts[step] = tree_texts(self.root)
        self.check(step)
        return result

    def refuse(self, step: str, shell: Shell, arguments: Mapping[str, Any]) -> None:
        """A write that must be refused; records (reason, message, nothing changed)."""
        before = _digest(self.root)
        try:
            self.seeder.call(shell, arguments)
        except RefusalError as exc:
            self.refusals[step] = (
                exc.refusal.rule,
                exc.refusal.message,
                _digest(self.root) == before,
            )
        else:
            self.refusals[step] = ("accepted", "", False)
        self.check(step)

    def undo(self, step: str) -> dict[str, Any]:
        engine = {"clock": self.seeder.clock, "make_id": self.seeder.ids}
        pre = tree_texts(self.root)
        dry = run_undo(self.seeder.bank, dry_run=True, **engine)
        result = run_undo(self.seeder.bank, **engine)
        self.diff_applies[step] = patched(pre, dry["diff"]) == tree_texts(self.root)
        self.results[step] = result
        self.texts[step] = tree_texts(self.root)
        self.check(step)
        return result


def _digest(root: Path) -> dict[str, Any]:
    # every byte under the bank, the journal included; the lock's content may be rewritten
    found = tree_bytes(root, include_journal=True)
    found.pop(".mbank/lock", None)
    return found


def build(base: Path) -> Generated:
    """Steps 1–6 of 07 §2.4, in order."""
    bank = Generated(base)

    # 1. init
    bank.write("init", write_calls.init, {"name": NAME})

    # 2. the first documents, only through bank_create
    create = write_calls.create
    bank.write(
        "create domain/model.md",
        create,
        {
            "path": "domain/model.md",
            "docKind": "domain",
            "title": "Book Model",
            "purpose": "The entities of a parsed book (chapters, sections, paragraphs, "
            "footnotes) and the invariants between them.",
            "derivedFrom": ["../product/context.md"],
            "body": MODEL_BODY,
        },
    )
    bank.write(
        "create domain/rules.md",
        create,
        {
            "path": "domain/rules.md",
            "docKind": "domain",
            "title": "Filter Rules",
            "purpose": "The filter thresholds a parsed book must pass: minimum chapter length, "
            "maximum noise ratio and language confidence.",
            "canonicalFor": ["filter_thresholds"],
            "derivedFrom": ["model.md"],
            "body": RULES_BODY,
        },
    )
    bank.write(
        "create the ADR",
        create,
        {
            "path": ADR,
            "docKind": "adr",
            "title": "Two Formats, One Model",
            "purpose": "Why EPUB and FB2 books are parsed into one shared model instead of one "
            "model per format.",
            "derivedFrom": ["../domain/model.md"],
        },
    )
    bank.write(
        "create engineering/architecture.md",
        create,
        {
            "path": "engineering/architecture.md",
            "docKind": "engineering",
            "title": "Parser Architecture",
            "purpose": "How the parser packages are laid out and how a book travels from reader "
            "to filter.",
            "canonicalFor": ["package_layout"],
            "derivedFrom": ["../domain/rules.md"],
        },
    )
    bank.write(
        "create the feature brief",
        create,
        {
            "path": BRIEF,
            "docKind": "feature",
            "title": "FB2 Support",
            "purpose": "What reading FB2 books must deliver and how it is verified.",
            "derivedFrom": ["../../engineering/architecture.md", f"../../{ADR}"],
        },
    )

    # 3. commit, then one more document; what changed since HEAD and since HEAD~20
    commit_all(bank.project, f"{TODAY}T12:10:00+00:00", "the generated bank")
    bank.check("commit")
    bank.write(
        "create domain/glossary.md",
        create,
        {
            "path": "domain/glossary.md",
            "docKind": "domain",
            "title": "Glossary",
            "purpose": "The terms of the book model and the filter, each defined once.",
            "derivedFrom": ["model.md"],
        },
    )
    bank.changes["HEAD"] = changed(bank.snapshot, "HEAD")
    bank.changes["HEAD~20"] = changed(bank.snapshot, "HEAD~20")
    try:
        changed(bank.snapshot, "no-such-ref")
    except RefusalError as exc:
        bank.changes["bad ref"] = exc.refusal.message

    # 4. three refused creates
    refused = {
        "path": "domain/second-owner.md",
        "docKind": "domain",
        "title": "Second Owner",
        "purpose": "Claims the filter thresholds a second time.",
        "derivedFrom": ["model.md"],
    }
    bank.refuse("a second owner", create, {**refused, "canonicalFor": ["filter_thresholds"]})
    bank.refuse(
        "an unresolved upstream", create, {**refused, "derivedFrom": ["../domain/nowhere.md"]}
    )
    bank.refuse("a path escaping the bank", create, {**refused, "path": "../outside.md"})

    # 6. every other write tool once, in the spec's order
    bank.write(
        "edit domain/model.md",
        write_calls.edit,
        {"path": "domain/model.md", "find": MODEL_OLD_SENTENCE, "replace": MODEL_NEW_SENTENCE},
    )
    bank.write(
        "update_section replace",
        write_calls.update_section,
        {"path": "domain/rules.md", "section": "Thresholds", "content": THRESHOLDS},
    )
    bank.write(
        "update_section append",
        write_calls.update_section,
        {
            "path": "domain/rules.md",
            "section": "Exceptions",
            "content": EXCEPTION,
            "mode": "append",
        },
    )
    bank.write(
        "rewrite engineering/architecture.md",
        write_calls.rewrite,
        {"path": "engineering/architecture.md", "body": ARCHITECTURE_BODY},
    )
    bank.write(
        "set_field purpose",
        write_calls.set_field,
        {"path": "domain/glossary.md", "field": "purpose", "value": GLOSSARY_PURPOSE},
    )
    bank.write(
        "set_status active",
        write_calls.set_status,
        {"path": "domain/model.md", "status": "active"},
    )
    bank.write(
        "create an inbox note",
        create,
        {
            "path": "terms.md",
            "docKind": "domain",
            "title": "Terms",
            "purpose": "Terms captured while parsing the first books.",
            "body": "Chapter, section, paragraph, footnote.",
            "inbox": True,
        },
    )
    bank.write(
        "promote it",
        write_calls.promote,
        {"path": "_inbox/terms.md", "to": "domain/terms.md", "derivedFrom": ["model.md"]},
    )
    bank.write(
        "create another inbox note",
        create,
        {
            "path": "idea.md",
            "docKind": "domain",
            "title": "Idea",
            "purpose": "A passing idea about caching parsed books.",
            "inbox": True,
        },
    )
    bank.write(
        "discard it",
        write_calls.discard,
        {"path": "_inbox/idea.md", "reason": "Caching is out of scope for now."},
    )
    bank.write("materialize_flows", write_calls.materialize_flows, {})
    bank.write(
        "create the first epic",
        create,
        {
            "path": EPIC,
            "docKind": "epic",
            "title": "Multi-Format Reading",
            "purpose": "The effort to read every common ebook format into the one model.",
            "derivedFrom": ["../../product/context.md"],
        },
    )
    bank.undo("undo")
    return bank


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Generated:
    empty = tmp_path_factory.mktemp("empty-path")
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", str(empty))
        patch.setenv("HOME", str(home))
        patch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        return build(tmp_path_factory.mktemp("generated"))


@pytest.fixture(scope="module")
def final(generated: Generated) -> Snapshot:
    return generated.snapshot


# --------------------------------------------------------------------------------------------
# Invariant 1 and step 8
# --------------------------------------------------------------------------------------------


def test_zero_findings_after_every_step(generated: Generated) -> None:
    # 20 writes (the undo among them), the commit and the 3 refusals
    assert len(generated.findings_after) == 24
    assert {step: found for step, found in generated.findings_after.items() if found} == {}


def test_every_dry_run_diff_applied_to_the_pre_state_gives_the_post_state(
    generated: Generated,
) -> None:
    assert len(generated.diff_applies) == 20
    assert [step for step, applies in generated.diff_applies.items() if not applies] == []


def test_every_write_was_journaled_and_nothing_else(generated: Generated) -> None:
    records = read_records(str(generated.root))
    assert len(records) == 20
    assert [record.tool for record in records][:2] == ["bank_init", "bank_create"]
    assert records[-1].tool == "undo"


def test_the_build_needed_no_git_binary(generated: Generated) -> None:
    assert (generated.project / ".git").is_dir()


# --------------------------------------------------------------------------------------------
# Step 1: init
# --------------------------------------------------------------------------------------------


def test_step_1_init_seeds_the_24_documents_and_a_contract(generated: Generated) -> None:
    result = generated.results["init"]
    assert result["created"] is True and len(result["files"]) == 24
    seeded = generated.texts["init"]
    assert sorted(seeded) == result["files"]
    assert "flows/templates/adr/ADR-ID.md" not in seeded
    assert seeded == shipped_files.seed_files(NAME, TODAY)


# --------------------------------------------------------------------------------------------
# Steps 2 and 5: the first documents and their registration
# --------------------------------------------------------------------------------------------


def test_step_2_the_adr_comes_from_the_shipped_template(generated: Generated) -> None:
    result = generated.results["create the ADR"]
    assert result["template"] == "flows/templates/adr/ADR-ID.md"
    frontmatter = result["frontmatter"]
    assert frontmatter["decision_status"] == "proposed" and frontmatter["date"] == TODAY
    assert frontmatter["must_not_define"] == ["current_system_state", "implementation_plan"]
    assert frontmatter["title"] == "Two Formats, One Model"


def test_step_2_the_brief_comes_from_the_feature_brief_template(generated: Generated) -> None:
    result = generated.results["create the feature brief"]
    assert result["template"] == "flows/templates/feature/brief.md"
    assert result["registeredIn"] == ["features/README.md"]


def test_step_5_domain_has_no_template_and_says_so(generated: Generated) -> None:
    for step in ("create domain/model.md", "create domain/rules.md"):
        result = generated.results[step]
        assert result["template"] is None
        assert result["warnings"] == [
            'No template matched doc_kind "domain"; wrote a minimal document instead.'
        ]


def test_step_5_each_document_is_linked_from_its_section_index(final: Snapshot) -> None:
    expected = {
        "domain/model.md": "domain/README.md",
        "domain/rules.md": "domain/README.md",
        "domain/glossary.md": "domain/README.md",
        "domain/terms.md": "domain/README.md",
        ADR: "adr/README.md",
        "engineering/architecture.md": "engineering/README.md",
        BRIEF: "features/README.md",
    }
    for path, index in expected.items():
        assert final.docs[path].registered_in == (index,), path


def test_step_5_the_first_registration_removed_the_placeholder(generated: Generated) -> None:
    seeded = generated.texts["init"]
    final = generated.texts["undo"]
    for index in ("domain/README.md", "adr/README.md", "features/README.md"):
        assert catalogue.SECTION_PLACEHOLDER in (seeded[index] or "")
        assert catalogue.SECTION_PLACEHOLDER not in (final[index] or ""), index


# --------------------------------------------------------------------------------------------
# Steps 3 and 4: history, refusals
# --------------------------------------------------------------------------------------------


def test_step_3_changed_since_head_is_the_glossary_and_its_index(generated: Generated) -> None:
    result = generated.changes["HEAD"]
    assert result["mode"] == "git" and result["repo"] == str(generated.project)
    assert [(c["changeKind"], c["path"]) for c in result["changes"]] == [
        ("added", "domain/glossary.md"),
        ("modified", "domain/README.md"),
    ]


def test_step_3_a_bad_ref_is_refused(generated: Generated) -> None:
    assert generated.changes["bad ref"] == (
        f'"no-such-ref" is not a commit in {generated.project}. Pass a valid ref or an ISO date.'
    )


def test_step_3_head_20_falls_back_to_the_first_commit(generated: Generated) -> None:
    result = generated.changes["HEAD~20"]
    assert result["mode"] == "git"
    assert result["note"].startswith(
        '"HEAD~20" reaches past the start of this repository, so the delta is measured from its '
        "first commit ("
    )
    assert [c["path"] for c in result["changes"]] == ["domain/glossary.md", "domain/README.md"]


def test_step_4_three_refused_creates_change_nothing(generated: Generated) -> None:
    assert generated.refusals == {
        "a second owner": (
            "canonical-owned",
            'canonical_for "filter_thresholds" is already owned by domain/rules.md. One fact, '
            "one home.",
            True,
        ),
        "an unresolved upstream": (
            "derived-from-unresolved",
            'derived_from "../domain/nowhere.md" does not resolve to a document of this bank '
            "(tried domain/nowhere.md).",
            True,
        ),
        "a path escaping the bank": (
            "path-outside",
            "Path must stay inside the bank: ../outside.md",
            True,
        ),
    }


# --------------------------------------------------------------------------------------------
# Step 6: every other write tool once
# --------------------------------------------------------------------------------------------


def test_step_6_edit_replaced_one_sentence(generated: Generated) -> None:
    text = generated.texts["edit domain/model.md"]["domain/model.md"] or ""
    assert MODEL_NEW_SENTENCE in text and MODEL_OLD_SENTENCE not in text
    assert generated.results["edit domain/model.md"]["edited"] is True


def test_step_6_update_section_replaced_then_appended(generated: Generated) -> None:
    replaced = generated.texts["update_section replace"]["domain/rules.md"] or ""
    assert f"## Thresholds\n\n{THRESHOLDS}\n" in replaced and "200 words" not in replaced
    appended = generated.texts["update_section append"]["domain/rules.md"] or ""
    assert "Poetry collections are exempt" in appended and EXCEPTION in appended
    assert appended.index("Poetry collections") < appended.index(EXCEPTION)


def test_step_6_rewrite_kept_the_frontmatter(generated: Generated) -> None:
    before = generated.texts["create engineering/architecture.md"]["engineering/architecture.md"]
    after = generated.texts["rewrite engineering/architecture.md"]["engineering/architecture.md"]
    assert before is not None and after is not None
    assert after.split("\n---\n", 1)[0] == before.split("\n---\n", 1)[0]
    assert after.endswith(ARCHITECTURE_BODY)


def test_step_6_set_field_purpose_carried_into_the_index_entry(generated: Generated) -> None:
    index = generated.texts["set_field purpose"]["domain/README.md"] or ""
    assert f"(glossary.md) — {GLOSSARY_PURPOSE}" in index


def test_step_6_set_status_made_the_model_active(final: Snapshot) -> None:
    assert final.docs["domain/model.md"].status == "active"


def test_step_6_the_inbox_note_was_promoted_and_the_other_discarded(
    generated: Generated, final: Snapshot
) -> None:
    assert "domain/terms.md" in final.docs and final.docs["domain/terms.md"].status == "active"
    assert not any(path.startswith("_inbox/") for path in final.docs)
    discard = next(r for r in read_records(str(generated.root)) if r.tool == "bank_discard")
    assert discard.reason == "Caching is out of scope for now." and discard.title == "Idea"


def test_step_6_materialize_put_the_templates_in_the_bank(final: Snapshot) -> None:
    templates = [path for path in final.docs if path.startswith("flows/templates/")]
    assert len(templates) == 24


def test_step_6_the_first_epic_built_its_section(generated: Generated) -> None:
    result = generated.results["create the first epic"]
    assert result["registeredIn"] == ["epics/README.md"]
    after = generated.texts["create the first epic"]
    assert "epics/README.md" in after
    assert "- [`epics/README.md`](epics/README.md)" in (after["README.md"] or "")


def test_step_6_undo_reverted_the_epic_its_index_and_the_root_entry(generated: Generated) -> None:
    result = generated.results["undo"]
    assert result["tool"] == "bank_create"
    assert result["files"] == [
        {"path": "README.md", "action": "restored"},
        {"path": "epics/README.md", "action": "deleted"},
        {"path": EPIC, "action": "deleted"},
    ]
    # every file is as it was before the epic; the emptied directories epics/EP-001/ stay
    # (undo restores files, spec 03 §14.10; it does not say that it removes directories)
    assert generated.texts["undo"] == generated.texts["materialize_flows"]
    assert not list((generated.root / "epics").rglob("*.md"))


# --------------------------------------------------------------------------------------------
# Step 7: reads on the result
# --------------------------------------------------------------------------------------------


def _route(snapshot: Snapshot, question: str, limit: int = 10) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = route(snapshot, SearchIndex(), question, limit=limit)["results"]
    return results


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("где пороги фильтрации", "domain/rules.md"),
        ("почему два формата одна модель", ADR),
        ("where are the filter thresholds", "domain/rules.md"),
        ("why two formats one model", ADR),
    ],
)
def test_step_7_routing_in_russian_and_english(
    final: Snapshot, question: str, expected: str
) -> None:
    assert _route(final, question)[0]["path"] == expected


def test_step_7_knowledge_ranks_above_delivery(final: Snapshot) -> None:
    # both answer: the architecture names the FB2 reader, the brief is the FB2 feature
    paths = [hit["path"] for hit in _route(final, "fb2 reader package")]
    assert paths.index("engineering/architecture.md") < paths.index(BRIEF)
    assert final.docs["engineering/architecture.md"].layer == "knowledge"
    assert final.docs[BRIEF].layer == "delivery"


def test_step_7_no_template_is_routed(final: Snapshot) -> None:
    templates = {path for path, doc in final.docs.items() if doc.doc_function == "template"}
    assert len(templates) > 20
    for question in ("adr decision options", "feature brief requirements", "epic roadmap risks"):
        assert not {hit["path"] for hit in _route(final, question, limit=25)} & templates


def test_step_7_a_section_read_is_less_than_half_the_document(final: Snapshot) -> None:
    section = read_documents(final, "domain/rules.md", section="Thresholds")
    whole = read_documents(final, "domain/rules.md")
    assert section["content"].strip() == f"## Thresholds\n\n{THRESHOLDS}"
    assert section["bytes"] < whole["bytes"] / 2


def test_step_7_graph_down_from_the_model(final: Snapshot) -> None:
    result = graph(final, "domain/model.md", direction="down", depth=3)
    assert {node["path"] for node in result["nodes"][1:]} == {
        ADR,
        "domain/glossary.md",
        "domain/rules.md",
        "domain/terms.md",
        "engineering/architecture.md",
        BRIEF,
    }
    assert not result.get("broken")


def test_step_7_graph_up_from_the_brief_reaches_governance_at_depth_4(final: Snapshot) -> None:
    result = graph(final, BRIEF, direction="up", depth=6)
    depths = {node["path"]: node["depth"] for node in result["nodes"]}
    assert depths["dna/governance.md"] == 4
    assert depths["product/context.md"] == 3 and depths["domain/model.md"] == 2


def test_step_7_search(final: Snapshot) -> None:
    index = SearchIndex()
    assert search(final, index, "frontmatter")["results"][0]["path"] == "dna/frontmatter.md"
    russian = [hit["path"] for hit in search(final, index, "модель")["results"]]
    english = [hit["path"] for hit in search(final, index, "model")["results"]]
    assert russian == english and russian


def test_step_7_the_contract_matches_the_starter(final: Snapshot) -> None:
    result = contract_diff(final)
    for split in result["enums"].values():
        assert split["onlyHere"] == split["onlyThere"] == []
    assert result["rules"]["roots"]["onlyHere"] == result["rules"]["roots"]["onlyThere"] == []
    assert result["layers"]["onlyHere"] == result["layers"]["onlyThere"] == []
    assert result["layers"]["differ"] == []
    assert result["legalisable"] == [] and result["recommendation"] is None


def test_step_7_the_journal_lists_every_accepted_write_newest_first(generated: Generated) -> None:
    records = journal_resource(str(generated.root))["records"]
    assert [record["tool"] for record in records] == [
        "undo",
        "bank_create",
        "bank_materialize_flows",
        "bank_discard",
        "bank_create",
        "bank_promote",
        "bank_create",
        "bank_set_status",
        "bank_set_field",
        "bank_rewrite",
        "bank_update_section",
        "bank_update_section",
        "bank_edit",
        "bank_create",
        "bank_create",
        "bank_create",
        "bank_create",
        "bank_create",
        "bank_create",
        "bank_init",
    ]


def test_the_journal_records_are_plain_data(generated: Generated) -> None:
    for record in read_records(str(generated.root)):
        assert msgspec.json.decode(msgspec.json.encode(record))["id"] == record.id
