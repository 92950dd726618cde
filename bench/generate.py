"""Generate a synthetic memory bank shaped like the measured real banks (spec 07 §6.1).

    python -m bench.generate --size 368 --seed 20260914 --out /tmp/bank368
    python -m bench.generate --size 2000 --out /tmp/bank2000 --materialized --git 500

What "size" counts: the number of `.md` documents in the bank, everything included (the
governance set, every section index, the root index, the feature package READMEs, the inbox
notes and the root-level files). A generated bank holds exactly `size` documents;
`--materialized` then *adds* 23 more (the 24 template files under `flows/templates/`, whose
`README.md` replaces the templates pointer), so a materialised bank has `size + 23`.

Layer mix, computed from `size` and rounded: knowledge 18%, decision 8%, flow 2% (at least the
fixed flow documents plus two), inbox 1%, other 1%, the 8 `dna/` documents, and delivery the
rest (about 70% at every supported size). The frontmatter ratios of §6.1 are drawn per generated
content document; the governance set and the section indexes are written in their fixed
formats (`05-starter.md` §4, §6).

Determinism: one `random.Random(seed)` drives every choice, in a fixed order; dates come from
fixed constants; file mtimes are `EPOCH + index` seconds where `index` is the file's position in
the sorted list of written paths; directory mtimes are `EPOCH`. Two runs with the same arguments
give identical trees, byte for byte and mtime for mtime (with `--git`, the commit ids are
identical too; only `.git/index` carries inode and ctime values from the file system).

With `--git N` the output directory is also the repository root: the anchored code files live
under `src/` beside the documents (the walk ignores everything that is not `.md`), and `anchors:`
are repository-relative paths such as `src/core/module_07.py`.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib
import json
import os
import posixpath
import re
import shutil
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from random import Random

from dulwich.index import index_entry_from_stat
from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree
from dulwich.refs import Ref
from dulwich.repo import Repo

from mbank import catalogue, contract
from mbank.catalogue import SECTION_PLACEHOLDER, KnownSection

GENERATOR_VERSION = 1
DEFAULT_SEED = 20260914
STANDARD_SIZES = (368, 2000, 10000)
MIN_SIZE = 100
MARKER = ".bench-bank.json"

EPOCH = int(datetime(2026, 9, 14, tzinfo=UTC).timestamp())
HISTORY_START = int(datetime(2025, 9, 14, tzinfo=UTC).timestamp())
DATE_FIRST = date(2025, 1, 6)
DATE_SPAN_DAYS = 610  # dates fall between 2025-01-06 and 2026-09-08

REPO_ROOT = Path(__file__).resolve().parent.parent

# --------------------------------------------------------------------------------------------
# The starter's declared values (05 §3.2) and sections (05 §5)
# --------------------------------------------------------------------------------------------

DOC_KINDS = (
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
DOC_FUNCTIONS = (
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
STATUSES = ("draft", "active", "archived")
DELIVERY_STATUSES = ("planned", "in_progress", "done", "cancelled")
DECISION_STATUSES = ("proposed", "accepted", "superseded", "rejected")
INVENTED_VALUES = ("convention", "runbook", "guide", "plan", "solution")

LAYER_TABLE = (
    ("dna", "dna", "1.0"),
    ("product", "knowledge", "1.5"),
    ("domain", "knowledge", "1.5"),
    ("engineering", "knowledge", "1.5"),
    ("ops", "knowledge", "1.5"),
    ("adr", "decision", "1.2"),
    ("use-cases", "decision", "1.2"),
    ("prd", "decision", "1.2"),
    ("features", "delivery", "0.6"),
    ("epics", "delivery", "0.6"),
    ("flows", "flow", "1.0"),
    ("processes", "flow", "1.0"),
    ("prompts", "flow", "1.0"),
    ("_inbox", "inbox", "0.2"),
)


def layer_of(path: str) -> str:
    """The built-in layer of a bank path (01 §8.1), used to report the layer mix."""
    return contract.layer_of(path, contract.EMPTY_LAYERS)


# 05 §5, in root-index order (mbank's own table), plus `tasks` (a built-in delivery directory
# the starter has no section for; the generator gives it an index so that its documents can
# be registered).
SECTIONS = (
    *catalogue.SECTIONS,
    KnownSection(
        "tasks",
        "feature",
        "Task Registry",
        "Registry of small delivery tasks that did not need a feature package.",
        "Read when you need the scope or state of a small change.",
        False,
    ),
)
# The files `init` copies from the package's starter/ (05 §1), and the 24 template files of
# 05 §7.2 as addressed inside flows/templates/.
STARTER_FILES = catalogue.STARTER_PATHS
TEMPLATE_FILES = catalogue.TEMPLATE_PATHS
PROJECT_NAME = "ledgerline"

# --------------------------------------------------------------------------------------------
# YAML frontmatter, written by hand so that every byte is under control
# --------------------------------------------------------------------------------------------


class Raw(str):
    """A scalar written exactly as given, never quoted (dates, the deliberately bad purposes)."""


@dataclass(frozen=True)
class FlowList:
    """A list written in flow style: `[a, b]`."""

    items: tuple[str, ...]


@dataclass(frozen=True)
class FitEdge:
    """A `derived_from` item in `{path, fit}` form."""

    path: str
    fit: str


_NEEDS_QUOTES = re.compile(r"""^[-?:,\[\]{}#&*!|>'"%@`\s]|: |\s#|:$|\s$|[\x00-\x1f]""")
_IMPLICIT_SCALAR = re.compile(
    r"^(~|null|true|false|yes|no|on|off|y|n|[-+]?[0-9][0-9_.:eE+-]*|\.\d+|\d{4}-\d{2}-\d{2}.*)$",
    re.IGNORECASE,
)

FrontValue = str | Raw | FlowList | list[str] | list[str | FitEdge]


def yaml_scalar(value: str) -> str:
    """A string as a YAML scalar: plain when that is safe, JSON-style double quotes otherwise."""
    if isinstance(value, Raw):
        return str(value)
    if not value or _NEEDS_QUOTES.search(value) or _IMPLICIT_SCALAR.match(value):
        return json.dumps(value, ensure_ascii=False)
    return value


def render_frontmatter(fields: Sequence[tuple[str, FrontValue]]) -> str:
    """Frontmatter text between `---` lines, keys in the given order."""
    lines = ["---"]
    for key, value in fields:
        if isinstance(value, FlowList):
            lines.append(f"{key}: [{', '.join(yaml_scalar(v) for v in value.items)}]")
        elif isinstance(value, list):
            lines.append(f"{key}:")
            for item in value:
                if isinstance(item, FitEdge):
                    lines.append(f"  - path: {yaml_scalar(item.path)}")
                    lines.append(f"    fit: {yaml_scalar(item.fit)}")
                else:
                    lines.append(f"  - {yaml_scalar(item)}")
        else:
            lines.append(f"{key}: {yaml_scalar(value)}")
    lines.append("---")
    return "\n".join(lines) + "\n"


def document(fields: Sequence[tuple[str, FrontValue]], body: str) -> str:
    """A whole document: frontmatter, then the body, ending in exactly one newline."""
    return render_frontmatter(fields) + body.rstrip("\n") + "\n"


def read_frontmatter(text: str) -> dict[str, object]:
    """The frontmatter mapping of a governance file (used for titles, purposes and keys)."""
    import yaml

    if not text.startswith("---\n"):
        return {}
    end = text.find("\n---", 4)
    if end < 0:
        return {}
    try:
        data = yaml.safe_load(text[4:end])
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


# --------------------------------------------------------------------------------------------
# Governance: the package's starter/ when it is complete, else the built-in fallback
# --------------------------------------------------------------------------------------------


def _package_data_dir(package: str, fallback: str) -> Path:
    """Where an installed package-data directory lives (the checkout's copy if not installed)."""
    try:
        module = importlib.import_module(package)
    except ImportError:
        return REPO_ROOT / fallback
    return Path(str(module.__file__)).resolve().parent


def _starter_dir() -> Path:
    return _package_data_dir("mbank.starter", "starter")


def _templates_dir() -> Path:
    return _package_data_dir("mbank.templates", "templates")


def fingerprint() -> str:
    """A digest of everything the output depends on besides the arguments: this generator's
    source and the starter and template files it would copy (so a cached bank goes stale)."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    for module in ("catalogue.py", "contract.py"):
        source = REPO_ROOT / "mbank" / module
        digest.update(source.read_bytes() if source.is_file() else b"-")
    for root, names in ((_starter_dir(), STARTER_FILES), (_templates_dir(), TEMPLATE_FILES)):
        for name in names:
            path = root / name
            digest.update(name.encode() + (path.read_bytes() if path.is_file() else b"-"))
    return digest.hexdigest()[:16]


def governance_files() -> tuple[dict[str, str], str]:
    """The 14 starter files and where they came from (`starter` or `builtin`)."""
    root = _starter_dir()
    if all((root / p).is_file() for p in STARTER_FILES):
        return {p: (root / p).read_text(encoding="utf-8") for p in STARTER_FILES}, "starter"
    return builtin_governance(), "builtin"


def template_files() -> tuple[dict[str, str], str]:
    """The 24 template files (relative to flows/templates/) and their source."""
    root = _templates_dir()
    if all((root / p).is_file() for p in TEMPLATE_FILES):
        return {p: (root / p).read_text(encoding="utf-8") for p in TEMPLATE_FILES}, "package"
    return builtin_templates(), "builtin"


def _governed(
    title: str,
    kind: str,
    function: str,
    purpose: str,
    derived: list[str] | None,
    canonical: list[str] | None,
    status: str,
    body: str,
) -> str:
    fields: list[tuple[str, FrontValue]] = [
        ("title", title),
        ("doc_kind", kind),
        ("doc_function", function),
        ("purpose", purpose),
    ]
    if derived:
        fields.append(("derived_from", list(derived)))
    if canonical:
        fields.append(("canonical_for", list(canonical)))
    fields += [("status", status), ("audience", "humans_and_agents")]
    return document(fields, body)


def _ticked(values: Iterable[str]) -> str:
    return ", ".join(f"`{v}`" for v in values)


FEATURE_FLOW_KEYS = (
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
)
EPIC_FLOW_KEYS = (
    "epic_directory_structure",
    "epic_lifecycle",
    "epic_charter_rules",
    "epic_roadmap_rules",
    "epic_decision_log_rules",
    "epic_subissue_registry_rules",
    "epic_risk_register_rules",
    "epic_closure_rules",
)


def builtin_governance() -> dict[str, str]:
    """A compact governance set declaring the starter's contract exactly as 05 §3 specifies.

    Used only when the package's `starter/` does not yet hold the dna files. It carries the
    five enumerations, the root sentence, the must-define and cycle sentences and the Directory
    Layers table word for word; the surrounding prose is short.
    """
    seeded = "Seeded as a draft: complete it before anything else."
    files: dict[str, str] = {}
    files["dna/README.md"] = _governed(
        "DNA Index",
        "governance",
        "index",
        "Read this first to see which governance documents form the contract of this bank.",
        ["principles.md", "glossary.md", "changelog.md"],
        None,
        "active",
        "# DNA Index\n\n"
        "This directory is the constitution of the bank: the server reads what these documents "
        "declare and holds every other document to it.\n\n"
        "## Documents\n\n"
        "- [Memory Bank Principles](principles.md) — the ten principles behind every rule.\n"
        "- [Governance](governance.md) — ownership, language, sources, values and layers.\n"
        "- [Frontmatter Schema](frontmatter.md) — the fields a document carries.\n"
        "- [Document Lifecycle](lifecycle.md) — keeping documents in step with their sources.\n"
        "- [Cross-References](cross-references.md) — how documents and code point at each "
        "other.\n"
        "- [Memory Bank Glossary](glossary.md) — the vocabulary of the bank itself.\n"
        "- [Memory Bank Changelog](changelog.md) — how these rules changed over time.\n",
    )
    principles = (
        ("Single Source of Truth", "Each fact has one owning document; others link to it."),
        ("Atomicity", "A document covers one subject, so it can change without side effects."),
        ("Compactness", "Say what a reader needs and stop; length is a cost paid on every read."),
        ("Progressive Disclosure", "Indexes summarise, documents detail, links lead deeper."),
        ("Why, What, How", "Documents say why and what; the code says how."),
        ("Code and Documentation", "Behaviour lives in code, intent and constraints here."),
        ("Index First", "Every document is reachable from an index; an orphan is a defect."),
        ("Annotated Links", "A link says why a reader would follow it."),
        ("One Decision, One ADR", "Each decision gets its own record with the options it beat."),
        (
            "Trusted Contributors, Proportionate Safeguards",
            "Checks are sized to the harm a mistake could do, not to suspicion.",
        ),
    )
    files["dna/principles.md"] = _governed(
        "Memory Bank Principles",
        "governance",
        "canonical",
        "Read this when you need the principles every other rule of the bank follows from.",
        None,
        ["memory_bank_principles"],
        "active",
        "# Memory Bank Principles\n\n"
        "Ten principles; each governance rule can be traced back to one of them.\n\n"
        + "\n".join(f"## {name}\n\n{text}\n" for name, text in principles),
    )
    layer_rows = "\n".join(f"| `{d}` | `{layer}` | `{w}` |" for d, layer, w in LAYER_TABLE)
    files["dna/governance.md"] = _governed(
        "Governance",
        "governance",
        "canonical",
        "Read this when you need who owns a fact, how documents depend on each other, which "
        "values are allowed and which layer a directory belongs to.",
        ["principles.md"],
        [
            "ssot_rules",
            "document_language_rule",
            "source_dependency_tree",
            "doc_kind_values",
            "doc_function_values",
            "directory_layers",
        ],
        "active",
        "# Governance\n\n"
        "The rules that decide which text is authoritative and how the bank is laid out.\n\n"
        "## Single Source of Truth Rules\n\n"
        "- Only `active` documents are authoritative; drafts and archived texts inform only.\n"
        "- When an upstream and a downstream document disagree, the upstream one wins and the "
        "downstream one is corrected.\n"
        "- Publication `status` is separate from `delivery_status` and `decision_status`.\n\n"
        "## Document Language\n\n"
        "Every document of this bank is written in English, whatever language a question is "
        "asked in. Identifiers and quoted source text are exempt.\n\n"
        "## Source Dependency Tree\n\n"
        "The root document is `principles.md`. "
        "Every `active` non-root document must define `derived_from`. "
        "Cyclic dependencies are forbidden.\n\n"
        "Each `derived_from` item is a path or a mapping with `path` and `fit`; paths are "
        "relative to the document that lists them.\n\n"
        "## Governance-specific Frontmatter Fields\n\n"
        "| Field | Values | Purpose |\n"
        "|---|---|---|\n"
        f"| `doc_kind` | {_ticked(DOC_KINDS)} | Which part of the project a document covers. |\n"
        f"| `doc_function` | {_ticked(DOC_FUNCTIONS)} | The job a document does for readers. |\n\n"
        "## Directory Layers\n\n"
        "| Directory | Layer | Weight |\n"
        "|-|-|-|\n"
        f"{layer_rows}\n\n"
        "The permitted layers are `dna`, `knowledge`, `decision`, `delivery`, `flow`, `inbox` "
        "and `other`; a directory not in the table keeps its built-in layer.\n",
    )
    files["dna/frontmatter.md"] = _governed(
        "Frontmatter Schema",
        "governance",
        "canonical",
        "Read this when you need which frontmatter fields a document carries and what values "
        "they take.",
        ["governance.md"],
        ["frontmatter_schema"],
        "active",
        "# Frontmatter Schema\n\n"
        "Every governed document opens with a YAML block holding these fields.\n\n"
        "## Required Fields\n\n"
        "| Field | Values | Purpose |\n"
        "|---|---|---|\n"
        "| `title` | string | The name shown in indexes and results. |\n"
        "| `doc_kind` | string | One kind from the governance table. |\n"
        "| `doc_function` | string | One function from the governance table. |\n"
        "| `purpose` | string | One sentence saying when to read the document. |\n"
        f"| `status` | {_ticked(STATUSES)} | Whether the text can be relied on. |\n\n"
        "## Optional Fields\n\n"
        "| Field | Values | Purpose |\n"
        "|---|---|---|\n"
        "| `derived_from` | list | Upstream sources, as paths or path and fit pairs. |\n"
        "| `canonical_for` | list | Fact keys this document owns. |\n"
        "| `must_not_define` | list | Fact keys this document may not define. |\n"
        f"| `delivery_status` | {_ticked(DELIVERY_STATUSES)} | Where delivery work stands. |\n"
        f"| `decision_status` | {_ticked(DECISION_STATUSES)} | Where a decision stands. |\n"
        "| `anchors` | list | Repository-relative code paths, read by the drift check. |\n"
        "| `audience` | string | Who the document is written for. |\n"
        "| `date` | date | When the document was written or decided. |\n\n"
        "## Additional Fields\n\n"
        "Other fields may appear; the server keeps them and otherwise ignores them.\n\n"
        "## Examples\n\n"
        "```yaml\n"
        "title: Pricing Rules\n"
        "doc_kind: domain\n"
        "doc_function: canonical\n"
        "purpose: Read this when you need how prices are computed.\n"
        "derived_from:\n"
        "  - model.md\n"
        "  - path: ../product/context.md\n"
        "    fit: Only the constraints section.\n"
        "canonical_for:\n"
        "  - pricing_rules\n"
        "status: active\n"
        "```\n\n"
        "```yaml\n"
        "title: Invoice Export\n"
        "doc_kind: feature\n"
        "doc_function: canonical\n"
        "purpose: Read this when you need what the invoice export must do.\n"
        "derived_from:\n"
        "  - ../../domain/rules.md\n"
        "status: active\n"
        "delivery_status: in_progress\n"
        "anchors:\n"
        "  - src/export/invoices.py\n"
        "```\n",
    )
    files["dna/lifecycle.md"] = _governed(
        "Document Lifecycle",
        "governance",
        "canonical",
        "Read this when you change a document and need to keep its dependents and its index "
        "in step.",
        ["governance.md"],
        ["document_maintenance_rules", "document_sync_checklist"],
        "active",
        "# Document Lifecycle\n\n"
        "A document moves from draft to active to archived; its owner moves it.\n\n"
        "## Maintenance Rules\n\n"
        "Change the upstream document first, then every document that derives from it. Keep "
        "the section index true to what it lists. A conflict between documents is a defect; "
        "report it to a person rather than resolving it quietly.\n\n"
        "## Sync Checklist\n\n"
        "1. The upstream document was changed first.\n"
        "2. Every downstream document was re-read and brought into line.\n"
        "3. The index entry still describes the document truthfully.\n",
    )
    files["dna/cross-references.md"] = _governed(
        "Cross-References",
        "governance",
        "canonical",
        "Read this when you need how documents point at code and code points back.",
        ["governance.md"],
        ["code_documentation_cross_references"],
        "active",
        "# Cross-References\n\n"
        "## From Documents to Code\n\n"
        "A document lists the code it describes under `anchors`, as repository-relative paths "
        "written by hand. The drift check compares their commit dates with the document's.\n\n"
        "## From Code to Documents\n\n"
        "Code points back with a short comment naming the bank path of its document.\n",
    )
    files["dna/glossary.md"] = _governed(
        "Memory Bank Glossary",
        "governance",
        "reference",
        "Read this when you meet a term of the bank itself, such as owner, layer or anchor.",
        ["principles.md"],
        ["memory_bank_governance_terms"],
        "active",
        "# Memory Bank Glossary\n\n"
        "## Terms\n\n"
        "- Canonical owner: the one document that owns a fact key.\n"
        "- Derived from: an upstream source of a document, optionally with a fit note.\n"
        "- Root document: the document every dependency chain ends at.\n"
        "- Index document: a document that lists others; a section's `README.md` is one.\n"
        "- Layer: the role of a directory, which weighs routing.\n"
        "- Quarantine: the `_inbox/` directory for notes not yet placed.\n"
        "- Anchor: a code path a document describes.\n"
        "- Drift: code that moved on while its document did not.\n\n"
        "Project terms belong in the [domain section](../domain/README.md).\n",
    )
    files["dna/changelog.md"] = _governed(
        "Memory Bank Changelog",
        "governance",
        "canonical",
        "Read this when you need how the rules of this bank changed and how to migrate.",
        ["governance.md"],
        ["memory_bank_version_history", "memory_bank_migration_notes"],
        "active",
        "# Memory Bank Changelog\n\n"
        "## Unreleased\n\n"
        "- The bank was created from the mbank starter set.\n\n"
        "## Migration Notes\n\n"
        "Nothing to migrate yet.\n",
    )
    files["product/context.md"] = _governed(
        "Product Context",
        "product",
        "canonical",
        "Read this when you need the problem the project solves and its constraints. " + seeded,
        ["../dna/governance.md"],
        ["product_problem_statement", "product_constraints"],
        "draft",
        "# Product Context\n\n"
        "## Problem\n\n*Describe the problem in two or three sentences.*\n\n"
        "## Who It Is For\n\n*Name the people who feel the problem.*\n\n"
        "## Constraints\n\n*List the limits any solution must respect.*\n\n"
        "## Non-Goals\n\n*Say what the project will not attempt.*\n",
    )
    files["engineering/testing-policy.md"] = _governed(
        "Testing Policy",
        "engineering",
        "canonical",
        "Read this when you need what must be tested and how a change is verified. " + seeded,
        ["../dna/governance.md"],
        [
            "required_test_coverage",
            "manual_verification_policy",
            "simplify_review_discipline",
            "verification_context_separation",
        ],
        "draft",
        "# Testing Policy\n\n"
        "## Current Coverage\n\n*Summarise what the tests cover today.*\n\n"
        "## What Must Be Tested\n\n*List the behaviour no change may break untested.*\n\n"
        "## What Is Verified Manually\n\n*Name the checks a person runs by hand.*\n\n"
        "## Verification For New Work\n\n*Say what evidence new work must bring.*\n\n"
        "## Simplify Review\n\n"
        "Once a change works, a second pass removes what it does not need: dead code, needless "
        "indirection and speculative options. Only then does the change count as done.\n\n"
        "## Verification Context Separation\n\n"
        "Whoever verifies a change does so from a context that did not write it, and records "
        "evidence rather than belief.\n",
    )
    files["flows/README.md"] = _governed(
        "Flows And Templates Index",
        "governance",
        "index",
        "Read this when you need which flow a piece of work follows and where templates live.",
        [
            "../dna/governance.md",
            "feature-flow.md",
            "epic-flow.md",
            "workflows.md",
            "templates/README.md",
        ],
        None,
        "active",
        "# Flows And Templates Index\n\n"
        "How work moves through the bank, from a small change to an epic.\n\n"
        "## Flows\n\n"
        "- [Feature Flow](feature-flow.md) — how a feature package moves through its gates.\n"
        "- [Epic Flow](epic-flow.md) — how an effort spanning several features is run.\n"
        "- [Workflows](workflows.md) — which flow a task takes and who may act alone.\n\n"
        "## Templates\n\n"
        "- [Document Templates](templates/README.md) — where the templates live.\n",
    )
    feature_sections = (
        ("Package Layout", "A package lives in `features/FT-XXX/` with a README and a brief."),
        ("Stages And Gates", "Draft, Problem Ready, Design Ready, Plan Ready, In Progress, Done."),
        ("Brief", "The brief states requirements `REQ-*` and non-scope `NS-*`, never a design."),
        ("Design And Plan", "A design lists options `SOL-*`; a plan lists steps `STEP-*`."),
        ("Verification", "Checks `CHK-*` prove success criteria `SC-*` with evidence `EVID-*`."),
        (
            "Done Gate",
            "Done needs the Simplify Review described in "
            "[engineering/testing-policy.md](../engineering/testing-policy.md).",
        ),
        ("Registry", "Every package has one row in the features registry."),
        ("Version-1 Packages", "Older single-file packages keep a `feature.md`."),
    )
    files["flows/feature-flow.md"] = _governed(
        "Feature Flow",
        "governance",
        "canonical",
        "Read this when you need how a feature package moves through its gates and stages, from "
        "brief to done.",
        ["../dna/governance.md"],
        list(FEATURE_FLOW_KEYS),
        "active",
        "# Feature Flow\n\n"
        "A feature package is one unit of delivery.\n\n"
        + "\n".join(f"## {name}\n\n{text}\n" for name, text in feature_sections),
    )
    files["flows/epic-flow.md"] = _governed(
        "Epic Flow",
        "governance",
        "canonical",
        "Read this when you need how an epic is chartered, sequenced and closed.",
        ["../dna/governance.md", "feature-flow.md"],
        list(EPIC_FLOW_KEYS),
        "active",
        "# Epic Flow\n\n"
        "## Epic Layout\n\n"
        "An epic lives in `epics/EP-XXX/` with a charter, a roadmap, a decision log, a "
        "sub-issue registry and a risk register.\n\n"
        "## Lifecycle\n\n"
        "An epic is chartered, sequenced into features, tracked and closed.\n\n"
        "## Closure\n\n"
        "An epic closes when its features are done or cancelled and its risks are settled.\n",
    )
    files["flows/workflows.md"] = _governed(
        "Workflows",
        "governance",
        "canonical",
        "Read this when you need which workflow a task takes and what an agent may do alone.",
        ["../dna/governance.md"],
        [
            "task_routing_rules",
            "feature_package_elevation_rules",
            "base_development_cycle",
            "workflow_type_selection",
            "autonomy_gradient",
        ],
        "active",
        "# Workflows\n\n"
        "## Choosing A Workflow\n\n"
        "A direct change, a feature package or an epic, chosen by size and risk.\n\n"
        "## Elevation\n\n"
        "A small change becomes a feature package once it needs a decision.\n\n"
        "## Development Cycle\n\n"
        "Understand, change, verify, simplify, record.\n\n"
        "## Autonomy Gradient\n\n"
        "An agent acts alone on reversible work and asks a person before anything else.\n",
    )
    return files


def templates_pointer() -> str:
    """The generated `flows/templates/README.md` of a bank whose templates are not copied:
    mbank's own (05 §6.3)."""
    return catalogue.templates_pointer()


# (file, wrapper doc_kind, target path, canonical key, instantiated doc_function, sections)
_TEMPLATE_CATALOGUE: tuple[tuple[str, str, str, str, str, tuple[str, ...]], ...] = (
    (
        "adr/ADR-ID.md",
        "adr",
        "adr/ADR-YYYYMMDDTHHMMSSZ-short-decision-name.md",
        "adr_template",
        "canonical",
        ("Context", "Decision Drivers", "Options Considered", "Decision", "Consequences"),
    ),
    (
        "epic/charter.md",
        "epic",
        "epics/EP-XXX/charter.md",
        "epic_charter_template",
        "canonical",
        ("Problem", "Goal", "Scope", "Out Of Scope", "Success Criteria", "Features", "Links"),
    ),
    (
        "epic/roadmap.md",
        "epic",
        "epics/EP-XXX/roadmap.md",
        "epic_roadmap_template",
        "roadmap",
        ("Milestones", "Sequencing", "Dependencies", "Change History"),
    ),
    (
        "epic/decision-log.md",
        "epic",
        "epics/EP-XXX/decision-log.md",
        "epic_decision_log_template",
        "decision_log",
        ("Log", "Open Questions"),
    ),
    (
        "epic/subissues.md",
        "epic",
        "epics/EP-XXX/subissues.md",
        "epic_subissues_template",
        "subissue_registry",
        ("Registry", "Conventions"),
    ),
    (
        "epic/risks.md",
        "epic",
        "epics/EP-XXX/risks.md",
        "epic_risks_template",
        "risk_register",
        ("Register", "Review Cadence"),
    ),
    (
        "feature/README.md",
        "feature",
        "features/FT-XXX/README.md",
        "feature_readme_template",
        "index",
        ("Summary", "Documents", "Status"),
    ),
    (
        "feature/brief.md",
        "feature",
        "features/FT-XXX/brief.md",
        "feature_brief_template",
        "canonical",
        ("What", "Design Requirement Decision", "Plan Requirement Decision", "Verify"),
    ),
    (
        "feature/design.md",
        "feature",
        "features/FT-XXX/design.md",
        "feature_design_template",
        "canonical",
        ("Context", "Options", "Rejected Alternatives", "Chosen Design", "Risks"),
    ),
    (
        "feature/implementation-plan.md",
        "feature",
        "features/FT-XXX/implementation-plan.md",
        "feature_implementation_plan_template",
        "derived",
        ("Steps", "Sequencing", "Verification Mapping", "Rollback"),
    ),
    (
        "feature/short.md",
        "feature",
        "features/FT-XXX/feature.md",
        "feature_short_template",
        "canonical",
        ("Summary", "Requirements", "Verification"),
    ),
    (
        "feature/large.md",
        "feature",
        "features/FT-XXX/feature.md",
        "feature_large_template",
        "canonical",
        ("Summary", "Context", "Requirements", "Design", "Plan", "Verification", "Risks"),
    ),
    (
        "feature/support/runtime-surfaces.md",
        "feature-support",
        "features/FT-XXX/runtime-surfaces.md",
        "feature_runtime_surfaces_template",
        "reference",
        ("Surfaces", "Configuration", "Observability"),
    ),
    (
        "feature/support/ui-reference.md",
        "feature-support",
        "features/FT-XXX/ui-reference/README.md",
        "feature_ui_reference_template",
        "reference",
        ("Screens", "States", "Assets"),
    ),
    (
        "feature/support/use-cases.md",
        "feature-support",
        "features/FT-XXX/use-cases/README.md",
        "feature_use_cases_template",
        "reference",
        ("Use Cases", "Coverage"),
    ),
    (
        "prd/PRD-ID.md",
        "prd",
        "prd/PRD-<id>-short-name.md",
        "prd_template",
        "canonical",
        ("Problem", "Users", "Goals And Metrics", "Requirements", "Non-Goals"),
    ),
    (
        "process/README.md",
        "process",
        "processes/README.md",
        "process_readme_template",
        "index",
        ("Processes",),
    ),
    (
        "process/process-card.md",
        "process",
        "processes/PROCESS-<id>-process-card.md",
        "process_template_card",
        "canonical",
        ("Purpose", "Trigger", "Steps", "Roles", "Outputs", "Exceptions"),
    ),
    (
        "process/session-handoff.md",
        "process",
        "processes/PROCESS-<id>-session-handoff.md",
        "process_session_handoff_template",
        "canonical",
        ("State At Handoff", "In Flight", "Next Steps", "Open Questions", "Pointers"),
    ),
    (
        "process/lifecycle-protocol.md",
        "process",
        "processes/PROCESS-<id>-lifecycle-protocol.md",
        "process_lifecycle_protocol_template",
        "canonical",
        ("Stages", "Entry And Exit Criteria", "Roles", "Escalation"),
    ),
    (
        "prompt/PROMPT-ID.md",
        "prompt",
        "prompts/PROMPT-<id>-short-name.md",
        "prompt_template",
        "canonical",
        ("Purpose", "Prompt", "Variables", "Model Notes", "Change Log"),
    ),
    (
        "use-case/UC-XXX.md",
        "use_case",
        "use-cases/UC-XXX-short-name.md",
        "use_case_template",
        "canonical",
        ("Actor", "Preconditions", "Main Flow", "Alternative Flows", "Postconditions"),
    ),
)


def _template_derived(path: str) -> list[str]:
    family = path.split("/", 1)[0]
    if path.startswith("feature/support/"):
        return ["../../../feature-flow.md"]
    return {
        "adr": ["../../../dna/governance.md"],
        "prd": ["../../../dna/governance.md"],
        "prompt": ["../../../dna/governance.md"],
        "epic": ["../../epic-flow.md"],
        "feature": ["../../feature-flow.md"],
        "process": ["../../workflows.md"],
        "use-case": ["../../feature-flow.md", "../../../dna/governance.md"],
    }[family]


def builtin_templates() -> dict[str, str]:
    """Simple wrapper-format templates (05 §7.1), used while the package's templates/ is empty."""
    files: dict[str, str] = {}
    for path, kind, target, key, function, sections in _TEMPLATE_CATALOGUE:
        name = path.rsplit("/", 1)[1].removesuffix(".md").replace("-", " ").title()
        inner = render_frontmatter(
            [
                ("title", "<title>"),
                ("doc_kind", kind),
                ("doc_function", function),
                ("purpose", "<purpose>"),
                ("derived_from", ["<upstream document>"]),
                ("status", "draft"),
                ("audience", "humans_and_agents"),
            ]
        )
        inner_yaml = inner.removeprefix("---\n").removesuffix("---\n")
        body = "# <title>\n\n" + "\n".join(f"## {s}\n\n_Write this part._\n" for s in sections)
        files[path] = _template_wrapper(
            f"{name} Template",
            kind,
            f"Read this when you create a {kind} document shaped as {target}.",
            kind,
            target,
            _template_derived(path),
            key,
            f"# {name} Template\n\n"
            f"`bank_create` instantiates this template for `{target}`.\n\n"
            f"## Instantiated Frontmatter\n\n```yaml\n{inner_yaml}```\n\n"
            f"## Instantiated Body\n\n```markdown\n{body}```\n",
        )
    epic = [p for p in TEMPLATE_FILES if p.startswith("epic/") and p != "epic/README.md"]
    files["epic/README.md"] = _governed(
        "Epic Templates Index",
        "epic",
        "index",
        "Read this when you need the templates of an epic's five documents.",
        ["../../epic-flow.md"],
        None,
        "active",
        "# Epic Templates Index\n\n## Templates\n\n"
        + "".join(f"- [{p.split('/')[1]}]({p.split('/')[1]}) — one epic document.\n" for p in epic),
    )
    others = [p for p in TEMPLATE_FILES if p != "README.md"]
    files["README.md"] = _governed(
        "Templates Index",
        "governance",
        "index",
        "Read this when you need the full set of document templates owned by this bank.",
        [*others, "../../dna/governance.md"],
        None,
        "active",
        "# Templates Index\n\nEvery template of the bank, by family.\n\n## Templates\n\n"
        + "".join(f"- [{p}]({p}) — a template file.\n" for p in others),
    )
    return {p: files[p] for p in TEMPLATE_FILES}


def _template_wrapper(
    title: str,
    kind: str,
    purpose: str,
    template_for: str,
    target: str,
    derived: list[str],
    key: str,
    body: str,
) -> str:
    fields: list[tuple[str, FrontValue]] = [
        ("title", title),
        ("doc_kind", kind),
        ("doc_function", "template"),
        ("purpose", purpose),
        ("template_for", template_for),
        ("template_target_path", target),
        ("derived_from", derived),
        ("canonical_for", [key]),
        ("status", "active"),
        ("audience", "humans_and_agents"),
    ]
    return document(fields, body)


# --------------------------------------------------------------------------------------------
# Prose: a seeded vocabulary of about 3,000 words with a Zipf-like frequency
# --------------------------------------------------------------------------------------------

_COMMON_WORDS = """
account accounting action adapter address agent aggregate alert allocation amount analysis
answer api approval archive artifact assignment attempt audit author backfill backlog backoff
balance batch behaviour benchmark billing block boundary branch budget buffer build bundle
cache calendar callback campaign capacity card catalog change channel charge check checkout
checksum claim client clock cluster code cohort column command commit component config
connection consent constraint consumer contract control counter coverage credit cursor
customer cycle daemon dashboard data database deadline debit decision default delay delivery
dependency deploy deployment design detail device diff digest discount dispatch document
domain draft driver duration edge editor email encoding endpoint engine entity entry
environment error estimate event evidence exception export extension failure feature feed
field file filter flag flow folder format fragment frame gateway gate graph grid group guard
handler hash header health history hook host identity image import incident index input
instance integration interface inventory invoice issue item job journal key label latency
layer layout lease ledger level library limit line link listener load lock log lookup loop
manifest mapping margin marker match member memory merge message metadata method metric
migration mode model module monitor mutation namespace network node note notice notification
object offer offset operator option order origin outbox output owner package page pagination
parameter parser partner patch path payload payment payout peer permission pipeline plan
platform plugin policy pool port position preview price pricing priority probe process
producer product profile project promotion property protocol provider proxy publisher query
queue quota range rate reader receipt record recovery reference refund region registry
release replica report request requirement reservation resolver resource response result
retry review revision role rollback rollout route routine rule runner runtime sample schedule
schema scope score script search secret section segment selector sequence server service
session setting shard shipment signal signature snapshot source span spec stage state status
step storage store stream subscription summary supplier surface switch sync table tag target
task tax team template tenant term test threshold ticket tier timeline timeout token topic
trace tracker transaction transfer transform trigger type unit update upload usage user
validation value vendor version view volume voucher wallet warehouse webhook window worker
workflow workspace write zone accept adjust allow apply assign build cancel capture collect
compare compute confirm create decide defer define delete derive detect emit enable enforce
ensure estimate expire export fetch filter forward group handle hold import include index
inspect keep limit list load lock map mark measure merge move notify observe open order
parse pause plan post prepare preserve publish push queue read receive record reduce refresh
reject release remove render replace replay report request reserve resolve restore resume
retry return reuse review revoke rotate route run save scan schedule select send serve settle
share ship skip sort split start stop store submit sync tag throttle track trigger trim
update upgrade upload validate verify wait warn watch write active atomic async automatic
available basic bounded broken cached central clean clear cold common complete concurrent
consistent current daily default deferred direct dirty durable dynamic early empty exact
explicit external fast final first fixed flat frozen full global hard healthy hidden hot
idle immutable implicit incremental initial internal invalid large last late lazy legacy
light linear local logical long lost manual missing monthly multiple native nested new
nightly nominal offline online open optional ordered orphan partial pending periodic
persistent plain primary private public raw ready recent regional remote required reserved
safe scheduled secondary secure shared short silent single slow soft stable stale static
strict strong sync temporary tight total transient trusted unique unknown unsafe upstream
urgent valid verbose visible warm weekly weak whole
"""

_SYLLABLE_TEXT = (
    "ka ro mi ta lun ve sor dal pen tri gor fal nes bri col mur tas vin del sap rok lem "
    "zan hul pir dos fen gal kor mas nil pol rus sel tor var wen yal zor bel cam dun erl "
    "fis gam hed ist jor kel lir mon nur oph pra qua ren sil tun ulf vex wil xan yor zet"
)
_SYLLABLES = tuple(_SYLLABLE_TEXT.split())


def build_vocabulary(rng: Random) -> tuple[list[str], list[str]]:
    """About 3,000 words: the common technical words first (shuffled), then pseudo-words."""
    common: list[str] = []
    seen: set[str] = set()
    for word in _COMMON_WORDS.split():
        if word not in seen:
            seen.add(word)
            common.append(word)
    rng.shuffle(common)
    vocab = list(common)
    while len(vocab) < 3000:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))
        if word not in seen:
            seen.add(word)
            vocab.append(word)
    return vocab, common


