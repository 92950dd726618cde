"""The shipped templates: the catalogue of 24 files, the wrapper format, what each instantiates,
and the two indexes (spec 05 §7, 03 §4.4–§4.6, 07 §3.19)."""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from markdown_it import MarkdownIt

from mbank.catalogue import (
    TEMPLATE_PATHS,
    TEMPLATES_DIR,
    section_for,
    shipped_template_names,
)
from mbank.parse import load_yaml, parse_text, resolve_from, split_frontmatter
from mbank.shipped_files import seed_files, shipped_templates
from mbank.snapshot import Bank
from mbank.validate import findings
from mbank.validation.references import shipped_template_names as names_seen_by_validation
from tests.conftest import TODAY

# 05 §7.2: wrapper doc_kind, template_for, template_target_path, canonical_for key, and the
# doc_kind / doc_function the template instantiates.
CATALOGUE = {
    "adr/ADR-ID.md": (
        "adr",
        "adr",
        "adr/ADR-YYYYMMDDTHHMMSSZ-short-decision-name.md",
        "adr_template",
        ("adr", "canonical"),
    ),
    "epic/charter.md": (
        "epic",
        "epic",
        "epics/EP-XXX/charter.md",
        "epic_charter_template",
        ("epic", "canonical"),
    ),
    "epic/roadmap.md": (
        "epic",
        "epic",
        "epics/EP-XXX/roadmap.md",
        "epic_roadmap_template",
        ("epic", "roadmap"),
    ),
    "epic/decision-log.md": (
        "epic",
        "epic",
        "epics/EP-XXX/decision-log.md",
        "epic_decision_log_template",
        ("epic", "decision_log"),
    ),
    "epic/subissues.md": (
        "epic",
        "epic",
        "epics/EP-XXX/subissues.md",
        "epic_subissues_template",
        ("epic", "subissue_registry"),
    ),
    "epic/risks.md": (
        "epic",
        "epic",
        "epics/EP-XXX/risks.md",
        "epic_risks_template",
        ("epic", "risk_register"),
    ),
    "feature/README.md": (
        "feature",
        "feature",
        "features/FT-XXX/README.md",
        "feature_readme_template",
        ("feature", "index"),
    ),
    "feature/brief.md": (
        "feature",
        "feature",
        "features/FT-XXX/brief.md",
        "feature_brief_template",
        ("feature", "canonical"),
    ),
    "feature/design.md": (
        "feature",
        "feature",
        "features/FT-XXX/design.md",
        "feature_design_template",
        ("feature", "canonical"),
    ),
    "feature/implementation-plan.md": (
        "feature",
        "feature",
        "features/FT-XXX/implementation-plan.md",
        "feature_implementation_plan_template",
        ("feature", "derived"),
    ),
    "feature/short.md": (
        "feature",
        "feature",
        "features/FT-XXX/feature.md",
        "feature_short_template",
        ("feature", "canonical"),
    ),
    "feature/large.md": (
        "feature",
        "feature",
        "features/FT-XXX/feature.md",
        "feature_large_template",
        ("feature", "canonical"),
    ),
    "feature/support/runtime-surfaces.md": (
        "feature-support",
        "feature-support",
        "features/FT-XXX/runtime-surfaces.md",
        "feature_runtime_surfaces_template",
        ("feature-support", "reference"),
    ),
    "feature/support/ui-reference.md": (
        "feature-support",
        "feature-support",
        "features/FT-XXX/ui-reference/README.md",
        "feature_ui_reference_template",
        ("feature-support", "reference"),
    ),
    "feature/support/use-cases.md": (
        "feature-support",
        "feature-support",
        "features/FT-XXX/use-cases/README.md",
        "feature_use_cases_template",
        ("feature-support", "reference"),
    ),
    "prd/PRD-ID.md": (
        "prd",
        "prd",
        "prd/PRD-<id>-short-name.md",
        "prd_template",
        ("prd", "canonical"),
    ),
    "process/README.md": (
        "process",
        "process",
        "processes/README.md",
        "process_readme_template",
        ("process", "index"),
    ),
    "process/process-card.md": (
        "process",
        "process",
        "processes/PROCESS-<id>-process-card.md",
        "process_template_card",
        ("process", "canonical"),
    ),
    "process/session-handoff.md": (
        "process",
        "process",
        "processes/PROCESS-<id>-session-handoff.md",
        "process_session_handoff_template",
        ("process", "canonical"),
    ),
    "process/lifecycle-protocol.md": (
        "process",
        "process",
        "processes/PROCESS-<id>-lifecycle-protocol.md",
        "process_lifecycle_protocol_template",
        ("process", "canonical"),
    ),
    "prompt/PROMPT-ID.md": (
        "prompt",
        "prompt",
        "prompts/PROMPT-<id>-short-name.md",
        "prompt_template",
        ("prompt", "canonical"),
    ),
    "use-case/UC-XXX.md": (
        "use_case",
        "use_case",
        "use-cases/UC-XXX-short-name.md",
        "use_case_template",
        ("use_case", "canonical"),
    ),
}
WRAPPERS = sorted(CATALOGUE)
INDEXES = ["README.md", "epic/README.md"]

