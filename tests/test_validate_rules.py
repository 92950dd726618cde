"""Each validation rule on its own: one test on the fixture bank with a snapshot of what it
finds, then the edges of its firing condition (spec 02 §7.2–§7.4; messages exact)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from mbank.model import Finding
from mbank.snapshot import Bank, Snapshot
from mbank.validate import findings
from mbank.validation import RULE_SEVERITY, RULES
from mbank.validation.contract_rules import (
    cycles_in_derived_from,
    missing_derived_from,
    unknown_enum_values,
)
from mbank.validation.declaration import no_contract, unknown_layer_values
from mbank.validation.references import scan_claims, unresolved_rule_references
from mbank.validation.structural import (
    broken_derived_from,
    dangling_index_entries,
    invalid_frontmatter,
    must_not_define_violated,
    ssot_conflicts,
    unregistered_doc,
)

GOVERNANCE = """---
title: Governance
---
# Governance

The root document is `principles.md`.
Every `active` non-root document must define `derived_from`.
Cyclic dependencies are forbidden.

| Field | Values |
|---|---|
| `doc_kind` | `domain` / `engineering` |
| `status` | `draft` / `active` |
"""


def write_bank(root: Path, files: dict[str, str | bytes]) -> Snapshot:
    """Write `files` under `root` and return the bank's snapshot."""
    for path, content in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return Bank(root).refresh()


def doc_text(front: str, body: str = "# Doc\n") -> str:
    """A document with the given frontmatter lines and body."""
    return f"---\n{front.strip()}\n---\n{body}"


def per_document(snapshot: Snapshot, rule: Any, *args: Any) -> list[Finding]:
    """A per-document rule run over every document in path order."""
    return [item for doc in snapshot.docs.values() for item in rule(doc, *args)]


def plain(items: list[Finding] | tuple[Finding, ...]) -> list[dict[str, Any]]:
    """Findings as plain data for snapshots."""
    return [msgspec.to_builtins(item) for item in items]


def test_the_twelve_rules_in_output_order_with_their_severities() -> None:
    assert list(RULE_SEVERITY.items()) == [
        ("invalid-frontmatter", "error"),
        ("broken-derived-from", "error"),
        ("missing-derived-from", "error"),
        ("cycle-in-derived-from", "error"),
        ("unregistered-doc", "warning"),
        ("unresolved-rule-reference", "warning"),
        ("unknown-enum-value", "warning"),
        ("ssot-conflict", "error"),
        ("must-not-define-violated", "error"),
        ("dangling-index-entry", "error"),
        ("unknown-layer-value", "warning"),
        ("no-contract", "warning"),
    ]
    assert len(RULES) == 12


# --- 1. invalid-frontmatter ------------------------------------------------------------------


def test_invalid_frontmatter_reports_each_unusable_header(
    fixture_plus: Path, snapshot: Any
) -> None:
    found = per_document(Bank(fixture_plus).refresh(), invalid_frontmatter)
    assert [item.path for item in found] == [
        "adr/ADR-003-duplicate-key.md",
        "broken/bad-yaml.md",
        "broken/latin1.md",
    ]
    assert plain(found) == snapshot


@pytest.mark.parametrize(
    ("content", "message", "line"),
    [
        (
            "---\ntitle: a\npurpose: x: y\n---\n",
            "YAML frontmatter does not parse (mapping values are not allowed in this context). "
            'Values were recovered leniently; quote any value containing ": ".',
            3,
        ),
        (
            "---\ntitle: a\ntitle: b\n---\n",
            'YAML frontmatter declares "title" more than once. Values were recovered leniently '
            "(the last one won); keep one.",
            3,
        ),
        (
            "---\nbody: " + "x" * 70_000 + "\n---\n",
            "YAML frontmatter is 70006 bytes, over the 65536-byte limit, so it was not parsed. "
            "Values were recovered leniently; move long text into the body.",
            1,
        ),
        (
            "---\na: &a [x, x, x, x, x, x, x, x, x, x]\n"
            "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n---\n",
            "YAML frontmatter expands aliases past the limit of 1000 nodes, so it was not parsed. "
            "Values were recovered leniently; write the values out instead of using anchors.",
            1,
        ),
        (
            "---\n- a\n- b\n---\n",
            "YAML frontmatter is not a mapping of keys to values. Values were recovered "
            'leniently; write one "key: value" per line.',
            1,
        ),
        (
            "---\ntitle: a\n",
            'The frontmatter opened by "---" on line 1 is never closed by a "---" line, so it '
            "was not read.",
            1,
        ),
        (
            b"---\ntitle: Caf\xe9\n---\n",
            "File is not UTF-8 text (invalid byte 0xe9 at offset 14), so nothing in it was "
            "read. Re-save it as UTF-8.",
            None,
        ),
        (
            b"---\ntitle: a\x00\n---\n",
            "File is not UTF-8 text (NUL byte at offset 12), so nothing in it was read. "
            "Re-save it as UTF-8.",
            None,
        ),
    ],
    ids=[
        "yaml",
        "duplicate-key",
        "too-large",
        "alias-limit",
        "not-a-mapping",
        "unclosed",
        "invalid-encoding",
        "nul",
    ],
)
def test_invalid_frontmatter_message_per_kind(
    tmp_path: Path, content: str | bytes, message: str, line: int | None
) -> None:
    bank = write_bank(tmp_path, {"x.md": content})
    assert per_document(bank, invalid_frontmatter) == [
        Finding("invalid-frontmatter", "error", "x.md", message, line)
    ]