RUSSIAN_SENTENCES = (
    "Пороги фильтрации задаются в одном месте и не дублируются в пакетах.",
    "Если очередь переполнена, запрос откладывается и повторяется позже.",
    "Каждое решение записывается отдельно вместе с отвергнутыми вариантами.",
    "Черновик становится действующим только после проверки владельцем.",
    "Отчёт о сверке строится ночью и хранится тридцать дней.",
    "Повторная отправка платежа не должна создавать второй документ.",
    "Журнал изменений читается сверху вниз, от новых записей к старым.",
    "Для восстановления достаточно последнего снимка и журнала после него.",
)

GENERIC_HEADINGS = (
    "Overview",
    "Context",
    "Scope",
    "Constraints",
    "Interfaces",
    "Data Model",
    "Failure Modes",
    "Observability",
    "Rollout",
    "Dependencies",
    "Examples",
    "Edge Cases",
    "Ownership",
    "Verification",
    "History",
    "Performance Notes",
    "Security Notes",
    "Migration",
    "Limits",
    "Configuration",
    "Error Handling",
    "Open Questions",
    "Next Steps",
    "Terminology",
)

FAMILY_HEADINGS: dict[str, tuple[str, ...]] = {
    "adr": (
        "Context",
        "Decision Drivers",
        "Options Considered",
        "Decision",
        "Consequences",
        "Risks And Mitigation",
        "Follow-up",
        "Related Links",
    ),
    "use-case": (
        "Actor",
        "Preconditions",
        "Main Flow",
        "Alternative Flows",
        "Postconditions",
        "Business Rules",
        "Related Links",
    ),
    "prd": (
        "Problem",
        "Users",
        "Goals And Metrics",
        "Requirements",
        "Non-Goals",
        "Open Questions",
        "Related Links",
    ),
    "feature-brief": ("What", "Design Requirement Decision", "Plan Requirement Decision", "Verify"),
    "feature-design": (
        "Context",
        "Options",
        "Rejected Alternatives",
        "Chosen Design",
        "Contracts And Interfaces",
        "Risks",
    ),
    "feature-plan": ("Steps", "Sequencing", "Verification Mapping", "Rollback"),
    "epic-charter": (
        "Problem",
        "Goal",
        "Scope",
        "Out Of Scope",
        "Success Criteria",
        "Features",
        "Links",
    ),
    "epic-roadmap": ("Milestones", "Sequencing", "Dependencies", "Change History"),
    "epic-decision-log": ("Log", "Open Questions"),
    "epic-subissues": ("Registry", "Conventions"),
    "epic-risks": ("Register", "Review Cadence"),
    "process": ("Purpose", "Trigger", "Steps", "Roles", "Outputs", "Exceptions"),
    "prompt": ("Purpose", "Prompt", "Variables", "Model Notes", "Change Log"),
    "task": ("Summary", "Acceptance", "Notes"),
}

