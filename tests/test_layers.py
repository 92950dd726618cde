"""Layers: the built-in map and the bank's declared layer table (spec 01 §8, 05 §3.5, 07 §3.4)."""

from __future__ import annotations

import time

import pytest

from mbank.contract import (
    BUILTIN_LAYER_DIRS,
    BUILTIN_WEIGHTS,
    EMPTY_LAYERS,
    KNOWN_LAYERS,
    effective_weights,
    layer_of,
    parse_layers,
)
from mbank.model import LayerMap, LayerRow


def layers_of(*texts: str) -> LayerMap:
    """Parse inline texts as dna/a.md, dna/b.md, … in that order."""
    return parse_layers([(f"dna/{chr(ord('a') + i)}.md", text) for i, text in enumerate(texts)])


# The Directory Layers table of the starter's dna/governance.md (05 §3.5), verbatim.
STARTER_TABLE = """\
## Directory Layers

| Directory | Layer | Weight |
|-|-|-|
| `dna` | `dna` | `1.0` |
| `product` | `knowledge` | `1.5` |
| `domain` | `knowledge` | `1.5` |
| `engineering` | `knowledge` | `1.5` |
| `ops` | `knowledge` | `1.5` |
| `adr` | `decision` | `1.2` |
| `use-cases` | `decision` | `1.2` |
| `prd` | `decision` | `1.2` |
| `features` | `delivery` | `0.6` |
| `epics` | `delivery` | `0.6` |
| `flows` | `flow` | `1.0` |
| `processes` | `flow` | `1.0` |
| `prompts` | `flow` | `1.0` |
| `_inbox` | `inbox` | `0.2` |

The permitted layers are `dna`, `knowledge`, `decision`, `delivery`, `flow`, `inbox`, `other`.
"""


# --- built-ins -----------------------------------------------------------------------------


def test_known_layers_in_spec_order() -> None:
    assert KNOWN_LAYERS == ("dna", "knowledge", "decision", "delivery", "flow", "inbox", "other")
    assert set(BUILTIN_WEIGHTS) == set(KNOWN_LAYERS)
    assert set(BUILTIN_LAYER_DIRS.values()) <= set(KNOWN_LAYERS) - {"other"}


@pytest.mark.parametrize(
    ("path", "layer"),
    [
        ("dna/principles.md", "dna"),
        ("product/context.md", "knowledge"),
        ("strategies/x.md", "knowledge"),
        ("services/api/y.md", "knowledge"),
        ("use_cases/uc.md", "decision"),
        ("use-cases/uc.md", "decision"),
        ("prd/p.md", "decision"),
        ("tasks/t.md", "delivery"),
        ("features/FT-001/brief.md", "delivery"),
        ("prompts/p.md", "flow"),
        ("_inbox/note.md", "inbox"),
        ("notes/n.md", "other"),
        ("README.md", "other"),
        ("dna.md", "other"),
    ],
)
def test_no_table_gives_the_builtin_layer_of_the_top_segment(path: str, layer: str) -> None:
    assert layer_of(path, EMPTY_LAYERS) == layer


def test_layer_is_decided_by_the_top_segment_only() -> None:
    assert layer_of("notes/features/a.md", EMPTY_LAYERS) == "other"


def test_builtin_weights() -> None:
    assert effective_weights(EMPTY_LAYERS) == {
        "dna": 1.0,
        "knowledge": 1.5,
        "decision": 1.2,
        "delivery": 0.6,
        "flow": 1.0,
        "inbox": 0.2,
        "other": 1.0,
    }


def test_no_layer_table_gives_the_empty_map() -> None:
    layers = layers_of("# Governance\n\nProse only.", "| Field | Values |\n|-|-|\n| a | b |")
    assert layers == EMPTY_LAYERS
    assert parse_layers([]) == EMPTY_LAYERS


# --- the declared table --------------------------------------------------------------------