def test_invalid_frontmatter_ignores_documents_without_or_with_empty_frontmatter(
    tmp_path: Path,
) -> None:
    bank = write_bank(tmp_path, {"a.md": "# No head\n", "b.md": "---\n---\n# Empty\n"})
    assert per_document(bank, invalid_frontmatter) == []


# --- 2. broken-derived-from ------------------------------------------------------------------


def test_broken_derived_from_reports_edges_to_missing_files(
    fixture_plus: Path, snapshot: Any
) -> None:
    bank = Bank(fixture_plus).refresh()
    found = per_document(bank, broken_derived_from, bank.docs)
    assert [(item.path, item.message) for item in found] == [
        (
            "engineering/architecture.md",
            "derived_from points at a file that does not exist: ../missing/nowhere.md",
        )
    ]
    assert plain(found) == snapshot


def test_broken_derived_from_never_fires_on_external_url_or_empty_edges(tmp_path: Path) -> None:
    bank = write_bank(
        tmp_path,
        {
            "a/x.md": doc_text(
                'derived_from:\n  - ../../elsewhere/y.md\n  - https://example.com/i/1\n  - ""\n'
                "  - '#only-anchor'\n  - ../a/x.md"
            ),
            "b.md": doc_text("derived_from: [nope.md, nope.md]"),
        },
    )
    assert [item.message for item in per_document(bank, broken_derived_from, bank.docs)] == [
        "derived_from points at a file that does not exist: nope.md",
        "derived_from points at a file that does not exist: nope.md",
    ]


# --- 3. missing-derived-from -----------------------------------------------------------------


def test_missing_derived_from_reports_active_unanchored_documents(
    fixture_plus: Path, snapshot: Any
) -> None:
    bank = Bank(fixture_plus).refresh()
    found = per_document(bank, missing_derived_from, bank.contract)
    # dna/principles.md is the root; engineering/logging.md's scalar derived_from is an edge
    assert [item.path for item in found] == ["domain/glossary.md"]
    assert plain(found) == snapshot


def test_missing_derived_from_spares_roots_drafts_and_banks_that_do_not_require_it(
    tmp_path: Path,
) -> None:
    files: dict[str, str | bytes] = {
        "dna/governance.md": GOVERNANCE,
        "dna/principles.md": doc_text("status: active"),
        "draft.md": doc_text("status: draft"),
        "active.md": doc_text("status: active"),
        "external.md": doc_text("status: active\nderived_from: [../../x.md]"),
        "empty.md": doc_text("status: active\nderived_from: []"),
    }
    bank = write_bank(tmp_path / "with", files)
    assert [item.path for item in per_document(bank, missing_derived_from, bank.contract)] == [
        "active.md",
        "empty.md",
    ]
    files["dna/governance.md"] = GOVERNANCE.replace("must define", "should name")
    bank = write_bank(tmp_path / "without", files)
    assert per_document(bank, missing_derived_from, bank.contract) == []


# --- 4. cycle-in-derived-from ----------------------------------------------------------------


def test_cycle_in_derived_from_reports_the_loop_on_the_closing_node(
    fixture_plus: Path, snapshot: Any
) -> None:
    bank = Bank(fixture_plus).refresh()
    scan = cycles_in_derived_from(bank.docs, bank.contract)
    assert [(item.path, item.message) for item in scan.findings] == [
        (
            "ops/config.md",
            "Cyclic derived_from: ops/README.md -> ops/config.md -> ops/README.md.",
        )
    ]
    assert scan.cyclic == {"ops/README.md", "ops/config.md"}
    assert plain(scan.findings) == snapshot


