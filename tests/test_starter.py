"""The starter set: what `init` seeds, what dna/ declares, the generated indexes and the pointer
(spec 05 §1–§6, §8; 01 §9.2; 07 §3.19)."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

import pytest

from mbank import shipped_files
from mbank.catalogue import (
    SECTION_PLACEHOLDER,
    SECTIONS,
    SEEDED_DIRECTORIES,
    SEEDED_DRAFT_SENTENCE,
    STARTER_PATHS,
    RegistryEntry,
    root_index,
    section_for,
    section_index,
    templates_pointer,
)
from mbank.contract import BUILTIN_WEIGHTS, effective_weights, parse_contract, parse_layers
from mbank.model import RefusalError
from mbank.parse import load_yaml, parse_text, resolve_from, split_frontmatter
from mbank.route import route
from mbank.search import SearchIndex
from mbank.shipped_files import seed_files, shipped_templates, starter_files
from mbank.snapshot import Bank, Snapshot
from mbank.validate import findings
from tests.conftest import TODAY

NAME = "ebook_parser"

# 05 §2: path, doc_kind, doc_function, status.
SEEDED_TABLE = [
    ("dna/README.md", "governance", "index", "active"),
    ("dna/principles.md", "governance", "canonical", "active"),
    ("dna/governance.md", "governance", "canonical", "active"),
    ("dna/frontmatter.md", "governance", "canonical", "active"),
    ("dna/lifecycle.md", "governance", "canonical", "active"),
    ("dna/cross-references.md", "governance", "canonical", "active"),
    ("dna/glossary.md", "governance", "reference", "active"),
    ("dna/changelog.md", "governance", "canonical", "active"),
    ("product/context.md", "product", "canonical", "draft"),
    ("engineering/testing-policy.md", "engineering", "canonical", "draft"),
    ("flows/README.md", "governance", "index", "active"),
    ("flows/feature-flow.md", "governance", "canonical", "active"),
    ("flows/epic-flow.md", "governance", "canonical", "active"),
    ("flows/workflows.md", "governance", "canonical", "active"),
    ("flows/templates/README.md", "governance", "index", "active"),
    ("product/README.md", "product", "index", "active"),
    ("domain/README.md", "domain", "index", "active"),
    ("engineering/README.md", "engineering", "index", "active"),
    ("ops/README.md", "ops", "index", "active"),
    ("adr/README.md", "adr", "index", "active"),
    ("use-cases/README.md", "use_case", "index", "active"),
    ("features/README.md", "feature", "index", "active"),
    ("processes/README.md", "process", "index", "active"),
    ("README.md", "project", "index", "active"),
]

# 05 §4: derived_from and canonical_for of each literal starter file, as written.
STARTER_EDGES = {
    "dna/README.md": (["principles.md", "glossary.md", "changelog.md"], []),
    "dna/principles.md": (None, ["memory_bank_principles"]),
    "dna/governance.md": (
        ["principles.md"],
        [
            "ssot_rules",
            "document_language_rule",
            "source_dependency_tree",
            "doc_kind_values",
            "doc_function_values",
            "directory_layers",
        ],
    ),
    "dna/frontmatter.md": (["governance.md"], ["frontmatter_schema"]),
    "dna/lifecycle.md": (
        ["governance.md"],
        ["document_maintenance_rules", "document_sync_checklist"],
    ),
    "dna/cross-references.md": (["governance.md"], ["code_documentation_cross_references"]),
    "dna/glossary.md": (["principles.md"], ["memory_bank_governance_terms"]),
    "dna/changelog.md": (
        ["governance.md"],
        ["memory_bank_version_history", "memory_bank_migration_notes"],
    ),
    "product/context.md": (
        ["../dna/governance.md"],
        ["product_problem_statement", "product_constraints"],
    ),
    "engineering/testing-policy.md": (
        ["../dna/governance.md"],
        [
            "required_test_coverage",
            "manual_verification_policy",
            "simplify_review_discipline",
            "verification_context_separation",
        ],
    ),
    "flows/README.md": (
        [
            "../dna/governance.md",
            "feature-flow.md",
            "epic-flow.md",
            "workflows.md",
            "templates/README.md",
        ],
        [],
    ),
    "flows/feature-flow.md": (
        ["../dna/governance.md"],
        [
            "feature_directory_structure",
            "feature_package_lifecycle",
            "feature_stage_gates",
            "feature_problem_ready_gate",
            "feature_brief_rules",
            "feature_design_requirement_rules",
            "feature_design_rules",
            "feature_plan_requirement_rules",
            "feature_implementation_plan_rules",
            "feature_stable_identifiers",
            "feature_requirement_ids",
            "feature_verification_contract",
            "feature_solution_options",
            "feature_plan_steps",
            "feature_done_gate",
            "feature_support_documents",
            "feature_delivery_status_rules",
            "feature_registry_rules",
            "feature_traceability_rules",
            "feature_change_control",
            "feature_archival_rules",
            "feature_v1_compatibility_rules",
        ],
    ),
    "flows/epic-flow.md": (
        ["../dna/governance.md", "feature-flow.md"],
        [
            "epic_directory_structure",
            "epic_lifecycle",
            "epic_charter_rules",
            "epic_roadmap_rules",
            "epic_decision_log_rules",
            "epic_subissue_registry_rules",
            "epic_risk_register_rules",
            "epic_closure_rules",
        ],
    ),
    "flows/workflows.md": (
        ["../dna/governance.md"],
        [
            "task_routing_rules",
            "feature_package_elevation_rules",
            "base_development_cycle",
            "workflow_type_selection",
            "autonomy_gradient",
        ],
    ),
}

# 05 §4: the `##` headings the spec fixes, in order (documents whose sections it leaves free are
# absent).
STARTER_SECTIONS = {
    "dna/README.md": ["Documents"],
    "dna/principles.md": [
        "Single Source of Truth",
        "Atomicity",
        "Compactness",
        "Progressive Disclosure",
        "Why, What, How",
        "Code and Documentation",
        "Index First",
        "Annotated Links",
        "One Decision, One ADR",
        "Trusted Contributors, Proportionate Safeguards",
    ],
    "dna/governance.md": [
        "Single Source of Truth Rules",
        "Document Language",
        "Source Dependency Tree",
        "Governance-specific Frontmatter Fields",
        "Directory Layers",
    ],
    "dna/frontmatter.md": ["Required Fields", "Optional Fields", "Additional Fields", "Examples"],
    "dna/changelog.md": ["Unreleased", "Migration Notes"],
    "product/context.md": ["Problem", "Who It Is For", "Constraints", "Non-Goals"],
    "engineering/testing-policy.md": [
        "Current Coverage",
        "What Must Be Tested",
        "What Is Verified Manually",
        "Verification For New Work",
        "Simplify Review",
        "Verification Context Separation",
    ],
    "flows/README.md": ["Flows", "Templates"],
}

FRONTMATTER_ORDER = [
    "title",
    "doc_kind",
    "doc_function",
    "purpose",
    "derived_from",
    "canonical_for",
    "status",
    "audience",
    "date",
]

# 02 §7.3, the unresolved-rule-reference pattern, verbatim.
CLAIM = re.compile(
    r"\b([A-Za-z][\w`, -]{4,60}?)\s+(?:is\s+|are\s+)?(?:defined|described|specified|owned|governed)"
    r"\s+(?:by|in)\s+(?:\[[^\]]*\]\(([^)\s]+\.md)[^)]*\)|`?([\w./-]+\.md))",
    re.IGNORECASE | re.ASCII,
)


def write_bank(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def seeded_snapshot(root: Path, *, materialized: bool = False) -> Snapshot:
    write_bank(root, seed_files(NAME, TODAY))
    if materialized:
        write_bank(root, shipped_templates())
    return Bank(str(root)).refresh()


def frontmatter(text: str) -> dict[str, Any]:
    split = split_frontmatter(text)
    assert split.yaml_text is not None
    loaded = load_yaml(split.yaml_text)
    assert loaded.error is None, loaded.error
    assert loaded.data is not None
    return loaded.data


def dna_texts(files: dict[str, str]) -> list[tuple[str, str]]:
    return sorted((path, text) for path, text in files.items() if path.startswith("dna/"))


def normalised(text: str, root: Path) -> str:
    return text.replace(str(root), "<ROOT>")


# --------------------------------------------------------------------------------------------
# 05 §2: the 24 documents
# --------------------------------------------------------------------------------------------


def test_init_seeds_exactly_the_24_documents_of_the_table() -> None:
    seeded = seed_files(NAME, TODAY)
    assert list(seeded) == sorted(path for path, *_ in SEEDED_TABLE)
    assert "flows/templates/adr/ADR-ID.md" not in seeded
    assert "dna/vocabulary.md" not in seeded
    assert not any(path.startswith(("epics/", "prd/", "prompts/")) for path in seeded)


@pytest.mark.parametrize(("path", "kind", "function", "status"), SEEDED_TABLE)
def test_each_seeded_document_has_the_kind_function_status_and_audience_of_the_table(
    path: str, kind: str, function: str, status: str
) -> None:
    doc = parse_text(path, seed_files(NAME, TODAY)[path])
    assert doc.parse_error is None
    assert (doc.doc_kind, doc.doc_function, doc.status) == (kind, function, status)
    assert doc.data["audience"] == "humans_and_agents"


def test_init_reports_the_eight_sections_plus_dna_and_flows_as_directories() -> None:
    assert SEEDED_DIRECTORIES == (
        "adr",
        "dna",
        "domain",
        "engineering",
        "features",
        "flows",
        "ops",
        "processes",
        "product",
        "use-cases",
    )
    top = {path.split("/", 1)[0] for path in seed_files(NAME, TODAY) if "/" in path}
    assert top == set(SEEDED_DIRECTORIES)


def test_the_starter_package_holds_the_14_literal_files() -> None:
    assert set(starter_files()) == set(STARTER_PATHS)
    assert len(STARTER_PATHS) == 14


def test_seeding_is_the_same_on_every_day() -> None:
    assert seed_files(NAME, TODAY) == seed_files(NAME, "2031-01-02")


@pytest.mark.parametrize("path", sorted(path for path, *_ in SEEDED_TABLE))
def test_frontmatter_keys_come_in_the_starter_order(path: str) -> None:
    keys = list(frontmatter(seed_files(NAME, TODAY)[path]))
    assert keys == [key for key in FRONTMATTER_ORDER if key in keys]
    assert {"title", "doc_kind", "doc_function", "purpose", "status", "audience"} <= set(keys)


def test_seed_files_refuses_when_the_starter_set_is_incomplete(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    partial = {p: t for p, t in starter_files().items() if p != "dna/governance.md"}
    monkeypatch.setattr(shipped_files, "starter_files", lambda: partial)
    with pytest.raises(RefusalError) as caught:
        seed_files(NAME, TODAY)
    refusal = caught.value.refusal
    assert refusal.rule == "starter-missing"
    assert refusal.message == (
        f"Starter set not found at {shipped_files.starter_location()}. "
        "The server package is incomplete."
    )


def test_a_missing_starter_package_reads_as_an_empty_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shipped_files, "STARTER_PACKAGE", "mbank.no_such_starter")
    shipped_files._starter.cache_clear()
    try:
        assert starter_files() == {}
        assert shipped_files.starter_location().endswith("/mbank/starter")
        with pytest.raises(RefusalError) as caught:
            seed_files(NAME, TODAY)
        assert caught.value.refusal.rule == "starter-missing"
    finally:
        monkeypatch.undo()
        shipped_files._starter.cache_clear()
    assert len(starter_files()) == 14


# --------------------------------------------------------------------------------------------
# 05 §3: what dna/ declares (01 §9.2)
# --------------------------------------------------------------------------------------------


def test_the_seeded_contract_is_the_starter_contract() -> None:
    seeded = seed_files(NAME, TODAY)
    contract = parse_contract(dna_texts(seeded), has_principles=True)
    assert contract.present
    assert contract.doc_kinds == (
        "governance",
        "project",
        "product",
        "domain",
        "prd",
        "use_case",
        "feature",
        "feature-support",
        "epic",
        "process",
        "prompt",
        "engineering",
        "ops",
        "adr",
    )
    assert contract.doc_functions == (
        "canonical",
        "index",
        "template",
        "reference",
        "derived",
        "roadmap",
        "risk_register",
        "decision_log",
        "subissue_registry",
    )
    assert contract.statuses == ("draft", "active", "archived")
    assert contract.delivery_statuses == ("planned", "in_progress", "done", "cancelled")
    assert contract.decision_statuses == ("proposed", "accepted", "superseded", "rejected")
    assert contract.roots == ("dna/principles.md",)
    assert contract.requires_derived_from is True
    assert contract.forbids_cycles is True


def test_the_root_is_declared_by_sentence_not_by_fallback() -> None:
    contract = parse_contract(dna_texts(seed_files(NAME, TODAY)), has_principles=False)
    assert contract.roots == ("dna/principles.md",)


def test_each_enumeration_is_declared_where_the_spec_puts_it() -> None:
    contract = parse_contract(dna_texts(seed_files(NAME, TODAY)), has_principles=True)
    where: dict[str, set[str]] = {}
    for (field, _value), path in contract.declared_in.items():
        where.setdefault(field, set()).add(path)
    assert where == {
        "doc_kind": {"dna/governance.md"},
        "doc_function": {"dna/governance.md"},
        "status": {"dna/frontmatter.md"},
        "delivery_status": {"dna/frontmatter.md"},
        "decision_status": {"dna/frontmatter.md"},
    }


def test_the_declaration_sentences_appear_verbatim_once() -> None:
    dna = dict(dna_texts(seed_files(NAME, TODAY)))
    governance = dna["dna/governance.md"]
    for sentence in (
        "The root document is `principles.md`.",
        "Every `active` non-root document must define `derived_from`.",
        "Cyclic dependencies are forbidden.",
    ):
        assert governance.count(sentence) == 1
    every = "\n".join(dna.values()).lower()
    assert every.count("root document is") == 1


def test_the_starter_layer_table_equals_the_builtin_map_and_weights() -> None:
    layers = parse_layers(dna_texts(seed_files(NAME, TODAY)))
    assert layers.by_dir == {
        "dna": "dna",
        "product": "knowledge",
        "domain": "knowledge",
        "engineering": "knowledge",
        "ops": "knowledge",
        "adr": "decision",
        "use-cases": "decision",
        "prd": "decision",
        "features": "delivery",
        "epics": "delivery",
        "flows": "flow",
        "processes": "flow",
        "prompts": "flow",
        "_inbox": "inbox",
    }
    assert layers.unknown == ()
    assert layers.source == ("dna/governance.md",)
    assert effective_weights(layers) == BUILTIN_WEIGHTS


def test_the_layer_table_is_the_exact_fourteen_row_block_after_its_heading() -> None:
    governance = starter_files()["dna/governance.md"]
    section = governance.split("## Directory Layers\n", 1)[1]
    table = [line for line in section.split("\n") if line.startswith("|")]
    assert table[:2] == ["| Directory | Layer | Weight |", "|-|-|-|"]
    assert len(table) == 16
    assert all(cell.startswith("`") for row in table[2:] for cell in row.strip("| ").split(" | "))
    sentence = " ".join(line for line in section.split("\n") if line and not line.startswith("|"))
    for layer in ("dna", "knowledge", "decision", "delivery", "flow", "inbox", "other"):
        assert f"`{layer}`" in sentence
    assert "built-in layer" in sentence


# --------------------------------------------------------------------------------------------
# 05 §1 rule 3: every doc_kind / doc_function used is declared by the starter itself
# --------------------------------------------------------------------------------------------


def unwrapped_frontmatter(text: str) -> dict[str, Any]:
    """The `## Instantiated Frontmatter` block of a wrapper, loaded (03 §4.5, simplified)."""
    body = split_frontmatter(text).body
    after = body.split("## Instantiated Frontmatter", 1)[1]
    block = after.split("```yaml\n", 1)[1].split("\n```", 1)[0]
    loaded = load_yaml(block)
    assert loaded.data is not None, loaded.error
    return loaded.data


def test_every_kind_function_and_status_used_is_declared_in_the_starter_contract() -> None:
    seeded = seed_files(NAME, TODAY)
    contract = parse_contract(dna_texts(seeded), has_principles=True)
    declared = {
        "doc_kind": set(contract.doc_kinds),
        "doc_function": set(contract.doc_functions),
        "status": set(contract.statuses),
        "delivery_status": set(contract.delivery_statuses),
        "decision_status": set(contract.decision_statuses),
    }
    used: list[tuple[str, str, str]] = []

    def collect(origin: str, data: dict[str, Any]) -> None:
        for field in declared:
            if isinstance(data.get(field), str):
                used.append((origin, field, data[field]))
        if "template_for" in data:
            used.append((origin, "doc_kind", data["template_for"]))

    for path, text in seeded.items():
        collect(path, frontmatter(text))
    for section in SECTIONS:
        collect(f"first use of {section.dir}", frontmatter(section_index(section)))
    for path, text in shipped_templates().items():
        data = frontmatter(text)
        collect(path, data)
        if data.get("doc_function") == "template":
            collect(f"{path} (instantiated)", unwrapped_frontmatter(text))

    undeclared = [(origin, f, v) for origin, f, v in used if v not in declared[f]]
    assert undeclared == []
    kinds = {value for _, field, value in used if field == "doc_kind"}
    assert kinds == declared["doc_kind"]  # and every declared kind is used somewhere
    assert len(used) > 100


# --------------------------------------------------------------------------------------------
# 05 §1 rule 2: a seeded bank validates with zero findings, and still after materialising
# --------------------------------------------------------------------------------------------


def test_a_seeded_bank_validates_with_zero_findings(tmp_path: Path) -> None:
    snapshot = seeded_snapshot(tmp_path / "bank")
    assert len(snapshot.docs) == 24
    assert snapshot.contract.present
    assert findings(snapshot) == ()


def test_a_seeded_bank_with_all_24_templates_validates_with_zero_findings(
    tmp_path: Path,
) -> None:
    snapshot = seeded_snapshot(tmp_path / "bank", materialized=True)
    assert len(snapshot.docs) == 24 + 23  # the templates index replaces the pointer
    assert snapshot.docs["flows/templates/README.md"].title == "Templates Index"
    assert findings(snapshot) == ()


def test_every_seeded_document_is_registered_in_an_index(tmp_path: Path) -> None:
    snapshot = seeded_snapshot(tmp_path / "bank")
    unregistered = [
        path
        for path, doc in snapshot.docs.items()
        if not doc.registered_in and doc.doc_function != "index"
    ]
    assert unregistered == []
    assert snapshot.docs["product/context.md"].registered_in == ("product/README.md",)
    assert snapshot.docs["engineering/testing-policy.md"].registered_in == (
        "engineering/README.md",
    )


@pytest.mark.parametrize("materialized", [False, True])
def test_no_document_links_a_file_the_bank_does_not_have(
    tmp_path: Path, materialized: bool
) -> None:
    snapshot = seeded_snapshot(tmp_path / "bank", materialized=materialized)
    dangling = [
        (doc.path, link.raw)
        for doc in snapshot.docs.values()
        for link in doc.links
        if not link.external and link.to not in snapshot.docs
    ]
    assert dangling == []


def test_prose_cites_another_document_only_through_a_link_that_resolves() -> None:
    """05 §3.6: a "defined in …" sentence uses a markdown link, never a bare file name."""
    seeded = seed_files(NAME, TODAY)
    claims = []
    for path, text in seeded.items():
        for match in CLAIM.finditer(text):
            target = resolve_from(path, match.group(2) or match.group(3)).resolved
            claims.append((path, match.group(2) is not None, target in seeded))
    assert claims == [("flows/feature-flow.md", True, True)]


def test_no_two_documents_own_a_key_and_none_forbids_what_it_owns(tmp_path: Path) -> None:
    snapshot = seeded_snapshot(tmp_path / "bank", materialized=True)
    assert all(len(owners) == 1 for owners in snapshot.owners.values())
    for doc in snapshot.docs.values():
        assert not set(doc.canonical_for) & set(doc.must_not_define)


# --------------------------------------------------------------------------------------------
# 05 §4: the seeded documents one by one
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(STARTER_EDGES))
def test_each_starter_document_derives_and_owns_what_the_spec_says(path: str) -> None:
    data = frontmatter(starter_files()[path])
    derived, owned = STARTER_EDGES[path]
    assert data.get("derived_from") == derived
    assert data.get("canonical_for", []) == owned


@pytest.mark.parametrize("path", sorted(STARTER_SECTIONS))
def test_each_starter_document_has_the_sections_the_spec_fixes(path: str) -> None:
    doc = parse_text(path, starter_files()[path])
    assert [section.title for section in doc.sections] == STARTER_SECTIONS[path]


@pytest.mark.parametrize("path", STARTER_PATHS)
def test_every_starter_document_opens_with_its_title_as_h1(path: str) -> None:
    doc = parse_text(path, starter_files()[path])
    assert doc.first_h1 == doc.title == frontmatter(starter_files()[path])["title"]


def test_the_dna_index_lists_the_seven_other_dna_documents_in_reading_order() -> None:
    doc = parse_text("dna/README.md", starter_files()["dna/README.md"])
    assert [link.raw for link in doc.links] == [
        "principles.md",
        "governance.md",
        "frontmatter.md",
        "lifecycle.md",
        "cross-references.md",
        "glossary.md",
        "changelog.md",
    ]
    bullets = [line for line in starter_files()["dna/README.md"].split("\n") if line[:3] == "- ["]
    assert len(bullets) == 7 and all(" — " in line for line in bullets)


def test_the_frontmatter_schema_opens_with_its_heading_and_shows_two_yaml_examples() -> None:
    text = starter_files()["dna/frontmatter.md"]
    assert split_frontmatter(text).body.split("\n", 1)[0] == "# Frontmatter Schema"
    examples = split_frontmatter(text).body.split("## Examples", 1)[1]
    blocks = re.findall(r"```yaml\n(.*?)\n```", examples, re.DOTALL)
    assert len(blocks) == 2
    first, second = (load_yaml(block).data for block in blocks)
    assert first is not None and second is not None
    assert any(isinstance(item, str) for item in first["derived_from"])
    assert any(
        isinstance(item, dict) and {"path", "fit"} <= set(item) for item in first["derived_from"]
    )
    assert first["canonical_for"]
    assert second["doc_kind"] == "feature"
    assert second["delivery_status"] and second["anchors"]


def test_the_frontmatter_tables_name_the_required_and_optional_fields() -> None:
    text = starter_files()["dna/frontmatter.md"]
    required, optional = (
        text.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]
        for name in ("Required Fields", "Optional Fields")
    )

    def heads(table: str) -> list[str]:
        rows = [line for line in table.split("\n") if line.startswith("| `")]
        return [row.split("|")[1].strip().strip("`") for row in rows]

    assert heads(required) == ["title", "doc_kind", "doc_function", "purpose", "status"]
    assert heads(optional) == [
        "derived_from",
        "canonical_for",
        "must_not_define",
        "delivery_status",
        "decision_status",
        "anchors",
        "audience",
        "date",
    ]
    # the doc_kind and doc_function rows refer to the governance table without declaring values
    for row in required.split("\n"):
        if row.startswith(("| `doc_kind`", "| `doc_function`")):
            assert row.count("`") == 2


def test_the_sync_checklist_has_exactly_three_items() -> None:
    text = starter_files()["dna/lifecycle.md"]
    checklist = text.split("## Sync Checklist\n", 1)[1]
    items = [line for line in checklist.split("\n") if re.match(r"^(\d+\.|-) ", line)]
    assert len(items) == 3


def test_the_glossary_points_at_the_domain_index_and_nowhere_missing() -> None:
    doc = parse_text("dna/glossary.md", starter_files()["dna/glossary.md"])
    assert [link.to for link in doc.links] == ["domain/README.md"]
    for term in ("canonical_for", "derived_from", "Root document", "Layer", "Quarantine", "Drift"):
        assert term in starter_files()["dna/glossary.md"]


@pytest.mark.parametrize("path", ["product/context.md", "engineering/testing-policy.md"])
def test_the_seeded_drafts_end_their_quoted_purpose_with_the_seed_sentence(path: str) -> None:
    text = starter_files()[path]
    assert frontmatter(text)["purpose"].endswith(" " + SEEDED_DRAFT_SENTENCE)
    purpose_line = next(line for line in text.split("\n") if line.startswith("purpose:"))
    assert purpose_line.startswith("purpose: '") and purpose_line.endswith("'")


def test_the_testing_policy_carries_a_real_simplify_review() -> None:
    doc = parse_text(
        "engineering/testing-policy.md", starter_files()["engineering/testing-policy.md"]
    )
    text = starter_files()["engineering/testing-policy.md"]
    simplify = text.split("## Simplify Review\n", 1)[1].split("\n## ", 1)[0]
    assert "Simplify Review" in [section.title for section in doc.sections]
    assert not simplify.strip().startswith("*")  # real text, not a placeholder
    assert "done" in simplify and "dead code" in simplify


def test_the_feature_flow_done_gate_cites_the_simplify_review_through_a_resolving_link() -> None:
    text = starter_files()["flows/feature-flow.md"]
    assert "[engineering/testing-policy.md](../engineering/testing-policy.md)" in text
    assert 15_000 <= len(text.encode("utf-8")) <= 45_000
    for stage in ("Draft", "Problem Ready", "Design Ready", "Plan Ready", "In Progress", "Done"):
        assert f"**{stage}**" in text
    for prefix in ("REQ", "NS", "SC", "CHK", "EVID", "SOL", "ALT", "STEP"):
        assert f"`{prefix}`" in text


def test_the_flows_index_links_each_flow_and_only_the_templates_index() -> None:
    doc = parse_text("flows/README.md", starter_files()["flows/README.md"])
    assert [link.raw for link in doc.links] == [
        "feature-flow.md",
        "epic-flow.md",
        "workflows.md",
        "templates/README.md",
    ]


def test_no_flow_names_a_template_path_with_a_slash() -> None:
    for path, text in starter_files().items():
        assert "templates/" not in text.replace("templates/README.md", ""), path


# --------------------------------------------------------------------------------------------
# 05 §5: the section table
# --------------------------------------------------------------------------------------------


def test_the_section_table_is_the_eleven_known_sections_in_root_index_order() -> None:
    assert [(s.dir, s.doc_kind, s.title, s.seeded) for s in SECTIONS] == [
        ("product", "product", "Product Documentation Index", True),
        ("domain", "domain", "Domain Documentation Index", True),
        ("engineering", "engineering", "Engineering Documentation Index", True),
        ("ops", "ops", "Operations Documentation Index", True),
        ("adr", "adr", "Decision Records Index", True),
        ("use-cases", "use_case", "Use Cases Index", True),
        ("features", "feature", "Feature Registry", True),
        ("epics", "epic", "Epic Registry", False),
        ("prd", "prd", "PRD Registry", False),
        ("processes", "process", "Process Registry", True),
        ("prompts", "prompt", "Prompt Registry", False),
    ]
    assert all(s.purpose.endswith(".") and s.route.startswith("Read when") for s in SECTIONS)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("features/FT-001/brief.md", "features"),
        ("use-cases/UC-001.md", "use-cases"),
        ("prompts/PROMPT-1-x.md", "prompts"),
        ("dna/governance.md", None),
        ("flows/feature-flow.md", None),
        ("README.md", None),
        ("playbooks/x.md", None),
    ],
)
def test_section_for_is_the_entry_of_the_first_segment(path: str, expected: str | None) -> None:
    section = section_for(path)
    assert (section.dir if section else None) == expected


# --------------------------------------------------------------------------------------------
# 05 §6: the generated documents
# --------------------------------------------------------------------------------------------


def test_the_seeded_section_indexes_register_their_seed_with_a_backticked_label() -> None:
    seeded = seed_files(NAME, TODAY)
    context_purpose = frontmatter(seeded["product/context.md"])["purpose"]
    assert f"- [`Product Context`](context.md) — {context_purpose}\n" in seeded["product/README.md"]
    assert "- [`Testing Policy`](testing-policy.md) — " in seeded["engineering/README.md"]
    for path in ("product/README.md", "engineering/README.md"):
        assert SECTION_PLACEHOLDER not in seeded[path]


@pytest.mark.parametrize(
    "directory", ["domain", "ops", "adr", "use-cases", "features", "processes"]
)
def test_an_empty_section_registry_holds_exactly_the_placeholder_line(directory: str) -> None:
    text = seed_files(NAME, TODAY)[f"{directory}/README.md"]
    registry = text.split("## Registry\n", 1)[1]
    assert registry == f"\n{SECTION_PLACEHOLDER}\n"
    assert "](" not in split_frontmatter(text).body  # no link line: registration has no model


def test_section_index_texts(snapshot: Any) -> None:
    by_dir = {section.dir: section for section in SECTIONS}
    seed = RegistryEntry("context.md", "Product Context", "Read this first.")
    assert {
        "product (seeded)": section_index(by_dir["product"], [seed]),
        "ops (empty)": section_index(by_dir["ops"]),
        "epics (first use)": section_index(by_dir["epics"]),
        "prompts (first use, contract root)": section_index(
            by_dir["prompts"], derived_from="../dna/principles.md"
        ),
        "prd (first use, no governance, no root)": section_index(by_dir["prd"], derived_from=None),
    } == snapshot


def test_a_section_index_without_a_source_omits_derived_from() -> None:
    data = frontmatter(section_index(SECTIONS[8], derived_from=None))
    assert "derived_from" not in data
    assert list(data) == ["title", "doc_kind", "doc_function", "purpose", "status", "audience"]


def test_root_index_text(snapshot: Any) -> None:
    assert root_index(NAME) == snapshot


def test_templates_pointer_text(snapshot: Any) -> None:
    assert templates_pointer() == snapshot


def test_the_root_index_names_the_project_in_bold_and_in_its_quoted_purpose() -> None:
    text = root_index(NAME)
    assert "\nKnowledge base for **ebook_parser**.\n" in text
    assert frontmatter(text)["purpose"] == (
        "Root navigation for the ebook_parser memory bank: start here to see how the knowledge "
        "base is laid out."
    )
    assert "purpose: 'Root navigation for the ebook_parser memory bank: " in text


@pytest.mark.parametrize(
    "name",
    ["O'Brien: parser #2", "  spaced  ", "Книжный парсер", "a\tb", "x" * 100, "- [ ] {x}", "null"],
)
def test_the_root_index_purpose_reads_back_for_any_one_line_name(name: str) -> None:
    data = frontmatter(root_index(name))
    project = name.strip()
    assert data["purpose"] == (
        f"Root navigation for the {project} memory bank: start here to see how the knowledge "
        "base is laid out."
    )
    assert f"Knowledge base for **{project}**." in root_index(name)


def test_the_root_index_lists_the_eight_sections_then_flows_then_dna() -> None:
    body = split_frontmatter(root_index(NAME)).body
    annotated = body.split("## Annotated Index\n\n", 1)[1].split("\n## ", 1)[0]
    entry = re.compile(r"^- \[`?([a-z][a-z0-9-]*)/README\.md`?\]\(")  # 03 §4.10's entry shape
    entries = [m.group(1) for line in annotated.split("\n") if (m := entry.match(line))]
    assert entries == [s.dir for s in SECTIONS if s.seeded] + ["flows", "dna"]
    blocks = annotated.rstrip("\n").split("\n\n")
    assert len(blocks) == 3  # sections with no blank line between them, flows, dna
    assert len(blocks[0].split("\n")) == 16
    for section in SECTIONS:
        if section.seeded:
            assert f"- [`{section.dir}/README.md`]({section.dir}/README.md)\n  {section.route}" in (
                annotated
            )
    routes = body.split("## Task-Specific Routes\n", 1)[1]
    assert routes.strip().split("\n") == [
        "| Task | Route |",
        "|-|-|",
        "| Starting a feature | [`flows/feature-flow.md`](flows/feature-flow.md) |",
        "| Recording a decision | [`adr/README.md`](adr/README.md) |",
        "| Choosing how much documentation a task needs "
        "| [`flows/workflows.md`](flows/workflows.md) |",
    ]
    assert "## Start Here\n\nRead [dna/README.md](dna/README.md) first" in body


def test_the_seeded_bank_renders_the_same_generated_files(tmp_path: Path, snapshot: Any) -> None:
    """The generated files as init writes them, with the tmp root normalised."""
    root = tmp_path / "bank"
    seeded = seeded_snapshot(root)
    generated = {
        path: normalised((root / path).read_text(encoding="utf-8"), root)
        for path in seeded.docs
        if path.endswith("README.md") and path not in ("dna/README.md", "flows/README.md")
    }
    assert sorted(generated) == sorted(
        ["README.md", "flows/templates/README.md"]
        + [f"{s.dir}/README.md" for s in SECTIONS if s.seeded]
    )
    assert generated == snapshot


# --------------------------------------------------------------------------------------------
# 05 §8: routing in a fresh bank
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("materialized", [False, True])
@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("frontmatter schema", "dna/frontmatter.md"),
        ("how a feature package moves through its gates", "flows/feature-flow.md"),
        ("frontmatter schema rules", "dna/frontmatter.md"),
    ],
)
def test_routing_in_a_fresh_bank_finds_the_owner_first(
    tmp_path: Path, materialized: bool, question: str, first: str
) -> None:
    snapshot = seeded_snapshot(tmp_path / "bank", materialized=materialized)
    results = route(snapshot, SearchIndex(), question)["results"]
    assert results[0]["path"] == first
    assert all(snapshot.docs[r["path"]].doc_function != "template" for r in results)


# --------------------------------------------------------------------------------------------
# 05 §8: no sentence shared with upstream (opt-in)
# --------------------------------------------------------------------------------------------


def test_no_line_of_the_starter_or_the_templates_is_an_upstream_line() -> None:
    """Opt-in: MBANK_UPSTREAM_LINE_HASHES names a file of SHA-256 hex digests, one a line, each
    of an upstream line with its surrounding whitespace stripped (UTF-8); lines shorter than 40
    characters after stripping are not compared."""
    source = os.environ.get("MBANK_UPSTREAM_LINE_HASHES")
    if not source:
        pytest.skip("MBANK_UPSTREAM_LINE_HASHES is not set (opt-in)")
    hashes = {line.strip().lower() for line in Path(source).read_text().split("\n") if line.strip()}
    shared = [
        (path, line.strip())
        for path, text in {**starter_files(), **shipped_templates()}.items()
        for line in text.split("\n")
        if len(line.strip()) >= 40
        and hashlib.sha256(line.strip().encode("utf-8")).hexdigest() in hashes
    ]
    assert shared == []
