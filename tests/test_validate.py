"""`bank_validate` on the fixture banks (spec 02 §7, 07 §2.3 and §3.10): the exact findings of
the base and the extended fixture, the `domain/`-rooted degraded banks, the filters, the sort
order and the `memorybank://health` data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mbank.health import health
from mbank.model import RefusalError
from mbank.snapshot import Bank
from mbank.validate import findings, format_validation, normalise_scope, validate
from mbank.validation import RULE_ORDER


def result_of(root: Path, **filters: Any) -> dict[str, Any]:
    return validate(Bank(root).refresh(), **filters)


def rows(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(item["severity"], item["rule"], item["path"]) for item in result["findings"]]


def test_base_fixture_gives_exactly_the_five_findings(fixture_bank: Path, snapshot: Any) -> None:
    result = result_of(fixture_bank)
    assert rows(result) == [
        ("error", "invalid-frontmatter", "broken/bad-yaml.md"),
        ("error", "broken-derived-from", "engineering/architecture.md"),
        ("warning", "unregistered-doc", "orphan.md"),
        ("warning", "unresolved-rule-reference", "features/FT-001/brief.md"),
        ("error", "ssot-conflict", "conflict.md"),
    ]
    messages = [item["message"] for item in result["findings"]]
    assert "../missing/nowhere.md" in messages[1]
    assert "escalation-ladder.md" in messages[3]
    assert "filter_thresholds" in messages[4]
    assert "conflict.md, domain/rules.md" in messages[4]
    assert "outside-bank" not in json.dumps(result)
    assert (result["total"], result["errors"], result["warnings"]) == (5, 3, 2)
    assert result == snapshot


def test_extended_fixture_gives_exactly_the_thirteen_findings(
    fixture_plus: Path, snapshot: Any
) -> None:
    result = result_of(fixture_plus)
    assert [
        (*row, item.get("line") is not None)
        for row, item in zip(rows(result), result["findings"], strict=True)
    ] == [
        ("error", "invalid-frontmatter", "adr/ADR-003-duplicate-key.md", True),
        ("error", "invalid-frontmatter", "broken/bad-yaml.md", True),
        ("error", "invalid-frontmatter", "broken/latin1.md", False),
        ("error", "broken-derived-from", "engineering/architecture.md", False),
        ("error", "missing-derived-from", "domain/glossary.md", False),
        ("error", "cycle-in-derived-from", "ops/config.md", False),
        ("warning", "unregistered-doc", "orphan.md", False),
        ("warning", "unresolved-rule-reference", "features/FT-001/brief.md", True),
        ("warning", "unknown-enum-value", "adr/ADR-002-cache-layer.md", False),
        ("error", "ssot-conflict", "conflict.md", False),
        ("error", "must-not-define-violated", "domain/pricing.md", False),
        ("error", "dangling-index-entry", "domain/README.md", True),
        ("warning", "unknown-layer-value", "dna/governance.md", False),
    ]
    expected_fragments = [
        'declares "title" more than once',
        'quote any value containing ": "',
        "File is not UTF-8 text",
        "../missing/nowhere.md",
        "declare derived_from",
        "ops/README.md -> ops/config.md -> ops/README.md",
        "",
        "escalation-ladder.md",
        'decision_status: "pending"',
        "conflict.md, domain/rules.md",
        "pricing_rules",
        "retired.md",
        '"sandbox"',
    ]
    for item, fragment in zip(result["findings"], expected_fragments, strict=True):
        assert fragment in item["message"]
    assert "(accepted, proposed, rejected, superseded)" in result["findings"][8]["message"]
    assert '"scratch"' in result["findings"][12]["message"]
    assert (result["total"], result["errors"], result["warnings"]) == (13, 9, 4)
    assert result["byRule"] == {
        "invalid-frontmatter": 3,
        "broken-derived-from": 1,
        "missing-derived-from": 1,
        "cycle-in-derived-from": 1,
        "unregistered-doc": 1,
        "unresolved-rule-reference": 1,
        "unknown-enum-value": 1,
        "ssot-conflict": 1,
        "must-not-define-violated": 1,
        "dangling-index-entry": 1,
        "unknown-layer-value": 1,
    }
    text = json.dumps(result)
    for never in ("no-contract", "outside-bank", "example.com", "example.md", "logging.md"):
        assert never not in text
    assert "defined in [domain/rules.md]" not in text
    assert result == snapshot


def test_a_bank_rooted_at_the_base_domain_gives_only_no_contract(fixture_bank: Path) -> None:
    result = result_of(fixture_bank / "domain")
    assert rows(result) == [("warning", "no-contract", "dna/")]


def test_a_bank_rooted_at_the_extended_domain_gives_three_findings(
    fixture_plus: Path, snapshot: Any
) -> None:
    result = result_of(fixture_plus / "domain")
    assert rows(result) == [
        ("error", "must-not-define-violated", "pricing.md"),
        ("error", "dangling-index-entry", "README.md"),
        ("warning", "no-contract", "dna/"),
    ]
    assert "retired.md" in result["findings"][1]["message"]
    assert "broken-derived-from" not in json.dumps(result)
    assert result == snapshot


def test_scope_keeps_findings_under_the_directory(fixture_bank: Path) -> None:
    result = result_of(fixture_bank, scope="engineering")
    assert rows(result) == [("error", "broken-derived-from", "engineering/architecture.md")]
    assert result["total"] == 1


@pytest.mark.parametrize("given", ["engineering", "./engineering", "/engineering", "engineering/"])
def test_scope_is_normalised_like_every_other_tool(fixture_bank: Path, given: str) -> None:
    assert result_of(fixture_bank, scope=given)["total"] == 1


def test_scope_equal_to_a_document_path_keeps_that_document(fixture_bank: Path) -> None:
    assert rows(result_of(fixture_bank, scope="orphan.md")) == [
        ("warning", "unregistered-doc", "orphan.md")
    ]


def test_scope_is_a_directory_prefix_not_a_string_prefix(fixture_bank: Path) -> None:
    assert result_of(fixture_bank, scope="engineer")["total"] == 0


def test_scope_filters_ssot_conflict_by_any_owner(fixture_bank: Path) -> None:
    # conflict.md is the finding's path; domain/rules.md is the other owner
    assert rows(result_of(fixture_bank, scope="domain")) == [
        ("error", "ssot-conflict", "conflict.md")
    ]


def test_scope_filters_index_layer_and_cycle_findings_by_their_own_path(
    fixture_plus: Path,
) -> None:
    assert [row[1] for row in rows(result_of(fixture_plus, scope="domain"))] == [
        "missing-derived-from",
        "ssot-conflict",
        "must-not-define-violated",
        "dangling-index-entry",
    ]
    assert [row[1] for row in rows(result_of(fixture_plus, scope="dna"))] == ["unknown-layer-value"]
    assert [row[2] for row in rows(result_of(fixture_plus, scope="ops"))] == ["ops/config.md"]


def test_no_contract_is_never_scope_filtered(fixture_bank: Path) -> None:
    assert rows(result_of(fixture_bank / "domain", scope="nowhere")) == [
        ("warning", "no-contract", "dna/")
    ]


def test_rule_filter_keeps_one_rule(fixture_bank: Path) -> None:
    result = result_of(fixture_bank, rule="ssot-conflict")
    assert result["total"] == 1
    assert result["byRule"] == {"ssot-conflict": 1}


def test_severity_filter_keeps_one_severity(fixture_bank: Path) -> None:
    result = result_of(fixture_bank, severity="warning")
    assert (result["total"], result["errors"], result["warnings"]) == (2, 0, 2)
    assert result["byRule"] == {"unregistered-doc": 1, "unresolved-rule-reference": 1}


def test_filters_combine_and_counts_follow_them(fixture_plus: Path) -> None:
    result = result_of(fixture_plus, scope="broken", severity="error", rule="invalid-frontmatter")
    assert [row[2] for row in rows(result)] == ["broken/bad-yaml.md", "broken/latin1.md"]
    assert result["byRule"] == {"invalid-frontmatter": 2}
    assert result_of(fixture_plus, severity="warning", rule="ssot-conflict")["total"] == 0


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"rule": "no-such-rule"}, "Unknown rule 'no-such-rule'; use one of: invalid-frontmatter"),
        ({"severity": "fatal"}, "Unknown severity 'fatal'; use one of: error, warning."),
    ],
)
def test_unknown_filter_values_are_refused(
    fixture_bank: Path, filters: dict[str, str], message: str
) -> None:
    with pytest.raises(RefusalError) as refused:
        result_of(fixture_bank, **filters)
    assert refused.value.refusal.message.startswith(message)


def test_findings_sort_by_rule_then_path_then_line(fixture_plus: Path) -> None:
    items = findings(Bank(fixture_plus).refresh())
    keys = [(RULE_ORDER[item.rule], item.path, item.line or 0) for item in items]
    assert keys == sorted(keys)


def test_by_rule_lists_rules_in_rule_order_without_zero_counts(fixture_plus: Path) -> None:
    by_rule = result_of(fixture_plus)["byRule"]
    assert list(by_rule) == sorted(by_rule, key=RULE_ORDER.__getitem__)
    assert all(by_rule.values())


def test_a_finding_without_a_line_has_no_line_key(fixture_bank: Path) -> None:
    items = result_of(fixture_bank)["findings"]
    assert list(items[1]) == ["severity", "rule", "path", "message"]
    assert list(items[0]) == ["severity", "rule", "path", "message", "line"]


def test_validation_reads_and_writes_nothing(fixture_plus: Path, assert_unchanged: Any) -> None:
    with assert_unchanged(fixture_plus):
        result_of(fixture_plus)
    assert not (fixture_plus / ".mbank").exists()


def test_an_empty_or_missing_root_validates_to_no_contract_only(tmp_path: Path) -> None:
    assert rows(result_of(tmp_path / "missing")) == [("warning", "no-contract", "dna/")]


def test_normalise_scope_strips_prefixes_and_treats_empty_as_whole_bank() -> None:
    assert normalise_scope("./a/b/") == "a/b"
    assert normalise_scope("/a") == "a"
    assert normalise_scope("./") is None
    assert normalise_scope(None) is None


def test_health_is_a_full_validation_with_document_and_contract_counts(
    fixture_bank: Path, snapshot: Any
) -> None:
    data = health(Bank(fixture_bank).refresh())
    assert data["documents"] == 17
    assert data["byRule"]["broken-derived-from"] == 1
    assert data["contract"] == [
        "dna/README.md",
        "dna/frontmatter.md",
        "dna/governance.md",
        "dna/principles.md",
    ]
    data["root"] = "<ROOT>"
    assert data == snapshot


def test_health_of_the_extended_and_a_degraded_bank(fixture_plus: Path) -> None:
    assert health(Bank(fixture_plus).refresh())["documents"] == 25
    degraded = health(Bank(fixture_plus / "domain").refresh())
    assert degraded["contract"] is None
    assert degraded["byRule"]["no-contract"] == 1


def test_human_output_lists_findings_then_totals_by_count(
    fixture_plus: Path, snapshot: Any
) -> None:
    text = format_validation(result_of(fixture_plus))
    lines = text.splitlines()
    assert lines[0] == "ERROR   invalid-frontmatter      adr/ADR-003-duplicate-key.md:5"
    assert lines[1].startswith("        YAML frontmatter declares")
    assert lines[26] == ""
    assert lines[27] == "total: 13"
    assert lines[28] == "  errors  warnings  rule"
    assert lines[29] == "       3         0  invalid-frontmatter"
    assert lines[30] == "       1         0  broken-derived-from"
    assert text == snapshot


def test_human_summary_prints_only_the_totals(fixture_bank: Path) -> None:
    assert format_validation(result_of(fixture_bank), summary=True) == (
        "total: 5\n"
        "  errors  warnings  rule\n"
        "       1         0  invalid-frontmatter\n"
        "       1         0  broken-derived-from\n"
        "       0         1  unregistered-doc\n"
        "       0         1  unresolved-rule-reference\n"
        "       1         0  ssot-conflict\n"
    )


def test_human_output_of_a_clean_result_is_the_total_alone(fixture_bank: Path) -> None:
    assert format_validation(result_of(fixture_bank, scope="adr")) == "total: 0\n"