def test_cycle_in_derived_from_self_edge_and_repeated_loops(tmp_path: Path) -> None:
    bank = write_bank(
        tmp_path,
        {
            "dna/governance.md": GOVERNANCE,
            "a.md": doc_text("derived_from: [b.md, c.md]"),
            "b.md": doc_text("derived_from: [a.md, a.md]"),
            "c.md": doc_text("derived_from: [b.md]"),
            "self.md": doc_text("derived_from: [self.md]"),
        },
    )
    scan = cycles_in_derived_from(bank.docs, bank.contract)
    assert [(item.path, item.message) for item in scan.findings] == [
        ("b.md", "Cyclic derived_from: a.md -> b.md -> a.md."),
        ("self.md", "Cyclic derived_from: self.md -> self.md."),
    ]
    # c.md reaches the loop only through a finished node: no second report, but it is cyclic
    assert scan.cyclic == {"a.md", "b.md", "c.md", "self.md"}


def test_cycle_in_derived_from_walks_a_deep_chain_without_recursion(tmp_path: Path) -> None:
    depth = 1500  # deeper than the default recursion limit
    files: dict[str, str | bytes] = {"dna/governance.md": GOVERNANCE}
    for index in range(depth):
        files[f"n{index:05d}.md"] = doc_text(f"derived_from: [n{(index + 1) % depth:05d}.md]")
    bank = write_bank(tmp_path, files)
    scan = cycles_in_derived_from(bank.docs, bank.contract)
    assert len(scan.findings) == 1
    assert scan.findings[0].path == f"n{depth - 1:05d}.md"
    assert scan.findings[0].message.startswith("Cyclic derived_from: n00000.md -> n00001.md")
    assert len(scan.cyclic) == depth


def test_cycle_in_derived_from_only_where_dna_forbids_cycles(tmp_path: Path) -> None:
    bank = write_bank(
        tmp_path,
        {
            "dna/governance.md": GOVERNANCE.replace("Cyclic dependencies are forbidden.", ""),
            "a.md": doc_text("derived_from: [a.md]"),
        },
    )
    assert cycles_in_derived_from(bank.docs, bank.contract).findings == ()


# --- 5. unregistered-doc ---------------------------------------------------------------------


def test_unregistered_doc_reports_documents_no_index_links(
    fixture_plus: Path, snapshot: Any
) -> None:
    found = per_document(Bank(fixture_plus).refresh(), unregistered_doc)
    assert [item.path for item in found] == ["orphan.md"]
    assert plain(found) == snapshot


def test_unregistered_doc_spares_inbox_notes_indexes_and_readmes(tmp_path: Path) -> None:
    bank = write_bank(
        tmp_path,
        {
            "_inbox/note.md": doc_text("title: Note"),
            "list.md": doc_text("doc_function: index"),
            "sub/README.md": "# Sub\n",
            "alone.md": "# Alone\n",
            "linked.md": "# Linked\n",
            "self.md": doc_text("doc_function: index", "[me](self.md) [l](linked.md)\n"),
        },
    )
    assert [item.path for item in per_document(bank, unregistered_doc)] == ["alone.md"]


# --- 6. unresolved-rule-reference ------------------------------------------------------------


def test_unresolved_rule_reference_reports_claims_that_resolve_nowhere(
    fixture_plus: Path, snapshot: Any
) -> None:
    bank = Bank(fixture_plus).refresh()
    names: dict[str, tuple[str, ...]] = {}
    for path in bank.docs:
        names[path.rsplit("/", 1)[-1]] = (*names.get(path.rsplit("/", 1)[-1], ()), path)
    found = [
        item
        for doc in bank.docs.values()
        for item in unresolved_rule_references(
            doc, scan_claims(bank.raw[doc.path]), bank.docs, names, frozenset()
        )
    ]
    assert [(item.path, item.line, item.message) for item in found] == [
        (
            "features/FT-001/brief.md",
            30,
            'Claims "Escalation of jobs stuck at level two" is defined in escalation-ladder.md, '
            "but that path does not resolve from this document (tried "
            "features/FT-001/escalation-ladder.md).",
        )
    ]
    assert plain(found) == snapshot


def test_scan_claims_finds_every_claim_per_line_frontmatter_and_fences_included() -> None:
    text = (
        "---\npurpose: The `budget` rules are defined in budget.md here\n---\n"
        "```\nRetries are governed by [the policy](../ops/retry.md#top) too.\n```\n"
        "Scores are described in a.md; limits are SPECIFIED BY `b/c.md`.\n"
        "Owned by nobody: x.md.\n"
        'The link text is defined in [domain/rules.md](../x/y.md "t").\n'
    )
    assert [(claim.line, claim.phrase, claim.raw) for claim in scan_claims(text)] == [
        (2, "The budget rules", "budget.md"),
        (5, "Retries", "../ops/retry.md"),
        (7, "Scores", "a.md"),
        (7, "limits", "b/c.md"),
        (9, "The link text", "../x/y.md"),
    ]