_ID_PREFIXES = ("REQ", "NS", "SC", "CHK", "EVID", "SOL", "ALT", "STEP")
_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"


class Prose:
    """Seeded text: words, titles, identifiers, sentences and paragraphs."""

    def __init__(self, rng: Random) -> None:
        self.rng = rng
        self.vocab, self.common = build_vocabulary(rng)
        acc = 0.0
        self.cum: list[float] = []
        for rank in range(len(self.vocab)):
            acc += 1.0 / (rank + 12)
            self.cum.append(acc)

    def words(self, k: int) -> list[str]:
        return self.rng.choices(self.vocab, cum_weights=self.cum, k=k)

    def common_words(self, k: int) -> list[str]:
        return [self.rng.choice(self.common) for _ in range(k)]

    def title(self, k_min: int = 2, k_max: int = 4) -> str:
        return " ".join(w.capitalize() for w in self.common_words(self.rng.randint(k_min, k_max)))

    def snake_key(self) -> str:
        return "_".join(self.common_words(self.rng.randint(2, 3)))

    def identifier(self) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.35:
            letters = "".join(rng.choice(_LETTERS) for _ in range(3))
            return f"FT-{letters}-{rng.randint(100, 999)}"
        if r < 0.85:
            return f"{rng.choice(_ID_PREFIXES)}-{rng.randint(1, 30):02d}"
        return self.snake_key()

    def sentence(self) -> str:
        rng = self.rng
        words = self.words(rng.randint(7, 18))
        r = rng.random()
        if r < 0.18:
            words.insert(rng.randrange(1, len(words)), f"`{self.identifier()}`")
        elif r < 0.24:
            words.insert(rng.randrange(1, len(words)), self.identifier())
        if rng.random() < 0.08:
            words[rng.randrange(1, len(words) - 1)] += ","
        text = " ".join(words)
        return text[0].upper() + text[1:] + "."

    def paragraph(self, chars: int) -> str:
        out: list[str] = []
        length = 0
        while length < chars:
            s = self.sentence()
            out.append(s)
            length += len(s) + 1
        return " ".join(out)

    def purpose(self) -> str:
        """One sentence in the "read this when …" spirit."""
        rng = self.rng
        lead = rng.choice(
            (
                "Read this when you need",
                "Read this when you change",
                "Read this before touching",
                "Explains",
                "Defines",
                "Describes",
            )
        )
        words = self.common_words(rng.randint(4, 9))
        if rng.random() < 0.15:
            words.insert(rng.randrange(0, len(words)), self.identifier())
        return f"{lead} {' '.join(words)}."


