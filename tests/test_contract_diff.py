"""`bank_contract_diff` (spec 04 §2.19, 01 §9.1 `declared_in`, 07 §3.21): this bank's contract
against another bank's or the starter's — what differs, what would become legal, which file to
refresh."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from document_writes import normalise
from fixture_banks import TODAY

from mbank import shipped_files
from mbank.contract_diff import (
    STARTER_ROOT,
    compare_contracts,
    contract_diff,
    dna_snapshot,
    format_contract_diff,
    starter_snapshot,
)
from mbank.model import RefusalError
from mbank.snapshot import Bank, Snapshot

FIELDS = ["doc_kind", "doc_function", "status", "delivery_status", "decision_status"]

OLD_GOVERNANCE = """\
---
title: Governance
doc_kind: governance
doc_function: canonical
purpose: The rules of this older bank.
derived_from:
  - principles.md
status: active
---
# Governance

| Field | Values | Purpose |
|---|---|---|
| `doc_kind` | `governance`, `project`, `product`, `domain`, `prd`, `use_case`, `feature`, \
`engineering`, `ops`, `adr` | What a document is about. |
| `doc_function` | `canonical`, `index`, `template` | What a document does. |

The root document is `principles.md`.
Every `active` non-root document must define `derived_from`.
Cyclic dependencies are forbidden.
"""

OLD_FRONTMATTER = """\
---
title: Frontmatter
doc_kind: governance
doc_function: canonical
purpose: The fields of this older bank.
derived_from:
  - governance.md
status: active
---
# Frontmatter

