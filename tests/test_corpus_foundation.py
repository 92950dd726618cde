"""The foundation on the real banks (opt-in corpus tier, spec 07 §2.7): counts, every invalid
header with what lenient recovery must give, stable refreshes, addressable sections, and the
same snapshot in processes with different hash seeds. Every bank is copied to tmp_path first."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mbank.parse import json_data
from mbank.sections import match_section, norm
from mbank.snapshot import Bank, Snapshot

pytestmark = pytest.mark.corpus

AI_SETUP = "IgorArkhipov__ai-setup"
CODE_CONVERGE = "dapi__code-converge"
DOCUMENT_COUNTS = {AI_SETUP: 116, CODE_CONVERGE: 182}
COLON = "mapping values are not allowed in this context"

# Read by hand from each file's header: an unquoted ": " inside `purpose` breaks the YAML on
# file line 5; the recovery must give back every field as written.
INVALID_HEADERS: dict[str, dict[str, dict[str, Any]]] = {
    AI_SETUP: {
        "engineering/autonomy-boundaries.md": {
            "title": "Autonomy Boundaries",
            "doc_kind": "engineering",
            "doc_function": "canonical",
            "purpose": "Agent autonomy boundaries: what can be done without confirmation, which "
            "changes require a checkpoint, and when an agent must stop and ask.",
            "derived_from": ["../dna/governance.md"],
            "canonical_for": [
                "agent_autonomy_rules",
                "escalation_triggers",
                "supervision_checkpoints",
            ],
            "status": "active",
            "audience": "humans_and_agents",
        },
        "engineering/coding-style.md": {
            "title": "Coding Style",
            "doc_kind": "engineering",
            "doc_function": "convention",
            "purpose": "Repository coding style for the active `tools/agentscope` TypeScript "
            "package: strict typing, ESM conventions, module boundaries, tooling, and change "
            "discipline.",
            "derived_from": ["../dna/governance.md"],
            "status": "active",
            "audience": "humans_and_agents",
        },
        "engineering/git-workflow.md": {
            "title": "Git Workflow",
            "doc_kind": "engineering",
            "doc_function": "convention",
            "purpose": "Repository git workflow for AgentScope changes: default branch, commit "
            "style, verification before review, and current worktree guidance.",
            "derived_from": ["../dna/governance.md"],
            "status": "active",
            "audience": "humans_and_agents",
        },
        "engineering/testing-policy.md": {
            "title": "Testing Policy",
            "doc_kind": "engineering",
            "doc_function": "canonical",
            "purpose": "Canonical testing policy for the `tools/agentscope` package: required "
            "automated coverage, fixture strategy, local verification commands, and the narrow "
            "cases where manual checks may supplement automation.",
            "derived_from": ["../dna/governance.md", "../flows/feature-flow.md"],
            "status": "active",
            "canonical_for": [
                "repository_testing_policy",
                "feature_test_case_inventory_rules",
                "automated_test_requirements",
                "sufficient_test_coverage_definition",
                "manual_only_verification_exceptions",
                "simplify_review_discipline",
                "verification_context_separation",
            ],
            "must_not_define": ["feature_acceptance_criteria", "feature_scope"],
            "audience": "humans_and_agents",
        },
    },
    CODE_CONVERGE: {
        "engineering/autonomy-boundaries.md": {
            "title": "Autonomy Boundaries",
            "doc_kind": "engineering",
            "doc_function": "canonical",
            "purpose": "Границы автономии агента: что можно делать без подтверждения, где нужна "
            "супервизия, когда эскалировать.",
            "derived_from": ["../dna/governance.md"],
            "canonical_for": [
                "agent_autonomy_rules",
                "escalation_triggers",
                "supervision_checkpoints",
            ],
            "status": "active",
            "audience": "humans_and_agents",
        },
        "flows/templates/feature/design.md": {
            "title": "FT-XXX: Design Template",  # the quotes are removed by the recovery
            "doc_kind": "feature",
            "doc_function": "template",
            "purpose": "Governed wrapper-шаблон для feature-local `design.md`. Фиксирует "
            "solution-space слой: выбранный подход, architecture coverage, contracts, design "
            "verification и design-pack routing без смешения с problem space или execution "
            "contract.",
            "derived_from": [
                "../../feature.md",
                "../../feature-artifact-catalog.md",
                "../../../dna/frontmatter.md",
            ],
            "status": "active",
            "audience": "humans_and_agents",
            "template_for": "feature",
            "template_target_path": "../../../features/FT-XXX/design.md",
            "canonical_for": ["feature_design_template"],
        },
    },
}


@pytest.fixture
def banks(corpus: dict[str, Path], tmp_path: Path) -> dict[str, Path]:
    """Private copies of the two shared banks (mtimes kept), by name."""
    missing = sorted(set(DOCUMENT_COUNTS) - set(corpus))
    if missing:
        pytest.fail(f"MBANK_TEST_ROOTS does not include {', '.join(missing)}")
    return {
        name: Path(
            shutil.copytree(
                corpus[name], tmp_path / name, symlinks=True, copy_function=shutil.copyfile
            )
        )
        for name in DOCUMENT_COUNTS
    }


def snapshot_digest(snapshot: Snapshot) -> str:
    """A sha256 over everything the snapshot holds, root-independent and order-sensitive."""
    contract = snapshot.contract
    plain = {
        "docs": [
            [path, {**msgspec.to_builtins(doc), "data": json_data(doc.data)}]
            for path, doc in snapshot.docs.items()
        ],
        "raw": [
            [path, hashlib.sha256(text.encode()).hexdigest()] for path, text in snapshot.raw.items()
        ],
        "incoming": list(snapshot.incoming.items()),
        "owners": list(snapshot.owners.items()),
        "indexLinks": msgspec.to_builtins(snapshot.index_links),
        "contract": [
            msgspec.to_builtins(getattr(contract, field))
            for field in contract.__struct_fields__
            if field != "declared_in"
        ],
        "declaredIn": [[f, v, p] for (f, v), p in contract.declared_in.items()],
        "layers": msgspec.to_builtins(snapshot.layers),
        "vocabulary": msgspec.to_builtins(snapshot.vocabulary),
    }
    return hashlib.sha256(msgspec.json.encode(plain)).hexdigest()


@pytest.mark.parametrize("name", sorted(DOCUMENT_COUNTS))
def test_document_counts(banks: dict[str, Path], name: str) -> None:
    snapshot = Bank(banks[name]).refresh()
    assert len(snapshot.docs) == DOCUMENT_COUNTS[name]
    assert all(doc.text_ok for doc in snapshot.docs.values())
    assert all(doc.has_frontmatter for doc in snapshot.docs.values())


@pytest.mark.parametrize("name", sorted(DOCUMENT_COUNTS))
def test_the_invalid_headers_and_what_recovery_gives(banks: dict[str, Path], name: str) -> None:
    docs = Bank(banks[name]).refresh().docs
    invalid = {path: doc for path, doc in docs.items() if doc.parse_error is not None}
    assert sorted(invalid) == sorted(INVALID_HEADERS[name])
    for path, expected in INVALID_HEADERS[name].items():
        doc = invalid[path]
        assert (doc.parse_error_kind, doc.parse_error, doc.parse_error_line) == ("yaml", COLON, 5)
        assert doc.data == expected, path
        assert doc.fields == tuple(expected)
        assert doc.title == expected["title"]
        assert doc.purpose == expected["purpose"]
        assert doc.canonical_for == tuple(expected.get("canonical_for", ()))
        assert [edge.raw for edge in doc.derived_from] == expected["derived_from"]
        assert all(edge.resolved in docs for edge in doc.derived_from), path


def test_url_edges_of_code_converge_are_external_never_broken(banks: dict[str, Path]) -> None:
    docs = Bank(banks[CODE_CONVERGE]).refresh().docs
    edges = [edge for doc in docs.values() for edge in doc.derived_from]
    url_edges = [edge for edge in edges if edge.url]
    assert len(url_edges) == 25  # spec 01 §2.4: upstream reported every one as broken
    assert all(edge.external and edge.resolved is None for edge in url_edges)
    broken = [e for e in edges if not e.external and e.resolved and e.resolved not in docs]
    assert broken == []


@pytest.mark.parametrize("name", sorted(DOCUMENT_COUNTS))
def test_two_refreshes_give_identical_snapshots_and_the_second_parses_nothing(
    banks: dict[str, Path], name: str
) -> None:
    bank = Bank(banks[name])
    first = bank.refresh()
    assert bank.last_refresh_parsed == DOCUMENT_COUNTS[name]
    second = bank.refresh()
    assert bank.last_refresh_parsed == 0
    assert second is first
    fresh = Bank(banks[name]).refresh()
    assert snapshot_digest(fresh) == snapshot_digest(first)
    assert fresh.docs == first.docs


@pytest.mark.parametrize("name", sorted(DOCUMENT_COUNTS))
def test_every_section_is_addressable_by_its_own_heading(banks: dict[str, Path], name: str) -> None:
    docs = Bank(banks[name]).refresh().docs
    checked = 0
    for doc in docs.values():
        for section in doc.sections:
            assert section.title is not None
            found = match_section(doc, section.title)
            # A repeated heading resolves to its first occurrence, which reads the same.
            assert norm(found.title) == norm(section.title), (doc.path, section.title)
            checked += 1
    assert checked > 600


def test_the_same_snapshot_in_processes_with_different_hash_seeds(banks: dict[str, Path]) -> None:
    program = (
        "import sys\n"
        "from mbank.snapshot import Bank\n"
        "from test_corpus_foundation import snapshot_digest\n"
        "for root in sys.argv[1:]:\n"
        "    print(snapshot_digest(Bank(root).refresh()))\n"
    )
    roots = [str(banks[name]) for name in sorted(DOCUMENT_COUNTS)]
    outputs = []
    for seed in ("1", "4242"):
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        environment["PYTHONPATH"] = os.pathsep.join(
            [str(Path(__file__).parent), environment.get("PYTHONPATH", "")]
        )
        completed = subprocess.run(
            [sys.executable, "-c", program, *roots],
            capture_output=True,
            text=True,
            env=environment,
            timeout=120,
            check=True,
        )
        outputs.append(completed.stdout.split())
    in_process = [snapshot_digest(Bank(root).refresh()) for root in roots]
    assert outputs[0] == outputs[1] == in_process