def test_scan_claims_ignores_text_without_a_verb_and_crlf_endings() -> None:
    assert scan_claims("Nothing to see.\nDefined nowhere.\n") == ()
    claims = scan_claims("line one\r\nRules are defined in r.md\r\n")
    assert [(claim.line, claim.raw) for claim in claims] == [(2, "r.md")]


def rule_reference_messages(root: Path, files: dict[str, str | bytes]) -> list[str]:
    bank = write_bank(root, files)
    names: dict[str, tuple[str, ...]] = {}
    for path in bank.docs:
        name = path.rsplit("/", 1)[-1]
        names[name] = (*names.get(name, ()), path)
    return [
        f"{item.path}:{item.line} {item.message}"
        for doc in bank.docs.values()
        for item in unresolved_rule_references(
            doc, scan_claims(bank.raw[doc.path]), bank.docs, names, frozenset({"shipped.md"})
        )
    ]


def test_unresolved_rule_reference_resolution_and_skip_rules(tmp_path: Path) -> None:
    found = rule_reference_messages(
        tmp_path,
        {
            "a/doc.md": (
                "Alpha rules are defined in twice.md.\n"  # two carriers: prose about shape
                "Beta rules are defined in tpl.md.\n"  # one carrier, a template
                "Gamma rules are defined in shipped.md.\n"  # no carrier, a shipped template
                "Delta rules are defined in once.md.\n"  # one carrier: did you mean
                "Epsilon rules are defined in ../x/twice.md.\n"  # a path: never forgiven
                "Zeta rules are defined in ../../outside.md.\n"  # external: ignored
                "Eta rules are defined in doc.md.\n"  # the document itself
                "Theta rules are defined in [text](../b/once.md).\n"  # resolves
                "Iota rules are specified by nothing.md.\n"  # no carrier at all
            ),
            "b/once.md": "# Once\n",
            "b/twice.md": "# Twice\n",
            "c/twice.md": "# Twice\n",
            "t/tpl.md": doc_text("doc_function: template"),
            "t/other.md": doc_text("doc_function: template", "Kappa is defined in gone.md.\n"),
        },
    )
    assert found == [
        'a/doc.md:4 Claims "Delta rules" is defined in once.md, but that path does not resolve '
        "from this document (tried a/once.md). Did you mean b/once.md?",
        'a/doc.md:5 Claims "Epsilon rules" is defined in ../x/twice.md, but that path does not '
        "resolve from this document (tried x/twice.md).",
        'a/doc.md:9 Claims "Iota rules" is defined in nothing.md, but that path does not '
        "resolve from this document (tried a/nothing.md).",
    ]


def test_unresolved_rule_reference_forgives_bare_names_of_shipped_templates(
    tmp_path: Path,
) -> None:
    bank = write_bank(
        tmp_path,
        {
            "a.md": "The review is defined in ADR-ID.md and the gate in session-handoff.md.\n"
            "The policy is defined in testing-policy.md.\n",
        },
    )
    assert [
        (item.line, item.message.split(",")[0])
        for item in findings(bank)
        if item.rule == "unresolved-rule-reference"
    ] == [(2, 'Claims "The policy" is defined in testing-policy.md')]


# --- 7. unknown-enum-value -------------------------------------------------------------------


def test_unknown_enum_value_reports_undeclared_values(fixture_plus: Path, snapshot: Any) -> None:
    bank = Bank(fixture_plus).refresh()
    found = per_document(bank, unknown_enum_values, bank.contract)
    assert [(item.path, item.message) for item in found] == [
        (
            "adr/ADR-002-cache-layer.md",
            'decision_status: "pending" is not among the values declared in dna/ '
            "(accepted, proposed, rejected, superseded).",
        )
    ]
    assert plain(found) == snapshot


def test_unknown_enum_value_checks_fields_in_order_and_only_declared_sets(
    tmp_path: Path,
) -> None:
    bank = write_bank(
        tmp_path,
        {
            "dna/governance.md": GOVERNANCE,
            "x.md": doc_text(
                "doc_kind: guide\ndoc_function: whatever\nstatus: Draft\ndelivery_status: odd"
            ),
        },
    )
    assert [item.message for item in per_document(bank, unknown_enum_values, bank.contract)] == [
        'doc_kind: "guide" is not among the values declared in dna/ (domain, engineering).',
        'status: "Draft" is not among the values declared in dna/ (active, draft).',
    ]