# 05 §7.2: wrapper derived_from by family, relative to the wrapper.
WRAPPER_SOURCES = {
    "adr": ["../../../dna/governance.md"],
    "prd": ["../../../dna/governance.md"],
    "prompt": ["../../../dna/governance.md"],
    "epic": ["../../epic-flow.md"],
    "feature": ["../../feature-flow.md"],
    "feature/support": ["../../../feature-flow.md"],
    "process": ["../../workflows.md"],
    "use-case": ["../../feature-flow.md", "../../../dna/governance.md"],
}

# 05 §7.3: notable instantiated fields (exact values) and the `##` headings of the body.
INSTANTIATED: dict[str, tuple[dict[str, Any], list[str]]] = {
    "adr/ADR-ID.md": (
        {
            "status": "draft",
            "decision_status": "proposed",
            "date": "YYYY-MM-DD",
            "audience": "humans_and_agents",
            "must_not_define": ["current_system_state", "implementation_plan"],
        },
        [
            "Context",
            "Decision Drivers",
            "Options Considered",
            "Decision",
            "Consequences",
            "Risks And Mitigation",
            "Follow-up",
            "Related Links",
        ],
    ),
    "epic/charter.md": (
        {"status": "draft", "delivery_status": "planned", "date": "YYYY-MM-DD"},
        ["Problem", "Goal", "Scope", "Out Of Scope", "Success Criteria", "Features", "Links"],
    ),
    "epic/roadmap.md": (
        {"status": "draft"},
        ["Milestones", "Sequencing", "Dependencies", "Change History"],
    ),
    "epic/decision-log.md": ({"status": "draft"}, ["Log", "Open Questions"]),
    "epic/subissues.md": ({"status": "draft"}, ["Registry", "Conventions"]),
    "epic/risks.md": ({"status": "draft"}, ["Register", "Review Cadence"]),
    "feature/README.md": ({"delivery_status": "planned"}, ["Summary", "Documents", "Status"]),
    "feature/brief.md": (
        {
            "delivery_status": "planned",
            "must_not_define": ["implementation_sequence", "new_architecture_or_contract"],
        },
        ["What", "Design Requirement Decision", "Plan Requirement Decision", "Verify"],
    ),
    "feature/design.md": (
        {"must_not_define": ["implementation_sequence"]},
        [
            "Context",
            "Options",
            "Rejected Alternatives",
            "Chosen Design",
            "Contracts And Interfaces",
            "Risks",
        ],
    ),
    "feature/implementation-plan.md": (
        {"must_not_define": ["requirement_definition", "architecture_decision"]},
        ["Steps", "Sequencing", "Verification Mapping", "Rollback"],
    ),
    "feature/short.md": (
        {"delivery_status": "planned"},
        ["Summary", "Requirements", "Verification"],
    ),
    "feature/large.md": (
        {"delivery_status": "planned"},
        ["Summary", "Context", "Requirements", "Design", "Plan", "Verification", "Risks"],
    ),
    "feature/support/runtime-surfaces.md": ({}, ["Surfaces", "Configuration", "Observability"]),
    "feature/support/ui-reference.md": ({}, ["Screens", "States", "Assets"]),
    "feature/support/use-cases.md": ({}, ["Use Cases", "Coverage"]),
    "prd/PRD-ID.md": (
        {
            "must_not_define": [
                "implementation_sequence",
                "architecture_decision",
                "feature_level_verify_contract",
            ]
        },
        [
            "Problem",
            "Users",
            "Goals And Metrics",
            "Requirements",
            "Non-Goals",
            "Open Questions",
            "Related Links",
        ],
    ),
    "process/README.md": ({}, ["Processes"]),
    "process/process-card.md": (
        {},
        ["Purpose", "Trigger", "Steps", "Roles", "Outputs", "Exceptions"],
    ),
    "process/session-handoff.md": (
        {},
        ["State At Handoff", "In Flight", "Next Steps", "Open Questions", "Pointers"],
    ),
    "process/lifecycle-protocol.md": (
        {},
        ["Stages", "Entry And Exit Criteria", "Roles", "Escalation"],
    ),
    "prompt/PROMPT-ID.md": (
        {
            "prompt_kind": "task",
            "prompt_status": "draft",
            "source_prompt": "none",
            "variables": [],
            "model_notes": "none",
        },
        ["Purpose", "Prompt", "Variables", "Model Notes", "Change Log"],
    ),
    "use-case/UC-XXX.md": (
        {
            "must_not_define": [
                "implementation_sequence",
                "architecture_decision",
                "feature_level_test_matrix",
            ]
        },
        [
            "Actor",
            "Preconditions",
            "Main Flow",
            "Alternative Flows",
            "Postconditions",
            "Business Rules",
            "Related Links",
        ],
    ),
}