| Field | Values |
|---|---|
| `status` | `draft` / `active` / `archived` |
| `delivery_status` | `planned`, `in_progress`, `done`, `cancelled` |
| `decision_status` | `proposed`, `accepted`, `superseded`, `rejected` |
"""

PRINCIPLES = """\
---
title: Principles
doc_kind: governance
doc_function: canonical
purpose: Why this bank exists.
status: active
---
# Principles
"""


def document(kind: str, function: str = "canonical", status: str = "active") -> str:
    return (
        f"---\ntitle: A {kind} document\ndoc_kind: {kind}\ndoc_function: {function}\n"
        f"purpose: Uses the kind {kind}.\nstatus: {status}\n---\n# A {kind} document\n"
    )


def write_bank(root: Path, files: Mapping[str, str]) -> Path:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def old_bank(root: Path) -> Path:
    """An older governance (10 doc_kinds, 3 doc_functions) whose documents use newer values."""
    return write_bank(
        root,
        {
            "dna/principles.md": PRINCIPLES,
            "dna/governance.md": OLD_GOVERNANCE,
            "dna/frontmatter.md": OLD_FRONTMATTER,
            "features/FT-001/runtime-surfaces.md": document("feature-support", "reference"),
            "features/FT-002/runtime-surfaces.md": document("feature-support", "reference"),
            "epics/EP-001/charter.md": document("epic"),
            "epics/EP-001/roadmap.md": document("epic", "roadmap"),
            "epics/EP-002/charter.md": document("epic"),
            "prompts/PROMPT-1-review.md": document("prompt"),
            "processes/PROCESS-1-card.md": document("process"),
            "features/FT-001/plan.md": document("feature", "derived"),
            "features/FT-002/plan.md": document("feature", "derived"),
            "notes/whitepaper.md": document("whitepaper", "essay"),
        },
    )


def snapshot_of(root: Path) -> Snapshot:
    return Bank(root).refresh()


def seeded_bank(root: Path) -> Path:
    return write_bank(root, shipped_files.seed_files("ebook_parser", TODAY))


# --------------------------------------------------------------------------------------------
# A seeded bank against the starter
# --------------------------------------------------------------------------------------------


def test_a_seeded_bank_matches_the_starter_in_everything(tmp_path: Path, snapshot: Any) -> None:
    root = seeded_bank(tmp_path / "bank")
    result = contract_diff(snapshot_of(root))
    for field in FIELDS:
        assert result["enums"][field]["onlyHere"] == []
        assert result["enums"][field]["onlyThere"] == []
    assert result["rules"]["roots"] == {
        "onlyHere": [],
        "onlyThere": [],
        "common": ["dna/principles.md"],
    }
    assert result["layers"]["onlyHere"] == result["layers"]["onlyThere"] == []
    assert result["layers"]["differ"] == [] and len(result["layers"]["common"]) == 14
    assert result["legalisable"] == [] and result["byFile"] == []
    assert result["recommendation"] is None
    assert result["there"] == {
        "root": "starter",
        "present": True,
        "source": sorted(p for p in shipped_files.seed_files("x", TODAY) if p.startswith("dna/")),
    }
    assert normalise(result, root) == snapshot


def test_the_result_keys_come_in_the_spec_order(tmp_path: Path) -> None:
    result = contract_diff(snapshot_of(seeded_bank(tmp_path / "bank")))
    assert list(result) == [
        "here",
        "there",
        "enums",
        "rules",
        "layers",
        "legalisable",
        "byFile",
        "recommendation",
    ]
    assert list(result["enums"]) == FIELDS
    assert list(result["enums"]["doc_kind"]) == ["onlyHere", "onlyThere", "common"]
    assert list(result["rules"]) == ["requiresDerivedFrom", "forbidsCycles", "roots"]
    assert list(result["layers"]) == ["onlyHere", "onlyThere", "differ", "common"]
    assert list(result["here"]) == ["root", "present", "source"]


def test_the_starter_is_the_default_and_a_blank_other_means_it_too(tmp_path: Path) -> None:
    snapshot = snapshot_of(seeded_bank(tmp_path / "bank"))
    assert contract_diff(snapshot) == contract_diff(snapshot, "  ") == contract_diff(snapshot, None)
    assert contract_diff(snapshot)["there"]["root"] == STARTER_ROOT


def test_the_starter_snapshot_is_the_seeded_set() -> None:
    starter = starter_snapshot()
    assert sorted(starter.docs) == sorted(shipped_files.seed_files("x", TODAY))
    assert starter.contract.present and len(starter.contract.doc_kinds) == 14


# --------------------------------------------------------------------------------------------
# An older governance against the starter
# --------------------------------------------------------------------------------------------


def test_an_older_governance_lists_what_only_the_starter_permits(tmp_path: Path) -> None:
    result = contract_diff(snapshot_of(old_bank(tmp_path / "bank")))
    assert result["enums"]["doc_kind"]["onlyThere"] == [
        "epic",
        "feature-support",
        "process",
        "prompt",
    ]
    assert result["enums"]["doc_function"]["onlyThere"] == [
        "decision_log",
        "derived",
        "reference",
        "risk_register",
        "roadmap",
        "subissue_registry",
    ]
    assert result["enums"]["doc_kind"]["common"] == sorted(
        [
            *("governance", "project", "product", "domain", "prd", "use_case", "feature"),
            *("engineering", "ops", "adr"),
        ]
    )
    assert result["enums"]["status"] == {
        "onlyHere": [],
        "onlyThere": [],
        "common": ["active", "archived", "draft"],
    }


def test_legalisable_counts_the_documents_per_value(tmp_path: Path, snapshot: Any) -> None:
    root = old_bank(tmp_path / "bank")
    result = contract_diff(snapshot_of(root))
    assert [(e["field"], e["value"], e["documents"]) for e in result["legalisable"]] == [
        ("doc_kind", "epic", 3),
        ("doc_function", "derived", 2),
        ("doc_function", "reference", 2),
        ("doc_kind", "feature-support", 2),
        ("doc_function", "roadmap", 1),
        ("doc_kind", "process", 1),
        ("doc_kind", "prompt", 1),
    ]
    epic = result["legalisable"][0]
    assert epic == {
        "field": "doc_kind",
        "value": "epic",
        "documents": 3,
        "paths": ["epics/EP-001/charter.md", "epics/EP-001/roadmap.md", "epics/EP-002/charter.md"],
        "declaredIn": "dna/governance.md",
    }
    assert normalise(result, root) == snapshot


def test_by_file_names_governance_first_and_counts_distinct_documents(tmp_path: Path) -> None:
    result = contract_diff(snapshot_of(old_bank(tmp_path / "bank")))
    # epics/EP-001/roadmap.md is legalised by two values of the same file: counted once
    assert result["byFile"] == [{"file": "dna/governance.md", "values": 7, "documents": 9}]
    assert result["recommendation"] == (
        "Refreshing dna/governance.md from starter would legalise 9 documents."
    )


def test_invented_values_permitted_nowhere_are_not_legalisable(tmp_path: Path) -> None:
    result = contract_diff(snapshot_of(old_bank(tmp_path / "bank")))
    values = {entry["value"] for entry in result["legalisable"]}
    assert "whitepaper" not in values and "essay" not in values


def test_values_declared_only_here(tmp_path: Path) -> None:
    root = old_bank(tmp_path / "bank")
    governance = root / "dna" / "governance.md"
    governance.write_text(
        governance.read_text().replace(
            "`engineering`, `ops`, `adr` |", "`ops`, `adr`, `whitepaper` |"
        ),
        encoding="utf-8",
    )
    result = contract_diff(snapshot_of(root))
    assert result["enums"]["doc_kind"]["onlyHere"] == ["whitepaper"]
    assert "engineering" in result["enums"]["doc_kind"]["onlyThere"]


def test_values_are_legalisable_whether_or_not_this_bank_has_a_contract(tmp_path: Path) -> None:
    root = write_bank(tmp_path / "bank", {"epics/EP-1/charter.md": document("epic")})
    result = contract_diff(snapshot_of(root))
    assert result["here"] == {"root": str(root), "present": False, "source": []}
    assert [(e["field"], e["value"]) for e in result["legalisable"]] == [
        ("doc_function", "canonical"),
        ("doc_kind", "epic"),
        ("status", "active"),
    ]
    assert result["byFile"] == [
        {"file": "dna/frontmatter.md", "values": 1, "documents": 1},
        {"file": "dna/governance.md", "values": 2, "documents": 1},
    ]


def test_at_most_ten_paths_are_listed_but_every_document_is_counted(tmp_path: Path) -> None:
    files = {f"epics/EP-{n:02}/charter.md": document("epic") for n in range(12)}
    root = write_bank(tmp_path / "bank", {**files, "dna/governance.md": OLD_GOVERNANCE})
    (entry,) = [e for e in contract_diff(snapshot_of(root))["legalisable"] if e["value"] == "epic"]
    assert entry["documents"] == 12 and entry["paths"] == sorted(files)[:10]


# --------------------------------------------------------------------------------------------
# Rules, roots, layers
# --------------------------------------------------------------------------------------------


def test_booleans_that_differ(tmp_path: Path) -> None:
    root = old_bank(tmp_path / "bank")
    governance = root / "dna" / "governance.md"
    governance.write_text(
        governance.read_text().replace("Cyclic dependencies are forbidden.\n", ""), "utf-8"
    )
    rules = contract_diff(snapshot_of(root))["rules"]
    assert rules["forbidsCycles"] == {"here": False, "there": True}
    assert rules["requiresDerivedFrom"] == {"here": True, "there": True}


def test_roots_that_differ(tmp_path: Path) -> None:
    root = old_bank(tmp_path / "bank")
    governance = root / "dna" / "governance.md"
    governance.write_text(
        governance.read_text().replace("`principles.md`.", "`charter.md`."), "utf-8"
    )
    assert contract_diff(snapshot_of(root))["rules"]["roots"] == {
        "onlyHere": ["dna/charter.md"],
        "onlyThere": ["dna/principles.md"],
        "common": [],
    }


LAYERS = """\
---
title: Layers
doc_kind: governance
doc_function: canonical
purpose: Where each directory sits.
derived_from:
  - governance.md
