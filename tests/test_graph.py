"""bank_graph: the derived_from walk, its result, one-hop neighbours across the bank boundary
and the text / mermaid / dot pictures (spec 02 §6, 04 §9.5, 07 §2.3 and §3.9)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from git_history import copy_fixture

from mbank.graph import (
    NO_SUCH_FILE,
    NOT_MARKDOWN,
    OUTSIDE_CEILING,
    graph,
    render_dot,
    render_mermaid,
    render_text,
)
from mbank.model import RefusalError
from mbank.read import PathLookup
from mbank.snapshot import Bank, Snapshot


def snap(root: Path) -> Snapshot:
    return Bank(root).refresh()


def node_paths(result: dict[str, Any], depth: int | None = None) -> list[str]:
    return [n["path"] for n in result["nodes"] if depth is None or n["depth"] == depth]


def write(root: Path, path: str, text: str) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def doc(title: str, derived: list[str] | None = None, extra: str = "") -> str:
    lines = ["---", f"title: {title}", "doc_kind: engineering", "status: active"]
    if derived:
        lines.append("derived_from:")
        lines.extend(f"  - {item}" for item in derived)
    return "\n".join(lines) + "\n" + extra + "---\n# " + title + "\n"


@pytest.fixture
def deep_base(tmp_path: Path) -> Path:
    """The base fixture three levels below tmp_path, with a sibling bank beside it.

    The neighbour ceiling is the bank root's third ancestor (tmp_path), so neighbour `file`
    values are stable across test runs.
    """
    root = copy_fixture(tmp_path / "repo" / "docs" / "bank", overlay=False)
    write(
        tmp_path / "repo" / "docs",
        "outside-bank/upstream.md",
        "---\ntitle: Upstream Contract\ndoc_kind: domain\nstatus: active\n"
        "purpose: What the upstream bank promises.\ncanonical_for: upstream_contract\n"
        "derived_from:\n  - ../bank/domain/rules.md\n---\n# Upstream\n",
    )
    return root


@pytest.fixture
def deep_plus(tmp_path: Path) -> Path:
    """The extended fixture three levels below tmp_path."""
    return copy_fixture(tmp_path / "repo" / "docs" / "bank", overlay=True)


# --------------------------------------------------------------------------------------------
# The walk on the base fixture (spec 02 §6.3)
# --------------------------------------------------------------------------------------------


def test_down_from_rules_at_depth_one(fixture_bank: Path) -> None:
    result = graph(snap(fixture_bank), "domain/rules.md", depth=1)
    assert node_paths(result, 1) == ["engineering/architecture.md", "features/FT-001/brief.md"]
    assert node_paths(result) == [
        "domain/rules.md",
        "engineering/architecture.md",
        "features/FT-001/brief.md",
    ]
    assert result["byLayer"] == {"knowledge": 1, "delivery": 1}


def test_down_from_rules_reaches_the_adr_at_depth_two(fixture_bank: Path) -> None:
    result = graph(snap(fixture_bank), "domain/rules.md", depth=2)
    assert node_paths(result, 2) == ["adr/ADR-001-queue-choice.md"]
    assert result["byLayer"] == {"knowledge": 1, "decision": 1, "delivery": 1}
    assert list(result["byLayer"]) == ["knowledge", "decision", "delivery"]
    assert all(n["via"] == "down" for n in result["nodes"][1:])


def test_defaults_are_down_and_depth_two(fixture_bank: Path) -> None:
    current = snap(fixture_bank)
    result = graph(current, "domain/rules.md")
    assert (result["direction"], result["depth"]) == ("down", 2)
    assert result == graph(current, "domain/rules.md", direction="down", depth=2, limit=60)


def test_up_from_the_brief_lists_both_sources_with_the_fit_and_the_outside_edge(
    fixture_bank: Path,
) -> None:
    result = graph(snap(fixture_bank), "features/FT-001/brief.md", direction="up", depth=1)
    assert node_paths(result, 1) == ["adr/ADR-001-queue-choice.md", "domain/rules.md"]
    assert result["edges"] == [
        {
            "from": "features/FT-001/brief.md",
            "to": "adr/ADR-001-queue-choice.md",
            "fit": "Only the accepted queue topology is reused.",
        },
        {"from": "features/FT-001/brief.md", "to": "domain/rules.md"},
    ]
    assert result["external"] == [
        {"from": "features/FT-001/brief.md", "raw": "../../../outside-bank/upstream.md"}
    ]
    assert result["broken"] == []


def test_root_node_carries_its_record_and_the_direction(fixture_bank: Path) -> None:
    result = graph(snap(fixture_bank), "features/FT-001/brief.md", direction="up", depth=1)
    assert result["nodes"][0] == {
        "path": "features/FT-001/brief.md",
        "title": "FT-001 Intake Gate",
        "docKind": "feature",
        "layer": "delivery",
        "status": "active",
        "depth": 0,
        "via": "up",
    }


def test_broken_edge_is_listed_in_broken(fixture_bank: Path) -> None:
    result = graph(snap(fixture_bank), "engineering/architecture.md", direction="up", depth=1)
    assert result["broken"] == [
        {"from": "engineering/architecture.md", "raw": "../missing/nowhere.md"}
    ]
    assert node_paths(result, 1) == ["domain/rules.md"]


def test_external_and_broken_come_only_from_expanded_documents(fixture_bank: Path) -> None:
    # the architecture doc sits at the final depth: it is not expanded, so its broken edge
    # is not collected
    result = graph(snap(fixture_bank), "adr/ADR-001-queue-choice.md", direction="up", depth=1)
    assert node_paths(result, 1) == ["engineering/architecture.md"]
    assert result["broken"] == []
    deeper = graph(snap(fixture_bank), "adr/ADR-001-queue-choice.md", direction="up", depth=2)
    assert deeper["broken"] == [
        {"from": "engineering/architecture.md", "raw": "../missing/nowhere.md"}
    ]


def test_both_directions_share_nodes_and_edges(fixture_bank: Path) -> None:
    result = graph(snap(fixture_bank), "engineering/architecture.md", direction="both", depth=1)
    vias = {n["path"]: n["via"] for n in result["nodes"]}
    assert vias == {
        "engineering/architecture.md": "both",
        "domain/rules.md": "up",
        "adr/ADR-001-queue-choice.md": "down",
    }
    assert result["edges"] == [
        {"from": "adr/ADR-001-queue-choice.md", "to": "engineering/architecture.md"},
        {"from": "engineering/architecture.md", "to": "domain/rules.md"},
    ]


def test_a_node_reached_twice_keeps_the_smaller_depth(fixture_bank: Path) -> None:
    # down from rules: the brief is at depth 1 directly, and again at depth 3 via the ADR
    result = graph(snap(fixture_bank), "domain/rules.md", depth=3)
    depths = {n["path"]: n["depth"] for n in result["nodes"]}
    assert depths["features/FT-001/brief.md"] == 1
    assert depths["adr/ADR-001-queue-choice.md"] == 2
    assert {"from": "features/FT-001/brief.md", "to": "adr/ADR-001-queue-choice.md"} not in [
        {k: e[k] for k in ("from", "to")} for e in result["edges"] if "fit" not in e
    ]
    fits = [e for e in result["edges"] if e["to"] == "adr/ADR-001-queue-choice.md"]
    assert fits == [
        {
            "from": "features/FT-001/brief.md",
            "to": "adr/ADR-001-queue-choice.md",
            "fit": "Only the accepted queue topology is reused.",
        }
    ]


def test_limit_three_truncates(fixture_bank: Path) -> None:
    result = graph(snap(fixture_bank), "domain/rules.md", depth=2, limit=3)
    assert len(result["nodes"]) == 3
    assert result["truncated"] is True
    full = graph(snap(fixture_bank), "domain/rules.md", depth=2)
    assert full["truncated"] is False


def test_limit_one_keeps_only_the_root(fixture_bank: Path) -> None:
    result = graph(snap(fixture_bank), "domain/rules.md", limit=1)
    assert node_paths(result) == ["domain/rules.md"]
    assert result["edges"] == []
    assert result["truncated"] is True
    assert result["byLayer"] == {}


def test_unknown_root_is_refused(fixture_bank: Path) -> None:
    with pytest.raises(RefusalError) as caught:
        graph(snap(fixture_bank), "domain/nowhere.md")
    assert caught.value.refusal.message == "Not a document of this bank: domain/nowhere.md"


def test_unknown_root_carries_the_journal_explanation(fixture_bank: Path) -> None:
    with pytest.raises(RefusalError) as caught:
        graph(
            snap(fixture_bank),
            "_inbox/x.md",
            lookup=PathLookup(
                not_a_document_note=lambda p: f"It was removed by bank_discard ({p})."
            ),
        )
    assert caught.value.refusal.message == (
        "Not a document of this bank: _inbox/x.md. It was removed by bank_discard (_inbox/x.md)."
    )


@pytest.mark.parametrize(
    "arguments",
    [{"direction": "sideways"}, {"depth": 0}, {"depth": 7}, {"limit": 0}, {"limit": 301}],
)
def test_out_of_bounds_arguments_raise(fixture_bank: Path, arguments: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        graph(snap(fixture_bank), "domain/rules.md", **arguments)


def test_the_walk_is_deterministic(fixture_plus: Path) -> None:
    first = graph(snap(fixture_plus), "domain/rules.md", direction="both", depth=6)
    second = graph(Bank(fixture_plus).refresh(), "domain/rules.md", direction="both", depth=6)
    assert first == second


# --------------------------------------------------------------------------------------------
# The extended fixture (spec 07 §2.3)
# --------------------------------------------------------------------------------------------


def test_extended_down_from_rules_depth_one_and_two(fixture_plus: Path) -> None:
    current = snap(fixture_plus)
    first = graph(current, "domain/rules.md", depth=1, neighbours=False)
    assert node_paths(first, 1) == [
        "domain/pricing.md",
        "engineering/architecture.md",
        "engineering/logging.md",
        "features/FT-001/brief.md",
    ]
    second = graph(current, "domain/rules.md", depth=2, neighbours=False)
    assert node_paths(second, 2) == ["adr/ADR-001-queue-choice.md", "adr/ADR-002-cache-layer.md"]
    assert second["byLayer"] == {"knowledge": 3, "decision": 2, "delivery": 1}


def test_scalar_string_edge_is_walked(fixture_plus: Path) -> None:
    result = graph(snap(fixture_plus), "engineering/logging.md", direction="up", depth=1)
    assert node_paths(result, 1) == ["domain/rules.md"]
    assert result["edges"] == [{"from": "engineering/logging.md", "to": "domain/rules.md"}]


@pytest.mark.parametrize("direction", ["up", "down", "both"])
def test_a_deep_walk_over_the_ops_cycle_terminates(fixture_plus: Path, direction: str) -> None:
    result = graph(snap(fixture_plus), "ops/README.md", direction=direction, depth=6)
    assert node_paths(result) == ["ops/README.md", "ops/config.md"]
    assert result["edges"] == [
        {"from": "ops/README.md", "to": "ops/config.md"},
        {"from": "ops/config.md", "to": "ops/README.md"},
    ]
    assert result["truncated"] is False


def test_url_edge_is_external_with_url_true_and_never_broken_or_read(fixture_plus: Path) -> None:
    reads: list[str] = []

    def reader(target: str, ceiling: str) -> bytes | str:
        reads.append(target)
        return b""

    result = graph(
        snap(fixture_plus),
        "adr/ADR-002-cache-layer.md",
        direction="up",
        depth=1,
        read_outside=reader,
    )
    assert result["external"] == [
        {
            "from": "adr/ADR-002-cache-layer.md",
            "raw": "https://example.com/issues/42",
            "url": True,
        }
    ]
    assert result["broken"] == []
    assert result["neighbours"] == []
    assert reads == []


# --------------------------------------------------------------------------------------------
# One-hop neighbours (spec 02 §6.4)
# --------------------------------------------------------------------------------------------


def test_sibling_bank_header_is_read_as_a_neighbour(deep_base: Path) -> None:
    result = graph(snap(deep_base), "features/FT-001/brief.md", direction="up", depth=1)
    assert result["neighbours"] == [
        {
            "from": "features/FT-001/brief.md",
            "raw": "../../../outside-bank/upstream.md",
            "file": "repo/docs/outside-bank/upstream.md",
            "title": "Upstream Contract",
            "docKind": "domain",
            "status": "active",
            "purpose": "What the upstream bank promises.",
            "canonicalFor": ["upstream_contract"],
        }
    ]


def test_neighbours_own_edges_are_never_walked(deep_base: Path) -> None:
    result = graph(snap(deep_base), "features/FT-001/brief.md", direction="up", depth=6)
    assert all(not n["path"].startswith("..") for n in result["nodes"])
    assert "outside-bank" not in str(result["nodes"]) + str(result["edges"])
    assert len(result["neighbours"]) == 1


def test_missing_outside_target_is_unreadable_as_no_such_file(fixture_bank: Path) -> None:
    result = graph(snap(fixture_bank), "features/FT-001/brief.md", direction="up", depth=1)
    [neighbour] = result["neighbours"]
    assert neighbour["unreadable"] == NO_SUCH_FILE
    assert neighbour["unreadable"] == "no such file — the edge is broken, not merely external"
    assert "title" not in neighbour


def test_no_external_edges_gives_an_empty_neighbour_list(fixture_bank: Path) -> None:
    result = graph(snap(fixture_bank), "domain/rules.md")
    assert result["neighbours"] == []


def test_neighbours_false_omits_the_field_and_reads_nothing(deep_base: Path) -> None:
    def reader(target: str, ceiling: str) -> bytes | str:
        raise AssertionError("nothing may be read")

    result = graph(
        snap(deep_base),
        "features/FT-001/brief.md",
        direction="up",
        neighbours=False,
        read_outside=reader,
    )
    assert "neighbours" not in result
    assert result["external"]


def edge_bank(root: Path, targets: list[str]) -> Snapshot:
    write(root, "a.md", doc("A", targets))
    return snap(root)


def test_a_target_beyond_three_levels_is_outside(tmp_path: Path) -> None:
    root = tmp_path / "x" / "y" / "z" / "bank"
    current = edge_bank(root, ["../../../../beyond.md"])
    [neighbour] = graph(current, "a.md", direction="up")["neighbours"]
    assert neighbour == {
        "from": "a.md",
        "raw": "../../../../beyond.md",
        "file": "../beyond.md",
        "unreadable": OUTSIDE_CEILING,
    }
    assert OUTSIDE_CEILING == "outside the 3 directory levels above this bank, so it was not read"


def test_a_symlink_cannot_carry_the_read_past_the_ceiling(tmp_path: Path) -> None:
    root = tmp_path / "x" / "y" / "z" / "bank"
    (tmp_path / "secret.md").write_text("---\ntitle: Secret\n---\n", encoding="utf-8")
    (tmp_path / "x" / "y").mkdir(parents=True)
    os.symlink(tmp_path / "secret.md", tmp_path / "x" / "y" / "link.md")
    current = edge_bank(root, ["../../link.md"])
    [neighbour] = graph(current, "a.md", direction="up")["neighbours"]
    assert neighbour["file"] == "y/link.md"
    assert neighbour["unreadable"] == OUTSIDE_CEILING


def test_a_non_markdown_target_is_not_read(tmp_path: Path) -> None:
    root = tmp_path / "x" / "y" / "z" / "bank"
    (tmp_path / "x" / "y" / "z" / "notes.txt").parent.mkdir(parents=True)
    (tmp_path / "x" / "y" / "z" / "notes.txt").write_text("x", encoding="utf-8")
    current = edge_bank(root, ["../notes.txt#part"])
    [neighbour] = graph(current, "a.md", direction="up")["neighbours"]
    assert neighbour == {
        "from": "a.md",
        "raw": "../notes.txt#part",
        "file": "y/z/notes.txt",
        "unreadable": NOT_MARKDOWN,
    }


def test_a_directory_target_is_no_such_file(tmp_path: Path) -> None:
    root = tmp_path / "x" / "y" / "z" / "bank"
    (tmp_path / "x" / "y" / "z" / "dir.md").mkdir(parents=True)
    current = edge_bank(root, ["../dir.md"])
    [neighbour] = graph(current, "a.md", direction="up")["neighbours"]
    assert neighbour["unreadable"] == NO_SUCH_FILE


def test_neighbour_title_falls_back_to_the_file_name_and_reads_leniently(
    tmp_path: Path,
) -> None:
    root = tmp_path / "x" / "y" / "z" / "bank"
    outside = tmp_path / "x" / "y" / "z"
    outside.mkdir(parents=True)
    # invalid YAML (unquoted colon) that no loader is ever run on; a list canonical_for
    (outside / "plain.md").write_text(
        "---\npurpose: Defines: things\ncanonical_for:\n  - k1\n  - k2\nstatus: \n---\n",
        encoding="utf-8",
    )
    (outside / "bare.md").write_bytes(b"no frontmatter \xff at all\n")
    current = edge_bank(root, ["../plain.md", "../bare.md"])
    plain, bare = graph(current, "a.md", direction="up")["neighbours"]
    assert plain == {
        "from": "a.md",
        "raw": "../plain.md",
        "file": "y/z/plain.md",
        "title": "plain",
        "purpose": "Defines: things",
        "canonicalFor": ["k1", "k2"],
    }
    assert bare == {"from": "a.md", "raw": "../bare.md", "file": "y/z/bare.md", "title": "bare"}


def test_at_most_25_targets_are_read(tmp_path: Path) -> None:
    root = tmp_path / "x" / "y" / "z" / "bank"
    current = edge_bank(root, [f"../n{i:02d}.md" for i in range(30)])
    reads: list[str] = []

    def reader(target: str, ceiling: str) -> bytes | str:
        reads.append(os.path.basename(target))
        return NO_SUCH_FILE

    result = graph(current, "a.md", direction="up", read_outside=reader)
    assert len(result["external"]) == 30
    assert len(result["neighbours"]) == 25
    assert reads == [f"n{i:02d}.md" for i in range(25)]


def test_the_reader_gets_the_normalised_target_and_the_ceiling(tmp_path: Path) -> None:
    root = tmp_path / "x" / "y" / "z" / "bank"
    write(root, "sub/a.md", doc("A", ["../../other/./b.md#frag"]))
    calls: list[tuple[str, str]] = []

    def reader(target: str, ceiling: str) -> bytes | str:
        calls.append((target, ceiling))
        return b"---\ntitle: B\n---\n"

    result = graph(snap(root), "sub/a.md", direction="up", read_outside=reader)
    assert calls == [(str(tmp_path / "x/y/z/other/b.md"), str(tmp_path / "x"))]
    assert result["neighbours"][0]["title"] == "B"


# --------------------------------------------------------------------------------------------
# Pictures (spec 02 §6.5)
# --------------------------------------------------------------------------------------------


def test_mermaid_format_adds_the_picture_and_keeps_the_structured_result(
    fixture_bank: Path,
) -> None:
    current = snap(fixture_bank)
    plain = graph(current, "domain/rules.md", depth=1)
    pictured = graph(current, "domain/rules.md", depth=1, format="mermaid")
    assert {k: v for k, v in pictured.items() if k != "mermaid"} == plain
    assert pictured["mermaid"] == (
        "flowchart BT\n"
        '  subgraph layer0["knowledge"]\n'
        '    n0["domain/rules.md<br/>Domain Rules"]:::root\n'
        '    n1["engineering/architecture.md<br/>Service Architecture"]\n'
        "  end\n"
        '  subgraph layer1["delivery"]\n'
        '    n2["features/FT-001/brief.md<br/>FT-001 Intake Gate"]\n'
        "  end\n"
        "  n1 --> n0\n"
        "  n2 --> n0\n"
        "  classDef root stroke-width:3px"
    )


def test_dot_picture_up_from_the_brief(fixture_bank: Path) -> None:
    result = graph(snap(fixture_bank), "features/FT-001/brief.md", direction="up", depth=1)
    assert render_dot(result) == (
        "digraph derived_from {\n"
        "  rankdir=BT;\n"
        '  "features/FT-001/brief.md" [label="features/FT-001/brief.md\\nFT-001 Intake Gate"];\n'
        '  "adr/ADR-001-queue-choice.md" [label="adr/ADR-001-queue-choice.md\\n'
        'ADR-001: Use A Single Queue Instead Of Per-Tenant Queues"];\n'
        '  "domain/rules.md" [label="domain/rules.md\\nDomain Rules"];\n'
        '  "features/FT-001/brief.md" -> "adr/ADR-001-queue-choice.md" '
        '[label="Only the accepted queue topology is reused."];\n'
        '  "features/FT-001/brief.md" -> "domain/rules.md";\n'
        "}"
    )


def test_truncated_mermaid_ends_with_the_node_count(fixture_bank: Path) -> None:
    result = graph(snap(fixture_bank), "domain/rules.md", limit=3, format="mermaid")
    assert result["mermaid"].splitlines()[-1] == "  %% truncated at 3 nodes"


def escaping_bank(root: Path) -> Snapshot:
    write(root, "base.md", "---\ntitle: 'The \"Base\" \\ Doc'\n---\n")
    write(
        root,
        "child.md",
        "---\ntitle: 'Child | One'\nderived_from:\n  - path: base.md\n"
        '    fit: "Keeps \\"the\\" a|b rule\\nand then some more words so that the fit runs '
        'past sixty"\n---\n',
    )
    return snap(root)


def test_pictures_escape_quotes_pipes_backslashes_and_cut_the_fit(tmp_path: Path) -> None:
    result = graph(escaping_bank(tmp_path), "base.md", format="mermaid")
    fit = result["edges"][0]["fit"]
    assert fit == 'Keeps "the" a|b rule\nand then some more words so that the fit runs past sixty'
    lines = result["mermaid"].splitlines()
    assert lines[1] == '  subgraph layer0["other"]'
    assert lines[2] == '    n0["base.md<br/>The #quot;Base#quot; \\ Doc"]:::root'
    assert lines[3] == '    n1["child.md<br/>Child | One"]'
    cut = fit[:60].replace("\n", " ").replace('"', "#quot;").replace("|", "#124;")
    assert lines[5] == f"  n1 -->|{cut}| n0"
    dot = render_dot(result).splitlines()
    assert dot[2] == '  "base.md" [label="base.md\\nThe \\"Base\\" \\\\ Doc"];'
    dot_fit = fit[:60].replace("\n", " ").replace('"', '\\"')
    assert dot[4] == f'  "child.md" -> "base.md" [label="{dot_fit}"];'
    text = render_text(result).splitlines()
    assert text[3] == "      fit: " + fit.replace("\n", " ")


def test_text_picture_of_the_extended_down_walk(fixture_plus: Path) -> None:
    result = graph(snap(fixture_plus), "domain/rules.md", depth=2)
    assert render_text(result) == (
        "domain/rules.md  [down, depth 2]\n"
        "nodes: 6  knowledge:3 decision:2 delivery:1\n"
        "  v domain/pricing.md  [domain / knowledge]\n"
        "  v engineering/architecture.md  [engineering / knowledge]\n"
        "  v engineering/logging.md  [engineering / knowledge]\n"
        "  v features/FT-001/brief.md  [feature / delivery]\n"
        "    v adr/ADR-001-queue-choice.md  [adr / decision]\n"
        "    v adr/ADR-002-cache-layer.md  [adr / decision]"
    )


def test_text_fit_line_follows_the_first_edge_to_a_shallower_node(fixture_bank: Path) -> None:
    # at depth 3 the brief -> ADR edge (with its fit) exists, but the ADR's first edge to a
    # depth-1 node is ADR -> architecture, which has no fit; the brief's edge to the root has none
    result = graph(snap(fixture_bank), "domain/rules.md", depth=3)
    assert {
        "from": "features/FT-001/brief.md",
        "to": "adr/ADR-001-queue-choice.md",
        "fit": "Only the accepted queue topology is reused.",
    } in result["edges"]
    assert "fit:" not in render_text(result)
    up = graph(snap(fixture_bank), "features/FT-001/brief.md", direction="up", depth=1)
    assert render_text(up).splitlines()[2:4] == [
        "  ^ adr/ADR-001-queue-choice.md  [adr / decision]",
        "      fit: Only the accepted queue topology is reused.",
    ]


def test_text_picture_lists_external_broken_and_neighbours(deep_base: Path) -> None:
    current = snap(deep_base)
    result = graph(current, "features/FT-001/brief.md", direction="up", depth=3)
    assert render_text(result) == (
        "features/FT-001/brief.md  [up, depth 3]\n"
        "nodes: 5  dna:2 knowledge:2 decision:1\n"
        "  ^ adr/ADR-001-queue-choice.md  [adr / decision]\n"
        "      fit: Only the accepted queue topology is reused.\n"
        "  ^ domain/rules.md  [domain / knowledge]\n"
        "    ^ dna/governance.md  [governance / dna]\n"
        "    ^ engineering/architecture.md  [engineering / knowledge]\n"
        "      ^ dna/principles.md  [governance / dna]\n"
        "external (outside the bank):\n"
        "  features/FT-001/brief.md -> ../../../outside-bank/upstream.md\n"
        "broken:\n"
        "  engineering/architecture.md -> ../missing/nowhere.md\n"
        "neighbour: repo/docs/outside-bank/upstream.md  Upstream Contract"
    )


def test_text_picture_of_a_lonely_root(tmp_path: Path) -> None:
    write(tmp_path, "a.md", doc("A"))
    result = graph(snap(tmp_path), "a.md", neighbours=False)
    assert render_text(result) == "a.md  [down, depth 2]\nnodes: 0"


# --------------------------------------------------------------------------------------------
# Snapshots: json, mermaid and dot on the fixtures
# --------------------------------------------------------------------------------------------


def test_snapshot_down_from_rules_json(deep_base: Path, snapshot: Any) -> None:
    assert graph(snap(deep_base), "domain/rules.md", format="mermaid") == snapshot


def test_snapshot_up_from_the_brief_json(deep_base: Path, snapshot: Any) -> None:
    result = graph(snap(deep_base), "features/FT-001/brief.md", direction="up", depth=6)
    assert result == snapshot


def test_snapshot_both_from_architecture_on_the_extended_fixture(
    deep_plus: Path, snapshot: Any
) -> None:
    result = graph(snap(deep_plus), "engineering/architecture.md", direction="both", depth=3)
    assert result == snapshot


def test_snapshot_pictures(deep_plus: Path, snapshot: Any) -> None:
    current = snap(deep_plus)
    pictures = {}
    cases: dict[str, dict[str, Any]] = {
        "down-rules": {"path": "domain/rules.md", "depth": 2},
        "up-brief": {"path": "features/FT-001/brief.md", "direction": "up", "depth": 3},
        "both-ops": {"path": "ops/README.md", "direction": "both", "depth": 6},
        "truncated": {"path": "dna/governance.md", "depth": 6, "limit": 5},
    }
    for name, arguments in cases.items():
        result = graph(current, **arguments)
        pictures[name] = {
            "text": render_text(result),
            "mermaid": render_mermaid(result),
            "dot": render_dot(result),
        }
    assert pictures == snapshot


# --------------------------------------------------------------------------------------------
# The command line (spec 04 §9.2-9.5)
# --------------------------------------------------------------------------------------------


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from mbank.cli import main

    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_graph_pictures(
    deep_base: Path, capsys: pytest.CaptureFixture[str], snapshot: Any
) -> None:
    root = str(deep_base)
    brief = ("graph", "features/FT-001/brief.md", "--direction", "up", "--depth", "3")
    outputs = {
        "text": run_cli(capsys, "--root", root, *brief),
        "text-no-neighbours": run_cli(capsys, "--root", root, *brief, "--no-neighbours"),
        "mermaid": run_cli(
            capsys, "--root", root, "graph", "domain/rules.md", "--format", "mermaid"
        ),
        "dot": run_cli(capsys, "--root", root, *brief, "--format", "dot"),
        "truncated": run_cli(capsys, "--root", root, "graph", "dna/governance.md", "--limit", "3"),
    }
    current = snap(deep_base)
    up = graph(current, "features/FT-001/brief.md", direction="up", depth=3)
    assert outputs["text"] == (0, render_text(up) + "\n", "")
    assert outputs["dot"] == (0, render_dot(up) + "\n", "")
    assert "neighbour:" not in outputs["text-no-neighbours"][1]
    assert outputs["mermaid"][1] == render_mermaid(graph(current, "domain/rules.md")) + "\n"
    assert {name: list(value) for name, value in outputs.items()} == snapshot


def test_cli_graph_json_is_the_tool_result_and_pictures_replace_it(
    deep_base: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    root = str(deep_base)
    code, out, _ = run_cli(capsys, "--root", root, "--json", "graph", "domain/rules.md")
    assert code == 0
    assert json.loads(out) == graph(snap(deep_base), "domain/rules.md")
    _, picture, _ = run_cli(
        capsys, "--root", root, "--json", "graph", "domain/rules.md", "--format", "dot"
    )
    assert picture.startswith("digraph derived_from {\n")


def test_cli_graph_refusal_and_usage_errors(
    fixture_bank: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(fixture_bank)
    assert run_cli(capsys, "--root", root, "graph", "nope.md") == (
        1,
        "",
        "mbank: Not a document of this bank: nope.md\n",
    )
    for bad in (["--depth", "7"], ["--limit", "0"], ["--direction", "left"], ["--format", "png"]):
        with pytest.raises(SystemExit) as caught:
            run_cli(capsys, "--root", root, "graph", "domain/rules.md", *bad)
        assert caught.value.code == 2


@pytest.mark.corpus
def test_every_corpus_document_walks_both_ways_without_error(
    corpus: dict[str, Path], assert_unchanged: Any
) -> None:
    for name, root in corpus.items():
        with assert_unchanged(root):
            current = snap(root)
            for path in current.docs:
                result = graph(current, path, direction="both", depth=6, limit=300)
                assert result["nodes"][0]["path"] == path, name
                assert all(not entry.get("url") for entry in result["broken"])
                render_text(result)
                render_mermaid(result)
                render_dot(result)