# 05 §7.3's table skeletons: section → header row.
TABLES = {
    "adr/ADR-ID.md": ("Options Considered", "| Option | Summary | Pros | Cons | Outcome |"),
    "epic/roadmap.md": ("Milestones", "| Milestone | Target | Exit Criteria | Status |"),
    "epic/decision-log.md": ("Log", "| Date | Decision | Rationale | Record |"),
    "epic/subissues.md": ("Registry", "| ID | Title | Status | Link |"),
    "epic/risks.md": (
        "Register",
        "| ID | Risk | Likelihood | Impact | Mitigation | Owner | Status |",
    ),
    "feature/support/runtime-surfaces.md": (
        "Surfaces",
        "| Surface | Entry Point | Owner | Notes |",
    ),
    "prompt/PROMPT-ID.md": ("Variables", "| Name | Meaning | Example |"),
}

WRAPPER_KEYS = [
    "title",
    "doc_kind",
    "doc_function",
    "purpose",
    "template_for",
    "template_target_path",
    "derived_from",
    "canonical_for",
    "status",
    "audience",
]
TEMPLATE_ONLY = {"template_for", "template_target_path", "doc_function"}
# 03 §4.6's placeholder pattern.
PLACEHOLDER = re.compile(
    r"^(YYYY-MM-DD|YYYYMMDD.*|<[^>]+>|.*\b(FT-XXX|ADR-ID|PRD-ID|UC-XXX|EP-XXX|PROMPT-ID)\b.*)$"
)
# 02 §7.3, the unresolved-rule-reference pattern, verbatim.
CLAIM = re.compile(
    r"\b([A-Za-z][\w`, -]{4,60}?)\s+(?:is\s+|are\s+)?(?:defined|described|specified|owned|governed)"
    r"\s+(?:by|in)\s+(?:\[[^\]]*\]\(([^)\s]+\.md)[^)]*\)|`?([\w./-]+\.md))",
    re.IGNORECASE | re.ASCII,
)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+\.md(?:#[^)\s]*)?)\)")


def shipped(path: str) -> str:
    return shipped_templates()[f"{TEMPLATES_DIR}/{path}"]


def frontmatter(text: str) -> dict[str, Any]:
    split = split_frontmatter(text)
    assert split.yaml_text is not None
    loaded = load_yaml(split.yaml_text)
    assert loaded.data is not None, loaded.error
    return loaded.data


def unwrap(text: str) -> tuple[str | None, str | None]:
    """03 §4.5 steps 1–3 with markdown-it-py: the yaml block and the markdown block, or None."""
    tokens = MarkdownIt("commonmark").parse(split_frontmatter(text).body)

    def block(heading: str, language: str) -> str | None:
        start = next(
            (
                token.map[0]
                for index, token in enumerate(tokens)
                if token.type == "heading_open"
                and token.tag == "h2"
                and token.markup == "##"
                and token.level == 0
                and token.map
                and tokens[index + 1].content.strip().startswith(heading)
            ),
            None,
        )
        if start is None:
            return None
        for token in tokens:
            if (
                token.type == "fence"
                and token.map
                and token.map[0] > start
                and token.info.split()[:1] == [language]
            ):
                return token.content
        return None

    raw = block("Instantiated Frontmatter", "yaml")
    if raw is not None and raw.split("\n", 1)[0].strip() == "---":
        raw = raw.split("\n", 1)[1].split("\n---", 1)[0]
    body = block("Instantiated Body", "markdown")
    return raw, (body.rstrip() if body is not None else None)


def instantiated(path: str) -> tuple[dict[str, Any], str]:
    raw, body = unwrap(shipped(path))
    assert raw is not None and body is not None
    loaded = load_yaml(raw)
    assert loaded.error is None, loaded.error
    assert loaded.data is not None
    return loaded.data, body


def concrete(target_pattern: str) -> str:
    """A target path a caller might give for a template's target pattern."""
    return (
        target_pattern.replace("FT-XXX", "FT-001")
        .replace("EP-XXX", "EP-001")
        .replace("UC-XXX", "UC-001")
        .replace("<id>", "001")
        .replace("YYYYMMDDTHHMMSSZ", "20260914T120000Z")
    )


# --------------------------------------------------------------------------------------------
# 05 §7.2: the catalogue
# --------------------------------------------------------------------------------------------


def test_the_shipped_set_is_the_24_files_of_the_catalogue() -> None:
    assert sorted(shipped_templates()) == sorted(f"flows/templates/{p}" for p in TEMPLATE_PATHS)
    assert sorted(TEMPLATE_PATHS) == sorted([*WRAPPERS, *INDEXES])
    assert len(TEMPLATE_PATHS) == 24


def test_shipped_template_names_are_the_file_names_of_every_shipped_file() -> None:
    assert shipped_template_names() == frozenset(p.rsplit("/", 1)[-1] for p in TEMPLATE_PATHS)
    assert shipped_template_names() == names_seen_by_validation()
    # The core knows the names as data; the package files the shell reads must agree.
    assert shipped_template_names() == frozenset(p.rsplit("/", 1)[-1] for p in shipped_templates())


@pytest.mark.parametrize("path", WRAPPERS)
def test_each_wrapper_declares_the_kind_target_and_key_of_the_catalogue(path: str) -> None:
    data = frontmatter(shipped(path))
    kind, template_for, target, key, _ = CATALOGUE[path]
    assert list(data) == WRAPPER_KEYS
    assert data["doc_kind"] == kind
    assert data["doc_function"] == "template"
    assert data["template_for"] == template_for
    assert data["template_target_path"] == target
    assert data["canonical_for"] == [key]
    assert (data["status"], data["audience"]) == ("active", "humans_and_agents")
    assert data["title"].endswith(" Template")
    assert parse_text(path, shipped(path)).first_h1 == data["title"]


@pytest.mark.parametrize("path", WRAPPERS)
def test_each_wrapper_derives_from_the_flow_it_implements(path: str) -> None:
    family = path.rsplit("/", 1)[0]
    bank_path = f"{TEMPLATES_DIR}/{path}"
    sources = frontmatter(shipped(path))["derived_from"]
    assert sources == WRAPPER_SOURCES[family]
    seeded = seed_files("x", TODAY)
    assert all(resolve_from(bank_path, source).resolved in seeded for source in sources)


@pytest.mark.parametrize("path", WRAPPERS)
def test_each_target_lies_in_the_section_of_its_kind(path: str) -> None:
    _, template_for, target, _, _ = CATALOGUE[path]
    section = section_for(target)
    assert section is not None
    assert section.doc_kind == {"feature-support": "feature"}.get(template_for, template_for)


def test_the_shipped_directories_answer_the_lookup_examples_by_name() -> None:
    """03 §4.4's examples that follow from the files alone: a named file, else the single
    non-README file of the kind's directory (or its alias)."""
    directories: dict[str, list[str]] = {}
    for path in TEMPLATE_PATHS:
        if "/" in path:
            directory, name = path.rsplit("/", 1)
            directories.setdefault(directory, []).append(name)

    def by_name(kind: str, target: str) -> str | None:
        name = target.rsplit("/", 1)[-1]
        for directory in (kind, {"use_case": "use-case", "feature-support": "feature"}.get(kind)):
            found = directories.get(directory or "")
            if found is None:
                continue
            if name in found:
                return f"{directory}/{name}"
            others = [n for n in found if n != "README.md"]
            return f"{directory}/{others[0]}" if len(others) == 1 else None
        return None

    assert by_name("adr", "adr/ADR-20260914T120000Z-queue.md") == "adr/ADR-ID.md"
    assert by_name("use_case", "use-cases/UC-7-checkout.md") == "use-case/UC-XXX.md"
    assert by_name("prompt", "prompts/PROMPT-3-review.md") == "prompt/PROMPT-ID.md"
    assert by_name("prd", "prd/PRD-2-billing.md") == "prd/PRD-ID.md"
    assert by_name("feature", "features/FT-7/brief.md") == "feature/brief.md"
    assert by_name("feature", "features/FT-7/notes.md") is None
    assert by_name("epic", "epics/EP-1/charter.md") == "epic/charter.md"
    assert by_name("epic", "epics/EP-1/plan.md") is None
    assert by_name("process", "processes/PROCESS-4-onboarding.md") is None
    for kind in ("domain", "engineering", "product", "ops"):
        assert by_name(kind, f"{kind}/x.md") is None


# --------------------------------------------------------------------------------------------
# 05 §7.1: the wrapper format unwraps (03 §4.5)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", WRAPPERS)
def test_every_wrapper_unwraps_into_a_mapping_and_a_body_that_starts_with_an_h1(
    path: str,
) -> None:
    data, body = instantiated(path)
    assert isinstance(data, dict) and data
    assert body.startswith("# ")
    assert parse_text("x.md", body).first_h1 == body.split("\n", 1)[0][2:]


@pytest.mark.parametrize("path", WRAPPERS)
def test_the_instantiated_document_has_the_fields_of_the_catalogue(path: str) -> None:
    data, _ = instantiated(path)
    notable, _ = INSTANTIATED[path]
    kind, function = CATALOGUE[path][4]
    assert (data["doc_kind"], data["doc_function"]) == (kind, function)
    assert {"title", "doc_kind", "purpose", "derived_from", "canonical_for"} <= set(data)
    for key, value in notable.items():
        assert data[key] == value, key
    assert ("date" in data) == ("date" in notable)
    assert ("must_not_define" in data) == ("must_not_define" in notable)


@pytest.mark.parametrize("path", WRAPPERS)
def test_the_instantiated_body_has_the_sections_of_the_catalogue(path: str) -> None:
    _, body = instantiated(path)
    _, headings = INSTANTIATED[path]
    assert [section.title for section in parse_text("x.md", body).sections] == headings


@pytest.mark.parametrize("path", sorted(TABLES))
def test_the_table_skeletons_have_the_catalogue_columns(path: str) -> None:
    _, body = instantiated(path)
    section, header = TABLES[path]
    part = body.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    assert header in part.split("\n")


def test_the_adr_body_splits_its_consequences_three_ways() -> None:
    _, body = instantiated("adr/ADR-ID.md")
    consequences = body.split("## Consequences\n", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^### (.+)$", consequences, re.MULTILINE) == [
        "Positive",
        "Negative",
        "Neutral",
    ]


@pytest.mark.parametrize(
    ("path", "identifiers"),
    [
        ("feature/brief.md", ["REQ-", "NS-", "SC-", "CHK-", "EVID-"]),
        ("feature/design.md", ["SOL-", "ALT-1", "ALT-2"]),
        ("feature/implementation-plan.md", ["STEP-", "CHK"]),
    ],
)
def test_the_feature_bodies_carry_their_stable_identifiers(
    path: str, identifiers: list[str]
) -> None:
    _, body = instantiated(path)
    for identifier in identifiers:
        assert identifier in body


@pytest.mark.parametrize("path", WRAPPERS)
def test_placeholders_appear_only_where_bank_create_replaces_them(path: str) -> None:
    data, _ = instantiated(path)
    left = {
        key: value
        for key, value in data.items()
        if key not in {"title", "purpose", "derived_from", "canonical_for"}
        and isinstance(value, str)
        and PLACEHOLDER.match(value.strip())
    }
    assert left in ({}, {"date": "YYYY-MM-DD"})


def test_the_prompt_body_keeps_its_inner_fence_whole() -> None:
    text = shipped("prompt/PROMPT-ID.md")
    _, body = instantiated("prompt/PROMPT-ID.md")
    assert "````markdown\n" in text
    assert re.search(r"^```prompt\n.+?\n```$", body, re.MULTILINE | re.DOTALL)
    assert body.rstrip().endswith("*")  # the Change Log guidance, after the inner fence
    # the upstream reading, closing at the first ``` line, would have cut everything after it
    cut = text.split("````markdown\n", 1)[1].split("\n```\n", 1)[0]
    assert "## Variables" not in cut and "## Variables" in body


@pytest.mark.parametrize("path", [p for p in WRAPPERS if CATALOGUE[p][2].endswith("/README.md")])
def test_bodies_that_become_index_documents_link_nothing(path: str) -> None:
    _, body = instantiated(path)
    assert LINK.findall(body) == []


@pytest.mark.parametrize("path", WRAPPERS)
def test_no_instantiated_body_claims_a_definition_in_a_path(path: str) -> None:
    data, body = instantiated(path)
    assert CLAIM.findall(body) == []
    assert CLAIM.findall(yaml.safe_dump(data)) == []


# --------------------------------------------------------------------------------------------
# 05 §7.1: every template validates cleanly once materialised, and so does what it instantiates
# --------------------------------------------------------------------------------------------


def write_bank(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def created_like_bank_create(path: str, target: str) -> str:
    """The document bank_create would write from a template (03 §4.6, §4.3 step 7), with the
    template's intended doc_function passed as `extra` and a real source and key."""
    base, body = instantiated(path)
    title = "Sample " + posixpath.basename(path).removesuffix(".md").replace("-", " ").title()
    mapping: dict[str, Any] = {
        "title": title,
        "doc_kind": base["doc_kind"],
        "doc_function": "canonical",
        "purpose": f"Read this when you need the sample {title.lower()}.",
        "derived_from": [posixpath.relpath("dna/governance.md", posixpath.dirname(target))],
        "canonical_for": [f"sample_{CATALOGUE[path][3]}"],
        "status": "draft",
    }
    for key, value in base.items():
        if key in mapping or key in TEMPLATE_ONLY or key in ("derived_from", "canonical_for"):
            continue
        if isinstance(value, str) and PLACEHOLDER.match(value.strip()):
            assert key == "date"
            mapping[key] = dt.date.fromisoformat(TODAY)
        else:
            mapping[key] = value
    mapping["doc_function"] = base["doc_function"]
    lines = body.split("\n")
    lines[0] = f"# {title}"
    head = yaml.safe_dump(mapping, sort_keys=False, allow_unicode=True, width=10_000)
    return f"---\n{head}---\n" + "\n".join(lines).rstrip() + "\n"


@pytest.mark.parametrize("path", WRAPPERS)
def test_an_instantiated_document_adds_no_finding_but_its_registration(
    tmp_path: Path, path: str
) -> None:
    root = tmp_path / "bank"
    write_bank(root, seed_files("x", TODAY))
    target = concrete(CATALOGUE[path][2])
    write_bank(root, {target: created_like_bank_create(path, target)})
    snapshot = Bank(str(root)).refresh()
    assert target in snapshot.docs
    left = [f for f in findings(snapshot) if (f.rule, f.path) != ("unregistered-doc", target)]
    assert left == []


def test_the_materialised_templates_are_never_routable_answers(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    write_bank(root, {**seed_files("x", TODAY), **shipped_templates()})
    snapshot = Bank(str(root)).refresh()
    functions = {snapshot.docs[f"{TEMPLATES_DIR}/{p}"].doc_function for p in WRAPPERS}
    assert functions == {"template"}
    assert {snapshot.docs[f"{TEMPLATES_DIR}/{p}"].doc_function for p in INDEXES} == {"index"}


# --------------------------------------------------------------------------------------------
# 05 §7.4: the two indexes
# --------------------------------------------------------------------------------------------


def test_the_templates_index_derives_from_and_links_every_other_file() -> None:
    text = shipped("README.md")
    data = frontmatter(text)
    others = [p for p in TEMPLATE_PATHS if p != "README.md"]
    assert (data["title"], data["doc_kind"], data["doc_function"], data["status"]) == (
        "Templates Index",
        "governance",
        "index",
        "active",
    )
    assert sorted(data["derived_from"]) == sorted([*others, "../../dna/governance.md"])
    doc = parse_text(f"{TEMPLATES_DIR}/README.md", text)
    linked = {link.to for link in doc.links}
    assert {f"{TEMPLATES_DIR}/{p}" for p in others} <= linked
    assert [section.title for section in doc.sections] == [
        "ADR",
        "Epic",
        "Feature",
        "Feature Support",
        "PRD",
        "Process",
        "Prompt",
        "Use Case",
    ]
    bullets = [line for line in text.split("\n") if line.startswith("- [")]
    assert len(bullets) == 23 and all(" — " in line for line in bullets)


def test_the_epic_index_links_the_five_epic_templates() -> None:
    text = shipped("epic/README.md")
    data = frontmatter(text)
    assert (data["title"], data["doc_kind"], data["doc_function"], data["status"]) == (
        "Epic Templates Index",
        "epic",
        "index",
        "active",
    )
    assert data["derived_from"] == ["../../epic-flow.md"]
    doc = parse_text(f"{TEMPLATES_DIR}/epic/README.md", text)
    assert [link.raw for link in doc.links] == [
        "charter.md",
        "roadmap.md",
        "decision-log.md",
        "subissues.md",
        "risks.md",
    ]


# --------------------------------------------------------------------------------------------
# The whole catalogue, for review
# --------------------------------------------------------------------------------------------


def test_catalogue_summary(snapshot: Any) -> None:
    summary: dict[str, Any] = {}
    for path in TEMPLATE_PATHS:
        text = shipped(path)
        entry: dict[str, Any] = {"wrapper": frontmatter(text)}
        if path in CATALOGUE:
            data, body = instantiated(path)
            entry["instantiates"] = data
            entry["headings"] = re.findall(r"^#{1,3} .+$", body, re.MULTILINE)
        summary[path] = entry
    assert summary == snapshot