# --------------------------------------------------------------------------------------------
# Planning: every content document, its path, its metadata and its edges
# --------------------------------------------------------------------------------------------


@dataclass
class Planned:
    """One generated content document before it is rendered."""

    path: str
    family: str
    doc_kind: str
    doc_function: str
    title: str
    has_title: bool = True
    has_h1: bool = True
    purpose: str | None = None
    bad_purpose: bool = False
    status: str | None = "active"
    delivery_status: str | None = None
    decision_status: str | None = None
    canonical_for: list[str] = field(default_factory=list)
    must_not_define: list[str] = field(default_factory=list)
    derived_from: list[str | FitEdge] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)
    date: str | None = None
    audience: bool = False
    tags: list[str] = field(default_factory=list)
    registered: bool = True
    package: str | None = None
    upstream: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    has_table: bool = False
    has_fence: bool = False
    has_russian: bool = False

    @property
    def effective_title(self) -> str:
        """What mbank shows for it (01 §6.3): title, else the H1, else the file name."""
        if self.has_title or self.has_h1:
            return self.title
        return posixpath.basename(self.path).removesuffix(".md")


@dataclass(frozen=True)
class Budget:
    """How many content documents of each family a bank of `size` gets."""

    size: int
    knowledge: dict[str, int]
    adr: int
    use_cases: int
    prd: int
    processes: int
    prompts: int
    feature_packages: int
    full_packages: int
    epics: int
    tasks: int
    inbox: int
    other: int

    @property
    def content(self) -> int:
        return (
            sum(self.knowledge.values())
            + self.adr
            + self.use_cases
            + self.prd
            + self.processes
            + self.prompts
            + 2 * self.feature_packages
            + 2 * self.full_packages
            + 5 * self.epics
            + self.tasks
            + self.inbox
            + self.other
        )