def test_the_starter_table_equals_the_builtin_map_and_weights() -> None:
    layers = parse_layers([("dna/governance.md", STARTER_TABLE)])
    assert len(layers.by_dir) == 14
    assert all(BUILTIN_LAYER_DIRS[d] == layer for d, layer in layers.by_dir.items())
    assert effective_weights(layers) == BUILTIN_WEIGHTS
    assert layers.unknown == ()
    assert layers.source == ("dna/governance.md",)
    for directory in BUILTIN_LAYER_DIRS:
        assert layer_of(f"{directory}/x.md", layers) == BUILTIN_LAYER_DIRS[directory]


def test_a_builtin_directory_can_move_and_a_new_one_is_added() -> None:
    layers = layers_of(
        "| Directory | Layer |\n|---|---|\n| features | knowledge |\n| playbooks | flow |"
    )
    assert layers.by_dir == {"features": "knowledge", "playbooks": "flow"}
    assert layer_of("features/a.md", layers) == "knowledge"
    assert layer_of("playbooks/a.md", layers) == "flow"


def test_unmentioned_directories_keep_their_builtin_layer() -> None:
    layers = layers_of("| Directory | Layer |\n|---|---|\n| playbooks | flow |")
    assert layer_of("adr/ADR-001.md", layers) == "decision"
    assert layer_of("tasks/t.md", layers) == "delivery"
    assert layer_of("misc/m.md", layers) == "other"
    assert layer_of("README.md", layers) == "other"


def test_a_renamed_section_is_kept_under_its_new_name() -> None:
    layers = layers_of(
        "| Section | Layer |\n|-|-|\n| `specs/` | `decision` |\n| `/ops` | delivery |"
    )
    assert layers.by_dir == {"specs": "decision", "ops": "delivery"}
    assert layer_of("specs/s.md", layers) == "decision"
    assert layer_of("ops/runbook.md", layers) == "delivery"


def test_header_cells_are_matched_without_case_or_backticks_in_any_column_order() -> None:
    layers = layers_of(
        "| `WEIGHT` | Notes | `Layer` | DIRECTORY |\n|--|--|--|--|\n| 2 | x | flow | p |"
    )
    assert layers.by_dir == {"p": "flow"}
    assert layers.weight == {"flow": 2.0}


def test_weights_are_overlaid_on_the_builtin_ones() -> None:
    layers = layers_of("| Directory | Layer | Weight |\n|-|-|-|\n| product | knowledge | 2.5 |")
    weights = effective_weights(layers)
    assert weights["knowledge"] == 2.5
    assert weights["decision"] == 1.2
    assert weights["other"] == 1.0


def test_a_later_row_wins_for_the_same_directory_and_for_the_same_layer_weight() -> None:
    layers = layers_of(
        "| Directory | Layer | Weight |\n|-|-|-|\n| a | flow | 1.1 |\n| b | flow | .5 |",
        "| Directory | Layer | Weight |\n|-|-|-|\n| a | knowledge | |",
    )
    assert layers.by_dir == {"a": "knowledge", "b": "flow"}
    assert layers.weight == {"flow": 0.5}


def test_the_weight_column_is_optional() -> None:
    layers = layers_of("| Directory | Layer |\n|-|-|\n| product | delivery |")
    assert layers.weight == {}
    assert effective_weights(layers) == BUILTIN_WEIGHTS


@pytest.mark.parametrize("cell", ["heavy", "-1", "1.5x", "", "1.", "1,5", "+2", "1e3"])
def test_a_non_numeric_weight_is_ignored_but_the_row_is_kept(cell: str) -> None:
    layers = layers_of(f"| Directory | Layer | Weight |\n|-|-|-|\n| product | knowledge | {cell} |")
    assert layers.by_dir == {"product": "knowledge"}
    assert layers.weight == {}


@pytest.mark.parametrize(
    ("cell", "value"), [("0", 0.0), ("`3`", 3.0), (".25", 0.25), ("10.5", 10.5)]
)
def test_numeric_weights(cell: str, value: float) -> None:
    layers = layers_of(f"| Directory | Layer | Weight |\n|-|-|-|\n| p | flow | {cell} |")
    assert layers.weight == {"flow": value}


