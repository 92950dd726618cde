"""The contract and layer map of the two real banks (opt-in corpus tier, spec 07 §2.7).

`MBANK_TEST_ROOTS` lists paths separated by `os.pathsep`; each is a bank root (it has a `dna/`
directory) or a folder whose subdirectories are bank roots, e.g. `../shared/corpora`. Unset →
skipped; set but naming a missing path → failed, naming it. The expected values were read off
the banks' `dna/*.md` by hand; each test's docstring cites the line that declares each value.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mbank.contract import (
    BUILTIN_WEIGHTS,
    EMPTY_LAYERS,
    effective_weights,
    parse_contract,
    parse_layers,
)

pytestmark = pytest.mark.corpus

STATUSES = ("draft", "active", "archived")
DELIVERY_STATUSES = ("planned", "in_progress", "done", "cancelled")
DECISION_STATUSES = ("proposed", "accepted", "superseded", "rejected")
DNA_SOURCES = (
    "dna/README.md",
    "dna/cross-references.md",
    "dna/frontmatter.md",
    "dna/governance.md",
    "dna/lifecycle.md",
    "dna/principles.md",
)


def _bank_roots() -> list[Path]:
    raw = os.environ.get("MBANK_TEST_ROOTS")
    if not raw:
        pytest.skip("MBANK_TEST_ROOTS is not set; the corpus tier is opt-in.")
    entries = [entry for entry in raw.split(os.pathsep) if entry]
    missing = [entry for entry in entries if not Path(entry).is_dir()]
    if missing:
        pytest.fail(f"MBANK_TEST_ROOTS names missing directories: {', '.join(missing)}")
    roots: list[Path] = []
    for entry in map(Path, entries):
        if (entry / "dna").is_dir():
            roots.append(entry)
        else:
            roots.extend(sorted(p for p in entry.iterdir() if p.is_dir() and p.name[0] != "."))
    return roots


def _dna_docs(bank: str) -> list[tuple[str, str]]:
    """The (bank path, text) of every `dna/` markdown file of the named bank, in path order."""
    found = [root for root in _bank_roots() if root.name == bank]
    if not found:
        pytest.skip(f"{bank} is not among the banks of MBANK_TEST_ROOTS.")
    root = found[0]
    docs = [
        (path.relative_to(root).as_posix(), path.read_text(encoding="utf-8"))
        for path in (root / "dna").rglob("*.md")
    ]
    return sorted(docs)


def test_ai_setup_contract_english_governance() -> None:
    """IgorArkhipov__ai-setup: English governance, every rule in upstream's English wording.

    - statuses draft/active/archived: dna/frontmatter.md:15
      ``| `status` | enum | `draft` / `active` / `archived` |`` (`enum` is not backticked).
    - delivery_statuses: dna/frontmatter.md:22, the `delivery_status` row.
    - decision_statuses: dna/frontmatter.md:23, the `decision_status` row. The
      `derived_from` row (line 21) has a head that is not an enumerated field.
    - doc_kinds governance, project: dna/governance.md:31 (the `doc_kind` row).
    - doc_functions canonical, index, template: dna/governance.md:32.
    - roots [dna/principles.md]: dna/governance.md:22 "The root document is `principles.md`"
      (the sentence, not the principles.md fallback: the result holds with has_principles off).
    - requires_derived_from: dna/governance.md:22 "must define `derived_from`".
    - forbids_cycles: dna/governance.md:23 "Cyclic dependencies are forbidden."
    - layers: no dna table has a Directory/Section + Layer header, so the built-in map holds.
    - declared_in: the three status enumerations come from dna/frontmatter.md, doc_kind and
      doc_function from dna/governance.md (frontmatter.md sorts first).
    """
    docs = _dna_docs("IgorArkhipov__ai-setup")
    contract = parse_contract(docs, has_principles=True)
    assert contract.present is True
    assert contract.source == DNA_SOURCES
    assert contract.statuses == STATUSES
    assert contract.delivery_statuses == DELIVERY_STATUSES
    assert contract.decision_statuses == DECISION_STATUSES
    assert contract.doc_kinds == ("governance", "project")
    assert contract.doc_functions == ("canonical", "index", "template")
    assert contract.roots == ("dna/principles.md",)
    assert contract.requires_derived_from is True
    assert contract.forbids_cycles is True
    assert parse_contract(docs, has_principles=False).roots == ("dna/principles.md",)
    assert {file for (field, _), file in contract.declared_in.items() if "status" in field} == {
        "dna/frontmatter.md"
    }
    assert {file for (field, _), file in contract.declared_in.items() if "doc_" in field} == {
        "dna/governance.md"
    }
    assert len(contract.declared_in) == 3 + 4 + 4 + 2 + 3

    layers = parse_layers(docs)
    assert layers == EMPTY_LAYERS
    assert effective_weights(layers) == BUILTIN_WEIGHTS


def test_code_converge_contract_russian_governance() -> None:
    """dapi__code-converge: the same tables, but the rules are written in Russian prose.

    - statuses, delivery_statuses, decision_statuses: dna/frontmatter.md:15, 22, 23 — the same
      row shapes as in English. Line 22 also carries `brief.md`, which is dotted and no value.
    - doc_kinds (14, in row order): dna/governance.md:31 ``| `doc_kind` | `governance`, …,
      `process` | Тип документа или артефакта |``.
    - doc_functions (10, incl. `convention`, which the starter lacks): dna/governance.md:32.
    - roots [dna/principles.md]: dna/governance.md:22 "Корневой документ — `principles.md`" —
      the mbank Russian root pattern; the principles.md purpose "Корневой документ dependency
      tree." names no file and yields nothing. Checked with has_principles off, so the
      fallback cannot be what supplies it.
    - requires_derived_from: dna/governance.md:22 "Для каждого `active` non-root документа
      `derived_from` обязательно." — the mbank `derived_from` + `обязател` form. No English
      "must define" occurs anywhere (asserted below).
    - forbids_cycles: dna/governance.md:23 "Циклические зависимости запрещены." — the mbank
      Russian cycle pattern; the English sentence does not occur (asserted below).
    - layers: no layer table, so the built-in map holds.
    """
    docs = _dna_docs("dapi__code-converge")
    contract = parse_contract(docs, has_principles=True)
    assert contract.present is True
    assert contract.source == DNA_SOURCES
    assert contract.statuses == STATUSES
    assert contract.delivery_statuses == DELIVERY_STATUSES
    assert contract.decision_statuses == DECISION_STATUSES
    assert contract.doc_kinds == (
        "governance",
        "project",
        "product",
        "domain",
        "prd",
        "use_case",
        "epic",
        "feature",
        "feature-support",
        "engineering",
        "ops",
        "adr",
        "prompt",
        "process",
    )
    assert contract.doc_functions == (
        "canonical",
        "index",
        "template",
        "derived",
        "reference",
        "convention",
        "roadmap",
        "decision_log",
        "subissue_registry",
        "risk_register",
    )
    assert contract.roots == ("dna/principles.md",)
    assert contract.requires_derived_from is True
    assert contract.forbids_cycles is True
    assert parse_contract(docs, has_principles=False).roots == ("dna/principles.md",)
    everything = "\n".join(text for _, text in docs).lower()
    assert "must define" not in everything
    assert "cyclic dependencies are forbidden" not in everything
    assert "root document is" not in everything
    assert contract.declared_in[("doc_function", "convention")] == "dna/governance.md"
    assert contract.declared_in[("delivery_status", "planned")] == "dna/frontmatter.md"
    assert len(contract.declared_in) == 3 + 4 + 4 + 14 + 10

    layers = parse_layers(docs)
    assert layers == EMPTY_LAYERS
    assert effective_weights(layers) == BUILTIN_WEIGHTS