FIXED_DOCUMENTS = len(STARTER_FILES) + 1 + len(SECTIONS) + 1  # starter, pointer, indexes, root


def _split(total: int, weights: Sequence[float]) -> list[int]:
    """Split `total` by `weights` with the largest-remainder method (deterministic)."""
    raw = [total * w / sum(weights) for w in weights]
    out = [int(x) for x in raw]
    order = sorted(range(len(raw)), key=lambda i: (-(raw[i] - out[i]), i))
    for i in order[: total - sum(out)]:
        out[i] += 1
    return out


def compute_budget(size: int) -> Budget:
    """The layer mix of §6.1 turned into document counts (see the module docstring)."""
    if size < MIN_SIZE:
        raise ValueError(f"size must be at least {MIN_SIZE}, got {size}")
    knowledge_total = round(0.18 * size)
    decision_total = round(0.08 * size)
    flow_total = max(round(0.02 * size), 9)
    inbox = max(1, round(0.01 * size))
    other_total = max(2, round(0.01 * size))
    dna = 8
    delivery_total = size - dna - knowledge_total - decision_total - flow_total - inbox
    delivery_total -= other_total
    # Fixed documents per layer: knowledge 4 indexes + 2 seeds; decision 3 indexes; flow the 4
    # starter flows, the pointer and 2 indexes; delivery 3 indexes; other the root index.
    knowledge = dict(
        zip(
            ("product", "domain", "engineering", "ops"),
            _split(knowledge_total - 6, (0.15, 0.30, 0.35, 0.20)),
            strict=True,
        )
    )
    adr, use_cases, prd = _split(decision_total - 3, (0.55, 0.25, 0.20))
    processes, prompts = _split(flow_total - 7, (0.6, 0.4))
    delivery = delivery_total - 3
    epics = max(1, round(0.02 * delivery))
    tasks = max(2, round(0.03 * delivery))
    feature_docs = delivery - 5 * epics - tasks
    if feature_docs % 2:
        feature_docs -= 1
        tasks += 1
    packages = round(3 * feature_docs / 8)
    full = feature_docs // 2 - packages
    budget = Budget(
        size=size,
        knowledge=knowledge,
        adr=adr,
        use_cases=use_cases,
        prd=prd,
        processes=processes,
        prompts=prompts,
        feature_packages=packages,
        full_packages=full,
        epics=epics,
        tasks=tasks,
        inbox=inbox,
        other=other_total - 1,
    )
    assert budget.content + FIXED_DOCUMENTS == size, (budget, FIXED_DOCUMENTS)
    assert 0 <= full <= packages
    return budget


_KNOWLEDGE_SUBDIRS = {
    "domain": ("model",),
    "engineering": ("conventions", "architecture", "tooling"),
    "ops": ("runbooks", "environments"),
}
MUST_NOT_DEFINE: dict[str, tuple[str, ...]] = {
    "adr": ("current_system_state", "implementation_plan"),
    "feature-brief": ("implementation_sequence", "new_architecture_or_contract"),
    "feature-design": ("implementation_sequence",),
    "feature-plan": ("requirement_definition", "architecture_decision"),
    "prd": ("implementation_sequence", "architecture_decision"),
}
_ROOT_FILES = ("NOTES.md", "UPSTREAM.md", "ROADMAP.md", "CONTRIBUTING.md", "GLOSSARY.md")
_PROCESS_KINDS = ("process-card", "session-handoff", "lifecycle-protocol")


def _pick_status(rng: Random) -> str | None:
    r = rng.random()
    if r < 0.60:
        return "active"
    if r < 0.93:
        return "draft"
    if r < 0.97:
        return "archived"
    return None


def _pick(rng: Random, values: Sequence[str], weights: Sequence[float]) -> str:
    return rng.choices(values, weights=weights, k=1)[0]


def _delivery_status(rng: Random) -> str:
    return _pick(rng, DELIVERY_STATUSES, (0.30, 0.20, 0.45, 0.05))


def _decision_status(rng: Random) -> str:
    return _pick(rng, DECISION_STATUSES, (0.20, 0.70, 0.08, 0.02))


def _random_date(rng: Random) -> str:
    return (DATE_FIRST + timedelta(days=rng.randrange(DATE_SPAN_DAYS))).isoformat()