status: active
---
# Layers

| Directory | Layer | Weight |
|-|-|-|
| `dna` | `dna` | `1.0` |
| `product` | `knowledge` | `2.0` |
| `features` | `knowledge` | `2.0` |
| `adr` | `decision` | `1.2` |
| `playbooks` | `flow` | |
"""


def test_layer_tables_only_here_only_there_and_differing(tmp_path: Path) -> None:
    root = write_bank(old_bank(tmp_path / "bank"), {"dna/layers.md": LAYERS})
    layers = contract_diff(snapshot_of(root))["layers"]
    # weights are declared per layer: this table gives `flow` none
    assert layers["onlyHere"] == [{"dir": "playbooks", "layer": "flow"}]
    assert [entry["dir"] for entry in layers["onlyThere"]] == sorted(
        [
            *("domain", "engineering", "ops", "use-cases", "prd", "epics", "flows", "processes"),
            *("prompts", "_inbox"),
        ]
    )
    assert {"dir": "_inbox", "layer": "inbox", "weight": 0.2} in layers["onlyThere"]
    assert layers["differ"] == [
        {
            "dir": "features",
            "here": {"layer": "knowledge", "weight": 2.0},
            "there": {"layer": "delivery", "weight": 0.6},
        },
        {
            "dir": "product",
            "here": {"layer": "knowledge", "weight": 2.0},
            "there": {"layer": "knowledge", "weight": 1.5},
        },
    ]
    assert layers["common"] == ["adr", "dna"]


def test_a_layer_without_a_declared_weight_has_no_weight_key(tmp_path: Path) -> None:
    table = LAYERS.replace("| `playbooks` | `flow` | |\n", "").replace(
        "| Directory | Layer | Weight |\n|-|-|-|", "| Directory | Layer |\n|-|-|"
    )
    table = "\n".join(
        line.rsplit(" `", 1)[0] + " |" if line.startswith("| `") else line
        for line in table.split("\n")
    )
    root = write_bank(tmp_path / "bank", {"dna/layers.md": table})
    layers = contract_diff(snapshot_of(root))["layers"]
    assert {"dir": "dna", "here": {"layer": "dna"}, "there": {"layer": "dna", "weight": 1.0}} in (
        layers["differ"]
    )


# --------------------------------------------------------------------------------------------
# The other bank
# --------------------------------------------------------------------------------------------


def test_another_bank_is_read_by_the_same_parser(tmp_path: Path) -> None:
    here = old_bank(tmp_path / "here")
    there = seeded_bank(tmp_path / "there")
    result = contract_diff(snapshot_of(here), str(there))
    assert result["there"]["root"] == str(there)
    assert result["there"]["source"] == list(snapshot_of(there).contract.source)
    assert compare_contracts(snapshot_of(here), snapshot_of(there), str(there)) == result
    assert result["recommendation"] == (
        f"Refreshing dna/governance.md from {there} would legalise 9 documents."
    )


def test_only_the_other_banks_dna_is_read(tmp_path: Path) -> None:
    there = seeded_bank(tmp_path / "there")
    assert sorted(dna_snapshot(str(there)).docs) == sorted(
        path for path in shipped_files.seed_files("x", TODAY) if path.startswith("dna/")
    )


def test_an_other_without_dna_is_a_contract_that_is_not_present(tmp_path: Path) -> None:
    here = seeded_bank(tmp_path / "here")
    there = write_bank(tmp_path / "there", {"README.md": document("project", "index")})
    result = contract_diff(snapshot_of(here), str(there))
    assert result["there"] == {"root": str(there), "present": False, "source": []}
    assert len(result["enums"]["doc_kind"]["onlyHere"]) == 14
    assert result["rules"]["roots"]["onlyHere"] == ["dna/principles.md"]
    assert result["legalisable"] == [] and result["recommendation"] is None


def test_an_other_whose_dna_is_a_symbolic_link_has_no_contract(tmp_path: Path) -> None:
    real = seeded_bank(tmp_path / "real")
    there = tmp_path / "there"
    there.mkdir()
    (there / "dna").symlink_to(real / "dna")
    result = contract_diff(snapshot_of(seeded_bank(tmp_path / "here")), str(there))
    assert result["there"]["present"] is False


@pytest.mark.parametrize("name", ["missing", "a-file.md"])
def test_an_other_that_is_not_a_directory_is_refused(
    name: str, tmp_path: Path, assert_unchanged: Any
) -> None:
    here = seeded_bank(tmp_path / "here")
    (tmp_path / "a-file.md").write_text("x")
    with assert_unchanged(tmp_path), pytest.raises(RefusalError) as refused:
        contract_diff(snapshot_of(here), name)
    assert (refused.value.refusal.rule, refused.value.refusal.message) == (
        "not-a-directory",
        f"Not a directory: {name}",
    )


def test_a_relative_other_resolves_against_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    here = old_bank(project / "memory_bank")
    seeded_bank(project / "starter_copy")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = contract_diff(snapshot_of(here), "starter_copy")
    assert result["there"]["root"] == str(project / "starter_copy")
    assert result["byFile"][0]["documents"] == 9
    assert contract_diff(snapshot_of(here), "../project/./starter_copy")["there"]["root"] == str(
        project / "starter_copy"
    )


def test_a_value_declared_in_two_files_is_attributed_to_the_first(tmp_path: Path) -> None:
    table = "| Field | Values |\n|---|---|\n| `doc_kind` | `epic` |\n"
    there = write_bank(tmp_path / "there", {"dna/b.md": table, "dna/a.md": table})
    here = write_bank(tmp_path / "here", {"epics/x.md": document("epic")})
    (entry,) = contract_diff(snapshot_of(here), str(there))["legalisable"]
    assert entry["declaredIn"] == "dna/a.md"


def test_files_that_legalise_as_many_documents_sort_by_name(tmp_path: Path) -> None:
    there = write_bank(
        tmp_path / "there",
        {
            "dna/z.md": "| Field | Values |\n|---|---|\n| `doc_kind` | `epic` |\n",
            "dna/a.md": "| Field | Values |\n|---|---|\n| `doc_function` | `roadmap` |\n",
        },
    )
    here = write_bank(tmp_path / "here", {"epics/x.md": document("epic", "canonical")})
    write_bank(here, {"epics/y.md": document("prompt", "roadmap")})
    result = contract_diff(snapshot_of(here), str(there))
    assert result["byFile"] == [
        {"file": "dna/a.md", "values": 1, "documents": 1},
        {"file": "dna/z.md", "values": 1, "documents": 1},
    ]
    assert result["recommendation"] == (
        f"Refreshing dna/a.md from {there} would legalise 1 documents."
    )


# --------------------------------------------------------------------------------------------
# A read: nothing written, same answer every time
# --------------------------------------------------------------------------------------------


def test_contract_diff_writes_nothing(tmp_path: Path, assert_unchanged: Any) -> None:
    here = old_bank(tmp_path / "here")
    there = seeded_bank(tmp_path / "there")
    with assert_unchanged(tmp_path):
        contract_diff(snapshot_of(here))
        contract_diff(snapshot_of(here), str(there))
    assert not (here / ".mbank").exists() and not (there / ".mbank").exists()


def test_the_answer_is_deterministic(tmp_path: Path) -> None:
    here = old_bank(tmp_path / "here")
    first = contract_diff(snapshot_of(here))
    second = contract_diff(Bank(here).refresh())
    assert json.dumps(first) == json.dumps(second)


def test_the_fixture_bank_against_the_starter(fixture_bank: Path, snapshot: Any) -> None:
    result = contract_diff(snapshot_of(fixture_bank))
    assert normalise(result, fixture_bank) == snapshot


def test_the_human_contract_diff_output(tmp_path: Path, snapshot: Any) -> None:
    here = write_bank(old_bank(tmp_path / "bank"), {"dna/layers.md": LAYERS})
    text = format_contract_diff(contract_diff(snapshot_of(here)))
    assert text.startswith(
        f"this bank: {here}  (dna: 4 files)\nother: mbank starter  (dna: 8 files)\n"
    )
    assert text.endswith(
        "recommendation: Refreshing dna/governance.md from starter would legalise 9 documents.\n"
    )
    assert text.replace(str(here), "<ROOT>") == snapshot


def test_the_human_output_of_a_bank_that_matches(tmp_path: Path) -> None:
    here = seeded_bank(tmp_path / "bank")
    text = format_contract_diff(contract_diff(snapshot_of(here)))
    assert "values permitted there but not here, used here:\n  (none)\nby file:\n  (none)\n" in text
    assert text.endswith("recommendation: (none)\n")
    assert "doc_kind\n  only here: (none)\n  only there: (none)\n  common: 14 values\n" in text


# --------------------------------------------------------------------------------------------
# The command line (04 §9.2-9.4)
# --------------------------------------------------------------------------------------------


def run_cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    from mbank.cli import main

    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_json_equals_the_tool_result(tmp_path: Path, capsys: Any) -> None:
    here = old_bank(tmp_path / "here")
    there = seeded_bank(tmp_path / "there")
    code, out, _ = run_cli(capsys, "--json", "contract-diff", "--root", str(here))
    assert code == 0 and json.loads(out) == contract_diff(snapshot_of(here))
    code, out, _ = run_cli(capsys, "contract-diff", str(there), "--root", str(here), "--json")
    assert code == 0 and json.loads(out) == contract_diff(snapshot_of(here), str(there))


def test_cli_other_is_relative_to_the_project(tmp_path: Path, capsys: Any) -> None:
    here = old_bank(tmp_path / "here")
    seeded_bank(tmp_path / "there")
    code, out, _ = run_cli(capsys, "--json", "contract-diff", "there", "--root", str(here))
    assert code == 0 and json.loads(out)["there"]["root"] == str(tmp_path / "there")


def test_cli_human_output_on_the_fixture_bank(
    fixture_bank: Path, capsys: Any, snapshot: Any, assert_unchanged: Any
) -> None:
    with assert_unchanged(fixture_bank):
        code, out, err = run_cli(capsys, "contract-diff", "--root", str(fixture_bank))
    assert (code, err) == (0, "")
    assert out.replace(str(fixture_bank), "<ROOT>") == snapshot


def test_cli_an_other_that_is_not_a_directory_exits_1(tmp_path: Path, capsys: Any) -> None:
    here = seeded_bank(tmp_path / "here")
    code, out, err = run_cli(capsys, "contract-diff", "nowhere", "--root", str(here))
    assert (code, out, err) == (1, "", "mbank: Not a directory: nowhere\n")


# --------------------------------------------------------------------------------------------
# The corpus tier (opt-in: MBANK_TEST_ROOTS)
# --------------------------------------------------------------------------------------------


@pytest.mark.corpus
def test_corpus_ai_setup_would_be_legalised_by_refreshing_governance(
    corpus: dict[str, Path], assert_unchanged: Any
) -> None:
    # dna/governance.md there declares only `governance`, `project` and three functions; 102
    # documents use kinds and functions the starter declares (checked by grep: 104 files carry
    # such a `doc_kind:` line, two of them only inside a template's example block).
    root = corpus["IgorArkhipov__ai-setup"]
    with assert_unchanged(root):
        result = contract_diff(Bank(root).refresh())
    assert [(e["field"], e["value"], e["documents"]) for e in result["legalisable"]] == [
        ("doc_kind", "feature", 62),
        ("doc_function", "derived", 16),
        ("doc_kind", "engineering", 15),
        ("doc_kind", "process", 9),
        ("doc_kind", "prd", 6),
        ("doc_kind", "domain", 4),
        ("doc_kind", "use_case", 4),
        ("doc_kind", "adr", 2),
    ]
    assert result["byFile"] == [{"file": "dna/governance.md", "values": 8, "documents": 102}]
    assert result["recommendation"] == (
        "Refreshing dna/governance.md from starter would legalise 102 documents."
    )
    assert result["enums"]["doc_kind"]["common"] == ["governance", "project"]


@pytest.mark.corpus
def test_corpus_code_converge_only_adds_a_function_of_its_own(
    corpus: dict[str, Path], assert_unchanged: Any
) -> None:
    root = corpus["dapi__code-converge"]
    with assert_unchanged(root):
        result = contract_diff(Bank(root).refresh())
    assert result["enums"]["doc_function"]["onlyHere"] == ["convention"]
    assert all(not split["onlyThere"] for split in result["enums"].values())
    assert result["legalisable"] == [] and result["recommendation"] is None
    # no layer table there: every row of the starter's is only there
    assert len(result["layers"]["onlyThere"]) == 14 and result["layers"]["common"] == []