def test_an_unknown_layer_is_collected_while_the_rest_are_kept() -> None:
    layers = layers_of(
        "| Directory | Layer | Weight |\n|-|-|-|\n"
        "| playbooks | `Playbook` | 3 |\n| features | knowledge | 2 |"
    )
    assert layers.unknown == (LayerRow(dir="playbooks", layer="playbook", source="dna/a.md"),)
    assert layers.by_dir == {"features": "knowledge"}
    assert layers.weight == {"knowledge": 2.0}
    assert layer_of("playbooks/p.md", layers) == "other"


def test_a_layer_value_is_lower_cased() -> None:
    assert layers_of("| Directory | Layer |\n|-|-|\n| p | `FLOW` |").by_dir == {"p": "flow"}


def test_rows_with_a_missing_or_empty_cell_are_skipped() -> None:
    layers = layers_of(
        "| Directory | Layer |\n|-|-|\n| p |\n|  | flow |\n| `/` | flow |\n| q | `` |"
    )
    assert layers == EMPTY_LAYERS


def test_only_layer_tables_are_read() -> None:
    text = "\n".join(
        [
            "| Field | Values | Purpose |",
            "|---|---|---|",
            "| features | knowledge | 2 |",
            "",
            "| Directory | Layer |",
            "|---|---|",
            "| playbooks | flow |",
        ]
    )
    layers = layers_of(text)
    assert layers.by_dir == {"playbooks": "flow"}


def test_a_non_table_line_ends_the_layer_table() -> None:
    layers = layers_of(
        "| Directory | Layer |\n|-|-|\n| a | flow |\nprose\n| b | flow |\n| c | dna |"
    )
    # After the prose line, `| b | flow |` is a header candidate without a directory column.
    assert layers.by_dir == {"a": "flow"}


def test_a_table_ending_lets_the_next_table_be_a_layer_table() -> None:
    layers = layers_of(
        "| Field | Values |\n|-|-|\n| a | b |\n\n| Directory | Layer |\n| x | flow |"
    )
    assert layers.by_dir == {"x": "flow"}


@pytest.mark.parametrize("separator", ["|-|-|", "|---|---|", "| :--- | ---: |", "|:-:|:-:|"])
def test_both_separator_styles_are_skipped(separator: str) -> None:
    layers = layers_of(f"| Directory | Layer |\n{separator}\n| p | flow |")
    assert layers.by_dir == {"p": "flow"}
    assert layers.unknown == ()


def test_indented_tables_are_read() -> None:
    assert layers_of("  | Directory | Layer |\n  |-|-|\n  | p | flow |").by_dir == {"p": "flow"}


def test_only_dna_documents_are_read() -> None:
    table = "| Directory | Layer |\n|-|-|\n| p | flow |"
    layers = parse_layers([("domain/layers.md", table), ("README.md", table)])
    assert layers == EMPTY_LAYERS


def test_source_lists_the_dna_documents_that_contributed_rows_sorted() -> None:
    layers = parse_layers(
        [
            ("dna/z.md", "| Directory | Layer |\n|-|-|\n| p | nonsense |"),
            ("dna/m.md", "no table"),
            ("dna/sub/a.md", "| Directory | Layer |\n|-|-|\n| q | flow |"),
            ("dna/b.md", "| Directory | Layer |\n|-|-|\n|  | flow |"),
        ]
    )
    assert layers.source == ("dna/sub/a.md", "dna/z.md")
    assert layers.unknown == (LayerRow(dir="p", layer="nonsense", source="dna/z.md"),)


def test_a_ten_thousand_row_layer_table_parses_in_linear_time() -> None:
    rows = "\n".join(
        f"| d{i} | {KNOWN_LAYERS[i % 8] if i % 8 < 7 else 'bogus'} | {i} |" for i in range(10_000)
    )
    started = time.perf_counter()
    layers = layers_of("| Directory | Layer | Weight |\n|-|-|-|\n" + rows)
    elapsed = time.perf_counter() - started
    assert len(layers.unknown) == 1_250
    assert len(layers.by_dir) == 8_750
    # Generous bound: a quadratic scan of 10,000 rows takes minutes, a linear one milliseconds.
    assert elapsed < 2.0