class Planner:
    """Lays out the content documents of a bank and decides everything about them."""

    def __init__(self, rng: Random, prose: Prose, budget: Budget, reserved_keys: set[str]):
        self.rng = rng
        self.prose = prose
        self.budget = budget
        self.docs: list[Planned] = []
        self.used_slugs: set[str] = set()
        self.used_keys: set[str] = set(reserved_keys)
        self.code_paths: list[str] = []

    # -- paths ------------------------------------------------------------------------------

    def slug(self, directory: str, words: int = 3) -> str:
        while True:
            slug = "-".join(self.prose.common_words(self.rng.randint(2, words)))
            key = f"{directory}/{slug}"
            if key not in self.used_slugs:
                self.used_slugs.add(key)
                return slug

    def add(self, doc: Planned) -> Planned:
        self.docs.append(doc)
        return doc

    def plan_paths(self) -> None:
        """Create every content document in dependency order (upstream layers first)."""
        rng, prose, b = self.rng, self.prose, self.budget
        for section, count in b.knowledge.items():
            for _ in range(count):
                directory = section
                subdirs = _KNOWLEDGE_SUBDIRS.get(section, ())
                if subdirs and rng.random() < 0.15:
                    directory = f"{section}/{rng.choice(subdirs)}"
                function = "reference" if rng.random() < 0.25 else "canonical"
                self.add(
                    Planned(
                        f"{directory}/{self.slug(directory)}.md",
                        "knowledge",
                        section,
                        function,
                        prose.title(),
                    )
                )
        for i in range(b.prd):
            slug = self.slug("prd")
            title = f"PRD-{i + 1:03d}: {slug.replace('-', ' ').title()}"
            self.add(Planned(f"prd/PRD-{i + 1:03d}-{slug}.md", "prd", "prd", "canonical", title))
        stamp = datetime(2025, 1, 6, 9, 0, 0, tzinfo=UTC)
        for _ in range(b.adr):
            stamp += timedelta(hours=rng.randint(20, 200), minutes=rng.randrange(60))
            slug = self.slug("adr")
            path = f"adr/ADR-{stamp:%Y%m%dT%H%M%SZ}-{slug}.md"
            self.add(Planned(path, "adr", "adr", "canonical", slug.replace("-", " ").title()))
        for i in range(b.use_cases):
            slug = self.slug("use-cases")
            title = f"UC-{i + 1:03d}: {slug.replace('-', ' ').title()}"
            path = f"use-cases/UC-{i + 1:03d}-{slug}.md"
            self.add(Planned(path, "use-case", "use_case", "canonical", title))
        for i in range(b.processes):
            kind = _PROCESS_KINDS[i % len(_PROCESS_KINDS)]
            slug = self.slug("processes", 2)
            title = f"{slug.replace('-', ' ').title()} {kind.replace('-', ' ').title()}"
            path = f"processes/PROCESS-{i + 1:03d}-{slug}-{kind}.md"
            self.add(Planned(path, "process", "process", "canonical", title))
        for i in range(b.prompts):
            slug = self.slug("prompts")
            title = f"Prompt: {slug.replace('-', ' ').title()}"
            path = f"prompts/PROMPT-{i + 1:03d}-{slug}.md"
            self.add(Planned(path, "prompt", "prompt", "canonical", title))
        epic_parts = (
            ("charter", "epic-charter", "canonical", "Charter"),
            ("roadmap", "epic-roadmap", "roadmap", "Roadmap"),
            ("decision-log", "epic-decision-log", "decision_log", "Decision Log"),
            ("subissues", "epic-subissues", "subissue_registry", "Sub-issues"),
            ("risks", "epic-risks", "risk_register", "Risks"),
        )
        for i in range(b.epics):
            epic = f"EP-{i + 1:02d}"
            name = prose.title(2, 3)
            for file, family, function, label in epic_parts:
                title = f"{epic}: {name}" if file == "charter" else f"{epic}: {label}"
                self.add(
                    Planned(
                        f"epics/{epic}/{file}.md",
                        family,
                        "epic",
                        function,
                        title,
                        package=epic,
                    )
                )
        full = set(rng.sample(range(b.feature_packages), b.full_packages))
        for i in range(b.feature_packages):
            ft = f"FT-{i + 1:03d}"
            name = prose.title(2, 5)
            base = f"features/{ft}"
            parts = [("brief", "feature-brief", "canonical", f"{ft}: {name}")]
            if i in full:
                parts.append(("design", "feature-design", "canonical", f"{ft}: Design"))
                parts.append(
                    ("implementation-plan", "feature-plan", "derived", f"{ft}: Implementation Plan")
                )
            parts.append(("README", "feature-readme", "index", f"{ft}: Feature Package"))
            for file, family, function, title in parts:
                self.add(
                    Planned(f"{base}/{file}.md", family, "feature", function, title, package=ft)
                )
        for i in range(b.tasks):
            slug = self.slug("tasks")
            title = f"TASK-{i + 1:03d}: {slug.replace('-', ' ').title()}"
            path = f"tasks/TASK-{i + 1:03d}-{slug}.md"
            self.add(Planned(path, "task", "feature", "derived", title))
        for i in range(b.other):
            name = _ROOT_FILES[i] if i < len(_ROOT_FILES) else f"notes-{self.slug('')}.md"
            title = name.removesuffix(".md").replace("-", " ").title()
            self.add(Planned(name, "other", "project", "reference", title))
        for _ in range(b.inbox):
            slug = self.slug("_inbox")
            day = _random_date(rng).replace("-", "")
            kind = rng.choice(("domain", "engineering", "ops", "product"))
            title = slug.replace("-", " ").capitalize()
            self.add(Planned(f"_inbox/{day}-{slug}.md", "inbox", kind, "reference", title))

    # -- frontmatter ------------------------------------------------------------------------

    def new_key(self, doc: Planned) -> str:
        while True:
            base = self.prose.snake_key()
            key = f"{doc.package.lower().replace('-', '_')}_{base}" if doc.package else base
            if key not in self.used_keys:
                self.used_keys.add(key)
                return key

    def plan_frontmatter(self) -> None:
        """Draw every frontmatter field with the ratios of §6.1."""
        rng, prose = self.rng, self.prose
        package_status: dict[str, str] = {}
        # canonical_for and the unquoted colon go to 29% and 2% of all content documents, but
        # never to a package README (an index with a fixed purpose), hence the scale.
        indexes = sum(1 for d in self.docs if d.family == "feature-readme")
        scale = len(self.docs) / max(1, len(self.docs) - indexes)
        owner_share, bad_share = 0.29 * scale, 0.02 * scale
        for doc in self.docs:
            index = doc.family == "feature-readme"
            doc.has_title = rng.random() < 0.74
            doc.has_h1 = doc.has_title or rng.random() < 0.85
            if index:
                doc.purpose = f"Navigation for {doc.package}: read the brief first, then the rest."
            elif rng.random() < 0.998:
                doc.purpose = prose.purpose()
                if rng.random() < bad_share:
                    head = " ".join(prose.common_words(rng.randint(1, 3))).capitalize()
                    doc.purpose = f"{head}: {doc.purpose[0].lower()}{doc.purpose[1:]}"
                    doc.bad_purpose = True
                elif rng.random() < 0.03:
                    head = " ".join(prose.common_words(2)).capitalize()
                    doc.purpose = f"{head}: {doc.purpose[0].lower()}{doc.purpose[1:]}"
            doc.status = _pick_status(rng)
            if doc.family == "inbox":
                doc.status = "draft"
            if doc.package and doc.package.startswith("FT-"):
                if doc.package not in package_status:
                    package_status[doc.package] = _delivery_status(rng)
                if not index:
                    doc.delivery_status = package_status[doc.package]
            elif doc.family.startswith("epic-") or doc.family == "task":
                doc.delivery_status = _delivery_status(rng)
            if doc.family == "adr":
                doc.decision_status = _decision_status(rng)
            if not index and rng.random() < 0.10:
                if rng.random() < 0.5:
                    doc.doc_kind = rng.choice(INVENTED_VALUES)
                else:
                    doc.doc_function = rng.choice(INVENTED_VALUES)
            if not index and rng.random() < owner_share:
                doc.canonical_for = [self.new_key(doc) for _ in range(rng.randint(1, 3))]
            if doc.family in MUST_NOT_DEFINE and rng.random() < 0.5:
                doc.must_not_define = list(MUST_NOT_DEFINE[doc.family])
            if rng.random() < 0.25 or doc.family == "adr":
                doc.date = _random_date(rng)
            doc.audience = index or rng.random() < 0.6
            if rng.random() < 0.08:
                doc.tags = prose.common_words(rng.randint(1, 3))
        owners = [d for d in self.docs if d.canonical_for]
        if len(owners) >= 2:
            first, second = rng.sample(owners, 2)
            second.canonical_for.append(first.canonical_for[0])

    def plan_anchors(self) -> None:
        """`anchors:` on about 5% of documents, pointing at a pool of code paths."""
        rng = self.rng
        packages = ("core", "api", "store", "sync", "cli", "render")
        pool_size = max(24, self.budget.size // 40)
        self.code_paths = sorted(
            f"src/{packages[i % len(packages)]}/module_{i // len(packages) + 1:02d}.py"
            for i in range(pool_size)
        )
        families = {"knowledge", "adr", "feature-brief", "feature-design", "feature-plan", "task"}
        eligible = sum(1 for d in self.docs if d.family in families)
        share = min(1.0, 0.05 * len(self.docs) / max(1, eligible))
        for doc in self.docs:
            if doc.family in families and rng.random() < share:
                anchors: list[str] = []
                for _ in range(rng.randint(1, 2)):
                    if rng.random() < 0.1:
                        anchor = f"src/{rng.choice(packages)}"
                    else:
                        anchor = rng.choice(self.code_paths)
                    if anchor not in anchors:
                        anchors.append(anchor)
                doc.anchors = anchors

    # -- edges, links, registration ----------------------------------------------------------

    def plan_edges(self, governance_paths: Sequence[str]) -> None:
        """`derived_from` (acyclic: always towards earlier documents), body links, registration."""
        rng = self.rng
        dna = ["dna/governance.md", "dna/principles.md"]
        knowledge: list[str] = ["product/context.md", "engineering/testing-policy.md"]
        decision: list[str] = []
        charters: list[str] = []
        briefs: list[str] = []
        package_docs: dict[str, list[str]] = {}
        flows = [p for p in governance_paths if p.startswith("flows/")]
        all_targets = [d.path for d in self.docs if d.family != "inbox"]
        all_targets += [p for p in governance_paths if not p.startswith("flows/templates/")]
        for doc in self.docs:
            siblings = package_docs.setdefault(doc.package, []) if doc.package else []
            if doc.family == "knowledge":
                pools = [dna, knowledge, knowledge]
            elif doc.family in ("adr", "use-case", "prd"):
                pools = [knowledge, knowledge, decision] if decision else [knowledge]
            elif doc.family in ("process", "prompt"):
                pools = [dna, flows, knowledge]
            elif doc.family == "epic-charter":
                pools = [decision, knowledge]
            elif doc.family.startswith("epic-"):
                pools = [siblings[:1], siblings[:1], decision]
            elif doc.family == "feature-brief":
                pools = [decision, knowledge, decision] + ([charters] if charters else [])
            elif doc.family in ("feature-design", "feature-plan"):
                pools = [siblings, siblings, knowledge, decision]
            elif doc.family == "feature-readme":
                pools = [siblings, siblings, ["dna/governance.md"]]
            elif doc.family == "task":
                pools = [briefs or knowledge, knowledge]
            else:  # other, inbox
                pools = [knowledge, dna]
            pools = [p for p in pools if p]
            upstream: list[str] = []
            for _ in range(rng.randint(1, 4)):
                pool = rng.choice(pools)
                pick = rng.choice(pool)
                if pick not in upstream and pick != doc.path:
                    upstream.append(pick)
            doc.upstream = upstream
            if rng.random() < 0.92:
                doc.derived_from = [self.edge(doc, target) for target in upstream]
            n_links = rng.randint(1, 5)
            links = [t for t in upstream[:n_links] if rng.random() < 0.5]
            while len(links) < n_links:
                target = rng.choice(all_targets)
                if target != doc.path and target not in links:
                    links.append(target)
            doc.links = links
            doc.has_table = rng.random() < 0.10
            doc.has_fence = rng.random() < 0.10
            doc.has_russian = rng.random() < 0.02
            doc.registered = doc.family != "inbox" and rng.random() >= 0.02
            if doc.family == "knowledge":
                knowledge.append(doc.path)
            elif doc.family in ("adr", "use-case", "prd"):
                decision.append(doc.path)
            elif doc.family == "epic-charter":
                charters.append(doc.path)
            elif doc.family == "feature-brief":
                briefs.append(doc.path)
            if doc.package:
                siblings.append(doc.path)

    def edge(self, doc: Planned, target: str) -> str | FitEdge:
        """One `derived_from` item: 1.5% fit form, 3% external, 0.5% broken, else a path."""
        rng = self.rng
        here = posixpath.dirname(doc.path)
        r = rng.random()
        if r < 0.03:
            depth = here.count("/") + 1 if here else 0
            other = rng.choice(("platform-bank", "shared-bank", "billing-bank"))
            return "../" * (depth + 1) + f"{other}/{rng.choice(('domain', 'engineering'))}/x.md"
        if r < 0.035:
            target = f"{target.rsplit('/', 1)[0]}/removed-{self.prose.common_words(1)[0]}.md"
        rel = posixpath.relpath(target, here or ".")
        if r >= 0.035 and rng.random() < 0.015:
            return FitEdge(rel, f"Only the {' '.join(self.prose.common_words(2))} part applies.")
        return rel


# --------------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------------


def _rel(source: str, target: str) -> str:
    return posixpath.relpath(target, posixpath.dirname(source) or ".")


def frontmatter_of(doc: Planned) -> list[tuple[str, FrontValue]]:
    fields: list[tuple[str, FrontValue]] = []
    if doc.has_title:
        fields.append(("title", doc.title))
    fields += [("doc_kind", doc.doc_kind), ("doc_function", doc.doc_function)]
    if doc.purpose is not None:
        fields.append(("purpose", Raw(doc.purpose) if doc.bad_purpose else doc.purpose))
    if doc.derived_from:
        fields.append(("derived_from", list(doc.derived_from)))
    if doc.canonical_for:
        fields.append(("canonical_for", list(doc.canonical_for)))
    if doc.must_not_define:
        fields.append(("must_not_define", list(doc.must_not_define)))
    if doc.status is not None:
        fields.append(("status", doc.status))
    if doc.delivery_status:
        fields.append(("delivery_status", doc.delivery_status))
    if doc.decision_status:
        fields.append(("decision_status", doc.decision_status))
    if doc.anchors:
        fields.append(("anchors", list(doc.anchors)))
    if doc.date:
        fields.append(("date", Raw(doc.date)))
    if doc.audience:
        fields.append(("audience", "humans_and_agents"))
    if doc.tags:
        fields.append(("tags", FlowList(tuple(doc.tags))))
    return fields


class Renderer:
    """Turns planned documents into text."""

    def __init__(self, rng: Random, prose: Prose, titles: dict[str, str]) -> None:
        self.rng = rng
        self.prose = prose
        self.titles = titles

    def link(self, source: str, target: str) -> str:
        return f"[{self.titles.get(target, target)}]({_rel(source, target)})"

    def table(self) -> str:
        rng, prose = self.rng, self.prose
        cols = rng.randint(3, 5)
        header = [w.capitalize() for w in prose.common_words(cols)]
        rows = [
            "| " + " | ".join(header) + " |",
            "|" + "|".join("---" for _ in header) + "|",
        ]
        for _ in range(rng.randint(3, 8)):
            cells = [f"`{prose.identifier()}`"] + [
                " ".join(prose.words(rng.randint(1, 4))) for _ in range(cols - 1)
            ]
            rows.append("| " + " | ".join(cells) + " |")
        return "\n".join(rows)

    def fence(self) -> str:
        rng, prose = self.rng, self.prose
        if rng.random() < 0.5:
            name = prose.snake_key()
            lines = [
                "```python",
                "# ## not a heading: fenced text is never a section",
                f"def {name}(payload: dict) -> bool:",
                f'    """{prose.sentence()}"""',
                f"    limit = payload.get({prose.common_words(1)[0]!r}, {rng.randint(1, 500)})",
                "    return limit > 0",
                "```",
            ]
        else:
            lines = ["```yaml", "# ## still not a heading"]
            for _ in range(rng.randint(3, 6)):
                lines.append(f"{prose.snake_key()}: {rng.randint(0, 999)}")
            lines.append("```")
        return "\n".join(lines)

    def block(self, budget: int) -> str:
        """A paragraph or a list of roughly `budget` characters (never much more)."""
        rng, prose = self.rng, self.prose
        r = rng.random()
        if r < 0.62 or budget < 180:
            return prose.paragraph(min(budget, rng.randint(220, 700)))
        items = max(1, min(rng.randint(2, 6), budget // 95))
        if r < 0.87:
            return "\n".join(f"- {prose.sentence()}" for _ in range(items))
        return "\n".join(f"{i + 1}. {prose.sentence()}" for i in range(items))

    def headings(self, doc: Planned, n: int) -> list[str]:
        rng = self.rng
        base = list(FAMILY_HEADINGS.get(doc.family, ()))[:n]
        pool = [h for h in GENERIC_HEADINGS if h not in base]
        while len(base) < n:
            heading = pool.pop(rng.randrange(len(pool))) if pool else self.prose.title(2, 3)
            if heading not in base:
                base.append(heading)
        return base

    def body(self, doc: Planned) -> str:
        """3–5 KB: an H1 (mostly), an intro, 3–8 `##` sections, extras spread among them."""
        rng, prose = self.rng, self.prose
        target = rng.randint(3000, 5000)
        n_sections = rng.randint(3, 8)
        headings = self.headings(doc, n_sections)
        extras: list[str] = []
        if doc.has_table:
            extras.append(self.table())
        if doc.has_fence:
            extras.append(self.fence())
        if doc.has_russian:
            extras.append(rng.choice(RUSSIAN_SENTENCES))
        for target_path in doc.links:
            why = " ".join(prose.common_words(rng.randint(2, 5)))
            extras.append(f"See {self.link(doc.path, target_path)} for the {why}.")
        intro = prose.paragraph(rng.randint(150, 400))
        fixed = len(intro) + sum(len(e) + 2 for e in extras)
        fixed += sum(len(h) + 5 for h in headings) + len(doc.title) + 4
        per_section = max(120, (target - fixed) // n_sections)
        sections: list[list[str]] = []
        for _ in headings:
            blocks: list[str] = []
            used = 0
            while used < per_section - 60:
                block = self.block(per_section - used)
                blocks.append(block)
                used += len(block) + 2
            sections.append(blocks)
        for extra in extras:
            rng.choice(sections).append(extra)
        parts = [f"# {doc.title}"] if doc.has_h1 else []
        parts.append(intro)
        for heading, blocks in zip(headings, sections, strict=True):
            parts.append(f"## {heading}")
            parts.extend(blocks)
        return "\n\n".join(parts) + "\n"

    def feature_readme(self, doc: Planned, package: Sequence[Planned]) -> str:
        prose = self.prose
        lines = [f"# {doc.title}", "", prose.paragraph(200), "", "## Documents", ""]
        for member in package:
            if member is doc or not member.registered:
                continue
            name = posixpath.basename(member.path)
            lines.append(f"- [`{name}`]({name})")
            lines.append(f"  {prose.purpose()}")
        lines += ["", "## Status", ""]
        status = next((m.delivery_status for m in package if m.delivery_status), "planned")
        lines.append(f"Delivery status: `{status}`. {prose.sentence()}")
        return "\n".join(lines) + "\n"

    def render(self, doc: Planned, package: Sequence[Planned]) -> str:
        if doc.family == "feature-readme":
            body = self.feature_readme(doc, package)
        else:
            body = self.body(doc)
        return document(frontmatter_of(doc), body)


def registry_line(index_path: str, doc: Planned) -> str:
    purpose = (doc.purpose or doc.effective_title).replace("\n", " ")
    return f"- [`{doc.effective_title}`]({_rel(index_path, doc.path)}) — {purpose}"


def section_index(section: KnownSection, entries: Sequence[str], body_extra: str = "") -> str:
    """A section index in the format of 05 §6.1 (a features registry passes its table)."""
    registry = body_extra or ("\n".join(entries) if entries else SECTION_PLACEHOLDER)
    return document(
        [
            ("title", section.title),
            ("doc_kind", section.doc_kind),
            ("doc_function", "index"),
            ("purpose", section.purpose),
            ("derived_from", ["../dna/governance.md"]),
            ("status", "active"),
            ("audience", "humans_and_agents"),
        ],
        f"# {section.title}\n\n{section.route}\n\n## Registry\n\n{registry}\n",
    )


def features_registry(docs: Sequence[Planned]) -> str:
    """The features registry table: one row per package (real registries had ≈70 FT lines)."""
    rows = [
        "| Feature ID | Title | Status | Delivery status | Package | Brief | Last updated |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    packages: dict[str, list[Planned]] = {}
    for doc in docs:
        if doc.package and doc.package.startswith("FT-"):
            packages.setdefault(doc.package, []).append(doc)
    for ft, members in packages.items():
        brief = members[0]
        readme = members[-1]
        name = brief.title.split(": ", 1)[-1]

        def cell(doc: Planned, ft: str = ft) -> str:
            rel = f"{ft}/{posixpath.basename(doc.path)}"
            return f"[`{rel}`]({rel})" if doc.registered else f"`{rel}`"

        updated = brief.date or DATE_FIRST.isoformat()
        rows.append(
            f"| `{ft}` | {name} | `{brief.status or 'active'}` | "
            f"`{brief.delivery_status or 'planned'}` | {cell(readme)} | {cell(brief)} | {updated} |"
        )
    return "\n".join(rows)


def epics_registry(docs: Sequence[Planned]) -> str:
    rows = [
        "| Epic | Title | Charter | Roadmap | Decision log | Sub-issues | Risks |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    epics: dict[str, list[Planned]] = {}
    for doc in docs:
        if doc.package and doc.package.startswith("EP-"):
            epics.setdefault(doc.package, []).append(doc)
    for ep, members in epics.items():
        cells = []
        for doc in members:
            rel = f"{ep}/{posixpath.basename(doc.path)}"
            cells.append(f"[`{rel}`]({rel})" if doc.registered else f"`{rel}`")
        name = members[0].title.split(": ", 1)[-1]
        rows.append(f"| `{ep}` | {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def root_index(used_sections: Sequence[KnownSection], others: Sequence[Planned]) -> str:
    """The root index in the format of 05 §6.2, plus the root-level documents it registers."""
    lines = [
        "# Documentation Index",
        "",
        f"Knowledge base for **{PROJECT_NAME}**.",
        "",
        "## Start Here",
        "",
        "Read [dna/README.md](dna/README.md) first: it holds the single-source-of-truth rules, "
        "the contract and the governance of this bank.",
        "",
        "## Annotated Index",
        "",
    ]
    for section in used_sections:
        lines.append(f"- [`{section.dir}/README.md`]({section.dir}/README.md)")
        lines.append(f"  {section.route}")
    lines += [
        "",
        "- [`flows/README.md`](flows/README.md)",
        "  Read when you create a feature or an epic, move work through its lifecycle gates or "
        "instantiate a template.",
        "",
        "- [`dna/README.md`](dna/README.md)",
        "  Read when you need the single source of truth rules, the contract or governance.",
        "",
        "## Task-Specific Routes",
        "",
        "| Task | Route |",
        "|---|---|",
        "| Starting a feature | [`flows/feature-flow.md`](flows/feature-flow.md) |",
        "| Recording a decision | [`adr/README.md`](adr/README.md) |",
        "| Choosing how much documentation a task needs | "
        "[`flows/workflows.md`](flows/workflows.md) |",
    ]
    registered = [d for d in others if d.registered]
    if registered:
        lines += ["", "## Other Documents", ""]
        lines += [registry_line("README.md", d) for d in registered]
    return document(
        [
            ("title", "Documentation Index"),
            ("doc_kind", "project"),
            ("doc_function", "index"),
            (
                "purpose",
                f"Root navigation for the {PROJECT_NAME} memory bank: start here to see how the "
                "knowledge base is laid out.",
            ),
            ("derived_from", ["dna/governance.md"]),
            ("status", "active"),
            ("audience", "humans_and_agents"),
        ],
        "\n".join(lines) + "\n",
    )


# --------------------------------------------------------------------------------------------
# Git history (dulwich, no git binary)
# --------------------------------------------------------------------------------------------


class _Trees:
    """Incremental tree writer: only the directories on changed paths are rebuilt."""

    def __init__(self) -> None:
        self.entries: dict[str, dict[bytes, tuple[int, ObjectID]]] = {"": {}}
        self.dirty: set[str] = set()
        self.pending: list[ShaFile] = []

    def put(self, path: str, blob_id: ObjectID) -> None:
        directory, _, name = path.rpartition("/")
        self.entries.setdefault(directory, {})[name.encode()] = (0o100644, blob_id)
        while True:
            self.dirty.add(directory)
            if not directory:
                break
            parent, _, child = directory.rpartition("/")
            self.entries.setdefault(parent, {})
            self.entries[parent].setdefault(child.encode(), (0o040000, ObjectID(b"")))
            directory = parent

    def flush(self) -> ObjectID:
        root_id = ObjectID(b"")
        for directory in sorted(self.dirty, key=lambda d: (-d.count("/") - bool(d), d)):
            tree = Tree()
            for name, (mode, sha) in self.entries[directory].items():
                tree.add(name, mode, sha)
            self.pending.append(tree)
            if directory:
                parent, _, child = directory.rpartition("/")
                self.entries[parent][child.encode()] = (0o040000, tree.id)
            else:
                root_id = tree.id
        self.dirty.clear()
        return root_id


def _code_file(path: str, prose: Prose) -> str:
    module = posixpath.basename(path).removesuffix(".py")
    return (
        f'"""{prose.sentence()}"""\n\n\n'
        f"def {module}_{prose.common_words(1)[0]}(value: int) -> int:\n"
        f"    return value + {prose.rng.randint(1, 99)}\n"
    )


def build_history(
    out: Path,
    files: dict[str, str],
    code_paths: Sequence[str],
    anchored: Sequence[Planned],
    commits: int,
    rng: Random,
    prose: Prose,
) -> None:
    """Create `out/.git` with `commits` dated commits; `files` is updated to the final state."""
    repo = Repo.init(str(out), default_branch=b"main")
    store = repo.object_store
    trees = _Trees()
    for path in code_paths:
        files[path] = _code_file(path, prose)
    pending: list[ShaFile] = []

    def stage(path: str) -> None:
        blob = Blob.from_string(files[path].encode("utf-8"))
        pending.append(blob)
        trees.put(path, blob.id)

    for path in sorted(p for p in files if not p.startswith(".")):
        stage(path)
    anchored_code = sorted({a for d in anchored for a in d.anchors if a in files})
    anchored_docs = [d.path for d in anchored]
    docs = sorted(p for p in files if p.endswith(".md"))
    parent: ObjectID | None = None
    step = max(1, (EPOCH - 86400 - HISTORY_START) // max(1, commits))
    author = b"Bench Bot <bench@example.invalid>"
    for i in range(commits):
        when = HISTORY_START + i * step + rng.randrange(step)
        touched: list[str] = []
        if i:
            for _ in range(rng.randint(1, 3)):
                r = rng.random()
                if r < 0.35 and anchored_code:
                    path = rng.choice(anchored_code)
                elif r < 0.5:
                    path = rng.choice(code_paths)
                elif r < 0.6 and anchored_docs:
                    path = rng.choice(anchored_docs)
                else:
                    path = rng.choice(docs)
                if path in touched:
                    continue
                touched.append(path)
                if path.endswith(".py"):
                    files[path] += f"\n# revision {i}: {prose.sentence()}\n"
                else:
                    files[path] = files[path].rstrip("\n") + f"\n\n{prose.sentence()}\n"
                stage(path)
            message = f"Revise {', '.join(touched)}\n"
        else:
            message = "Import the memory bank\n"
        commit = Commit()
        commit.tree = trees.flush()
        commit.parents = [parent] if parent else []
        commit.author = commit.committer = author
        commit.author_time = commit.commit_time = when
        commit.author_timezone = commit.commit_timezone = 0
        commit.encoding = b"UTF-8"
        commit.message = message.encode()
        pending.extend(trees.pending)
        trees.pending.clear()
        pending.append(commit)
        parent = commit.id
    store.add_objects([(obj, None) for obj in pending])  # one pack for the whole history
    if parent is not None:
        repo.refs[Ref(b"refs/heads/main")] = parent
    with open(out / ".git" / "info" / "exclude", "a", encoding="utf-8") as fh:
        fh.write(f"/{MARKER}\n")
    repo.close()


def write_git_index(out: Path, tracked: Iterable[str]) -> None:
    """Make the index match the final tree, so `git status` is clean."""
    repo = Repo(str(out))
    index = repo.open_index()
    for path in sorted(tracked):
        full = out / path
        blob = Blob.from_string(full.read_bytes())
        index[path.encode()] = index_entry_from_stat(os.lstat(full), blob.id)
    index.write()
    repo.close()


# --------------------------------------------------------------------------------------------
# The whole bank
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GenerationReport:
    """What `generate` wrote."""

    out: Path
    size: int
    seed: int
    documents: int
    bytes: int
    layers: dict[str, int]
    materialized: bool
    git_commits: int
    governance: str
    templates: str | None
    anchored_documents: int
    code_files: int
    seconds: float

    def as_dict(self) -> dict[str, object]:
        return {
            "generator": GENERATOR_VERSION,
            "fingerprint": fingerprint(),
            "size": self.size,
            "seed": self.seed,
            "materialized": self.materialized,
            "git_commits": self.git_commits,
            "documents": self.documents,
            "bytes": self.bytes,
            "layers": self.layers,
            "governance": self.governance,
            "templates": self.templates,
            "anchored_documents": self.anchored_documents,
            "code_files": self.code_files,
        }


def _prepare_out(out: Path) -> None:
    if out.exists():
        if not out.is_dir():
            raise FileExistsError(f"{out} exists and is not a directory")
        if any(out.iterdir()):
            if not (out / MARKER).is_file():
                raise FileExistsError(
                    f"{out} is not empty and was not written by bench.generate; refusing to "
                    "replace it"
                )
            shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)


@dataclass
class BankFiles:
    """A bank in memory: every file's text, the plan behind it, and the generator state that
    the git history continues from."""

    files: dict[str, str]
    planner: Planner
    rng: Random
    prose: Prose
    governance: str
    templates: str | None


def build_files(size: int, seed: int, materialized: bool) -> BankFiles:
    """Every file of the bank as text, in memory (no disk access besides the starter)."""
    rng = Random(seed)
    prose = Prose(rng)
    budget = compute_budget(size)
    governance, governance_source = governance_files()
    reserved = {entry[3] for entry in _TEMPLATE_CATALOGUE}
    for text in governance.values():
        keys = read_frontmatter(text).get("canonical_for")
        if isinstance(keys, list):
            reserved.update(str(k) for k in keys)
    planner = Planner(rng, prose, budget, reserved)
    planner.plan_paths()
    planner.plan_frontmatter()
    planner.plan_anchors()
    planner.plan_edges([*governance, "flows/templates/README.md"])

    titles = {d.path: d.effective_title for d in planner.docs}
    for path, text in governance.items():
        title = read_frontmatter(text).get("title")
        titles[path] = title if isinstance(title, str) else path
    titles["flows/templates/README.md"] = "Document Templates"

    files: dict[str, str] = dict(governance)
    files["flows/templates/README.md"] = templates_pointer()
    renderer = Renderer(rng, prose, titles)
    packages: dict[str, list[Planned]] = {}
    for doc in planner.docs:
        if doc.package:
            packages.setdefault(doc.package, []).append(doc)
    for doc in planner.docs:
        files[doc.path] = renderer.render(doc, packages.get(doc.package or "", ()))

    # Section indexes: every content document is registered in its section's index, except the
    # ≈2% left out on purpose; feature and epic packages are listed in registry tables.
    by_section: dict[str, list[str]] = {s.dir: [] for s in SECTIONS}
    for path in ("product/context.md", "engineering/testing-policy.md"):
        meta = read_frontmatter(governance[path])
        top = path.split("/", 1)[0]
        index = f"{top}/README.md"
        by_section[top].append(
            f"- [`{meta.get('title', path)}`]({_rel(index, path)}) — {meta.get('purpose', '')}"
        )
    for doc in planner.docs:
        top = doc.path.split("/", 1)[0]
        if doc.registered and top in by_section and top not in ("features", "epics"):
            by_section[top].append(registry_line(f"{top}/README.md", doc))
    used = [
        s for s in SECTIONS if s.seeded or any(d.path.startswith(f"{s.dir}/") for d in planner.docs)
    ]
    for section in used:
        extra = ""
        if section.dir == "features":
            extra = features_registry(planner.docs)
        elif section.dir == "epics":
            extra = epics_registry(planner.docs)
        files[f"{section.dir}/README.md"] = section_index(section, by_section[section.dir], extra)
    others = [d for d in planner.docs if d.family == "other"]
    files["README.md"] = root_index(used, others)

    templates_source: str | None = None
    if materialized:
        templates, templates_source = template_files()
        for rel, text in templates.items():
            files[f"flows/templates/{rel}"] = text
    return BankFiles(files, planner, rng, prose, governance_source, templates_source)


def generate(
    size: int,
    seed: int,
    out: Path,
    materialized: bool = False,
    git_commits: int = 0,
) -> GenerationReport:
    """Write a generated bank of `size` documents into `out` (see the module docstring)."""
    started = time.perf_counter()
    out = Path(out)
    bank = build_files(size, seed, materialized)
    files = bank.files
    _prepare_out(out)
    anchored = [d for d in bank.planner.docs if d.anchors]
    if git_commits > 0:
        build_history(
            out, files, bank.planner.code_paths, anchored, git_commits, bank.rng, bank.prose
        )

    documents = sorted(p for p in files if p.endswith(".md"))
    layers: dict[str, int] = {}
    for path in documents:
        layer = layer_of(path)
        layers[layer] = layers.get(layer, 0) + 1
    layers = dict(sorted(layers.items()))
    payload = {p: files[p].encode("utf-8") for p in sorted(files)}
    total_bytes = sum(len(payload[p]) for p in documents)
    report = GenerationReport(
        out=out,
        size=size,
        seed=seed,
        documents=len(documents),
        bytes=total_bytes,
        layers=layers,
        materialized=materialized,
        git_commits=git_commits,
        governance=bank.governance,
        templates=bank.templates,
        anchored_documents=len(anchored),
        code_files=sum(1 for p in files if p.startswith("src/")),
        seconds=0.0,
    )
    payload[MARKER] = (json.dumps(report.as_dict(), indent=2, sort_keys=True) + "\n").encode()

    directories: set[Path] = {out}
    for rel, data in payload.items():
        target = out / rel
        if target.parent not in directories:
            target.parent.mkdir(parents=True, exist_ok=True)
            directories.update(target.parents[: len(Path(rel).parts) - 1])
        target.write_bytes(data)
    for index, rel in enumerate(sorted(payload)):
        stamp = (EPOCH + index) * 1_000_000_000
        os.utime(out / rel, ns=(stamp, stamp))
    for directory in sorted(directories, key=lambda p: (-len(p.parts), str(p))):
        os.utime(directory, ns=(EPOCH * 1_000_000_000,) * 2)
    if git_commits > 0:
        write_git_index(out, [p for p in files if not p.startswith(".")])
    return dataclasses.replace(report, seconds=round(time.perf_counter() - started, 3))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.generate",
        description="Write a deterministic synthetic memory bank (spec 07 §6.1).",
    )
    parser.add_argument(
        "--size",
        type=int,
        required=True,
        help=f"documents in the bank (standard: {', '.join(map(str, STANDARD_SIZES))})",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, required=True, help="an empty or generated directory")
    parser.add_argument(
        "--materialized", action="store_true", help="add the 24 templates under flows/templates/"
    )
    parser.add_argument(
        "--git", type=int, default=0, metavar="COMMITS", help="make a dulwich repository"
    )
    args = parser.parse_args(argv)
    try:
        report = generate(args.size, args.seed, args.out, args.materialized, args.git)
    except (ValueError, FileExistsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = {**report.as_dict(), "out": str(report.out), "seconds": report.seconds}
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