# --- 8. ssot-conflict ------------------------------------------------------------------------


def test_ssot_conflict_reports_keys_with_several_owners(fixture_plus: Path, snapshot: Any) -> None:
    found = [item for item, _key in ssot_conflicts(Bank(fixture_plus).refresh().owners)]
    assert [(item.path, item.message) for item in found] == [
        (
            "conflict.md",
            'canonical_for "filter_thresholds" is claimed by 2 documents: '
            "conflict.md, domain/rules.md.",
        )
    ]
    assert plain(found) == snapshot


def test_ssot_conflict_counts_every_owner_whatever_its_status(tmp_path: Path) -> None:
    bank = write_bank(
        tmp_path,
        {
            "z.md": doc_text("status: archived\ncanonical_for: [k2, k1]"),
            "m.md": doc_text("status: draft\ncanonical_for: k1"),
            "a.md": doc_text("canonical_for: [k1, k1]"),
        },
    )
    assert [(key, item.path, item.message) for item, key in ssot_conflicts(bank.owners)] == [
        ("k1", "a.md", 'canonical_for "k1" is claimed by 3 documents: a.md, m.md, z.md.')
    ]


# --- 9. must-not-define-violated -------------------------------------------------------------


def test_must_not_define_violated_reports_self_contradicting_owners(
    fixture_plus: Path, snapshot: Any
) -> None:
    found = per_document(Bank(fixture_plus).refresh(), must_not_define_violated)
    assert [(item.path, item.message) for item in found] == [
        (
            "domain/pricing.md",
            'Document owns "pricing_rules" while its own must_not_define forbids it.',
        )
    ]
    assert plain(found) == snapshot


# --- 10. dangling-index-entry ----------------------------------------------------------------


def test_dangling_index_entry_reports_index_links_to_missing_files(
    fixture_plus: Path, snapshot: Any
) -> None:
    bank = Bank(fixture_plus).refresh()
    found = per_document(bank, dangling_index_entries, bank.docs)
    # the URL link and the link inside the fenced block are not considered
    assert [(item.path, item.line, item.message) for item in found] == [
        ("domain/README.md", 20, "Index links to a file that does not exist: retired.md")
    ]
    assert plain(found) == snapshot


def test_dangling_index_entry_only_in_indexes_and_never_for_external_links(
    tmp_path: Path,
) -> None:
    bank = write_bank(
        tmp_path,
        {
            "notes.md": "[gone](gone.md)\n",
            "list.md": doc_text(
                "doc_function: index", "[x](../../out.md) [y](gone.md#part) [z](list.md)\n"
            ),
        },
    )
    assert [
        (item.path, item.line, item.message)
        for item in per_document(bank, dangling_index_entries, bank.docs)
    ] == [("list.md", 4, "Index links to a file that does not exist: gone.md#part")]


# --- 11. unknown-layer-value -----------------------------------------------------------------


def test_unknown_layer_value_reports_rows_naming_unknown_layers(
    fixture_plus: Path, snapshot: Any
) -> None:
    found = unknown_layer_values(Bank(fixture_plus).refresh().layers)
    assert [(item.path, item.message) for item in found] == [
        (
            "dna/governance.md",
            '"scratch" is declared as layer "sandbox", which is not one of dna, knowledge, '
            'decision, delivery, flow, inbox, other. The row is ignored and "scratch" keeps '
            "its default layer.",
        )
    ]
    assert plain(found) == snapshot


# --- 12. no-contract -------------------------------------------------------------------------


def test_no_contract_reports_a_bank_without_dna(fixture_bank: Path, snapshot: Any) -> None:
    assert no_contract(Bank(fixture_bank).refresh().contract) == ()
    found = no_contract(Bank(fixture_bank / "domain").refresh().contract)
    assert [(item.path, item.message) for item in found] == [
        (
            "dna/",
            "This bank has no dna/ directory, so contract-dependent rules (missing "
            "derived_from, cycles, declared values) are not applied.",
        )
    ]
    assert plain(found) == snapshot


def test_degraded_mode_applies_no_contract_rule(fixture_plus: Path) -> None:
    bank = Bank(fixture_plus / "domain").refresh()
    assert not bank.contract.present
    assert per_document(bank, missing_derived_from, bank.contract) == []
    assert per_document(bank, unknown_enum_values, bank.contract) == []
    assert cycles_in_derived_from(bank.docs, bank.contract).findings == ()
