"""`bank_contract_diff`: this bank's `dna/` contract against another bank's or the starter's.

A read (spec 04 §2.19). `compare_contracts` is pure: two snapshots in, the result dict out —
the declared values permitted only here or only there, the two rules, the roots, the layer
tables, the values this bank already uses that the other would permit (`legalisable`), and
the other bank's dna file whose refresh would legalise the most documents. It shows and never
migrates.

`contract_diff` is the entry the CLI and the MCP surface call. The other side is either the
starter's seeded set built in memory (`starter_snapshot`, the default), or another bank root,
of which only the documents under `dna/` are read (`dna_snapshot`): the contract and the layer
table come from nothing else, and both go through the same parser as this bank's
(`mbank.snapshot.build_snapshot` → `mbank.contract`).

Choices where the spec is silent:

- A blank `other` means the starter, like an absent one.
- `there.root` is the other bank's absolute, normalised path (the starter: `"starter"`).
- A layer entry's `weight` is the weight its table declares for the entry's layer (weights are
  declared per layer, spec 01 §8.2), omitted when that table declares none; two declarations
  of a directory differ when the layer or that weight differs.
- Ties in `legalisable` sort by field name, then value, in code-point order.
- A document "uses" a value when the field's frontmatter value equals it exactly; every
  document of this bank counts, whether or not this bank's own contract flags it.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import Any

from mbank.contract import ENUM_FIELDS, declared_values
from mbank.model import Contract, Doc, LayerMap
from mbank.parse import parse_document
from mbank.paths import refuse
from mbank.snapshot import Snapshot, build_snapshot, walk_documents

STARTER_ROOT = "starter"
STARTER_LABEL = "mbank starter"
PATHS_SHOWN = 10
DNA = "dna"


# --------------------------------------------------------------------------------------------
# The other side
# --------------------------------------------------------------------------------------------


def _snapshot_of(root: str, real_root: str, texts: Mapping[str, bytes]) -> Snapshot:
    entries = {path: parse_document(path, raw, 0, len(raw)) for path, raw in sorted(texts.items())}
    return build_snapshot(root, real_root, entries, 0)


@functools.cache
def starter_snapshot() -> Snapshot:
    """The starter's 24 seeded documents as a snapshot built in memory (root `"starter"`)."""
    from mbank.shipped_files import seed_files

    seeded = seed_files(STARTER_LABEL, "")
    return _snapshot_of(
        STARTER_ROOT, STARTER_ROOT, {path: text.encode("utf-8") for path, text in seeded.items()}
    )


def dna_snapshot(root: str) -> Snapshot:
    """A snapshot of the documents under `<root>/dna/` only, walked as the bank walk would.

    A `dna` that is a symbolic link, or missing, gives no documents (a contract with
    `present: false`); an unreadable file is skipped, as the walk skips it.
    """
    dna = os.path.join(root, DNA)
    texts: dict[str, bytes] = {}
    if os.path.isdir(dna) and not os.path.islink(dna):
        for relative, absolute in walk_documents(dna):
            try:
                with open(absolute, "rb") as handle:
                    texts[f"{DNA}/{relative}"] = handle.read()
            except OSError:
                continue
    return _snapshot_of(root, os.path.realpath(root), texts)


def other_root(snapshot: Snapshot, other: str) -> str:
    """Where `other` points: absolute as given, or relative to the project (the root's parent)."""
    project = os.path.dirname(snapshot.root)
    return os.path.normpath(os.path.join(project, other))


def contract_diff(snapshot: Snapshot, other: str | None = None) -> dict[str, Any]:
    """The `bank_contract_diff` result for this bank against `other` (default: the starter).

    Refuses `not-a-directory` (`Not a directory: <other>`) when `other` names no directory;
    a directory without `dna/` is compared as a contract with `present: false`.
    """
    if other is None or not other.strip():
        return compare_contracts(snapshot, starter_snapshot(), STARTER_ROOT)
    root = other_root(snapshot, other)
    if not os.path.isdir(root):
        raise refuse("not-a-directory", f"Not a directory: {other}")
    return compare_contracts(snapshot, dna_snapshot(root), root)


# --------------------------------------------------------------------------------------------
# The comparison (pure)
# --------------------------------------------------------------------------------------------


def used_value(doc: Doc, field: str) -> str | None:
    """The value a document gives one of the five enumerated fields (None or "" when unset)."""
    return {
        "doc_kind": doc.doc_kind,
        "doc_function": doc.doc_function,
        "status": doc.status,
        "delivery_status": doc.delivery_status,
        "decision_status": doc.decision_status,
    }[field]


def _split(here: tuple[str, ...], there: tuple[str, ...]) -> dict[str, list[str]]:
    mine, theirs = set(here), set(there)
    return {
        "onlyHere": sorted(mine - theirs),
        "onlyThere": sorted(theirs - mine),
        "common": sorted(mine & theirs),
    }


def _layer_entry(layers: LayerMap, directory: str) -> dict[str, Any]:
    layer = layers.by_dir[directory]
    entry: dict[str, Any] = {"layer": layer}
    if layer in layers.weight:
        entry["weight"] = layers.weight[layer]
    return entry


def compare_layers(here: LayerMap, there: LayerMap) -> dict[str, Any]:
    """The two declared layer tables: directories only here, only there, differing, alike."""
    only_here: list[dict[str, Any]] = []
    only_there: list[dict[str, Any]] = []
    differ: list[dict[str, Any]] = []
    common: list[str] = []
    for directory in sorted(set(here.by_dir) | set(there.by_dir)):
        if directory not in there.by_dir:
            only_here.append({"dir": directory, **_layer_entry(here, directory)})
        elif directory not in here.by_dir:
            only_there.append({"dir": directory, **_layer_entry(there, directory)})
        else:
            mine, theirs = _layer_entry(here, directory), _layer_entry(there, directory)
            if mine == theirs:
                common.append(directory)
            else:
                differ.append({"dir": directory, "here": mine, "there": theirs})
    return {"onlyHere": only_here, "onlyThere": only_there, "differ": differ, "common": common}


def legalisable(here: Snapshot, there: Contract) -> list[dict[str, Any]]:
    """Each value permitted there but not here that documents here already use (04 §2.19)."""
    entries: list[dict[str, Any]] = []
    for field in ENUM_FIELDS:
        mine = set(declared_values(here.contract, field))
        for value in declared_values(there, field):
            if value in mine:
                continue
            paths = sorted(
                path for path, doc in here.docs.items() if used_value(doc, field) == value
            )
            if paths:
                entries.append(
                    {
                        "field": field,
                        "value": value,
                        "documents": len(paths),
                        "paths": paths,
                        "declaredIn": there.declared_in.get((field, value), ""),
                    }
                )
    entries.sort(key=lambda entry: (-entry["documents"], entry["field"], entry["value"]))
    return entries


def by_file(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The legalisable entries grouped by declaring file, distinct documents counted once."""
    documents: dict[str, set[str]] = {}
    values: dict[str, int] = {}
    for entry in entries:
        file = entry["declaredIn"]
        documents.setdefault(file, set()).update(entry["paths"])
        values[file] = values.get(file, 0) + 1
    grouped: list[dict[str, Any]] = [
        {"file": file, "values": values[file], "documents": len(paths)}
        for file, paths in documents.items()
    ]
    grouped.sort(key=lambda group: (-group["documents"], group["file"]))
    return grouped


def compare_contracts(here: Snapshot, there: Snapshot, there_root: str) -> dict[str, Any]:
    """The `bank_contract_diff` result for two snapshots; `there_root` is how `there` is named."""
    mine, theirs = here.contract, there.contract
    entries = legalisable(here, theirs)
    files = by_file(entries)
    recommendation = None
    if files:
        first = files[0]
        recommendation = (
            f"Refreshing {first['file']} from {there_root} would legalise "
            f"{first['documents']} documents."
        )
    return {
        "here": {"root": here.root, "present": mine.present, "source": list(mine.source)},
        "there": {"root": there_root, "present": theirs.present, "source": list(theirs.source)},
        "enums": {
            field: _split(declared_values(mine, field), declared_values(theirs, field))
            for field in ENUM_FIELDS
        },
        "rules": {
            "requiresDerivedFrom": {
                "here": mine.requires_derived_from,
                "there": theirs.requires_derived_from,
            },
            "forbidsCycles": {"here": mine.forbids_cycles, "there": theirs.forbids_cycles},
            "roots": _split(mine.roots, theirs.roots),
        },
        "layers": compare_layers(here.layers, there.layers),
        "legalisable": [{**entry, "paths": entry["paths"][:PATHS_SHOWN]} for entry in entries],
        "byFile": files,
        "recommendation": recommendation,
    }


# --------------------------------------------------------------------------------------------
# Output for people (spec 04 §9.3)
# --------------------------------------------------------------------------------------------


def _listed(values: list[str]) -> str:
    return ", ".join(values) if values else "(none)"


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def _weighted(entry: Mapping[str, Any]) -> str:
    weight = entry.get("weight")
    return entry["layer"] if weight is None else f"{entry['layer']} {weight:g}"


def format_contract_diff(result: Mapping[str, Any]) -> str:
    """The human rendering of `mbank contract-diff` (spec 04 §9.3)."""
    here, there = result["here"], result["there"]
    other = STARTER_LABEL if there["root"] == STARTER_ROOT else there["root"]
    lines = [
        f"this bank: {here['root']}  (dna: {len(here['source'])} files)",
        f"other: {other}  (dna: {len(there['source'])} files)",
    ]
    for field, split in result["enums"].items():
        lines += [
            field,
            f"  only here: {_listed(split['onlyHere'])}",
            f"  only there: {_listed(split['onlyThere'])}",
            f"  common: {len(split['common'])} values",
        ]
    rules = result["rules"]
    derived, cycles, roots = rules["requiresDerivedFrom"], rules["forbidsCycles"], rules["roots"]
    lines += [
        "rules:",
        f"  derived_from required: here {_yes(derived['here'])}, there {_yes(derived['there'])}",
        f"  cycles forbidden: here {_yes(cycles['here'])}, there {_yes(cycles['there'])}",
        f"  roots only here: {_listed(roots['onlyHere'])}",
        f"  roots only there: {_listed(roots['onlyThere'])}",
        f"  roots common: {_listed(roots['common'])}",
    ]
    layers = result["layers"]
    only_here = [f"{e['dir']} ({_weighted(e)})" for e in layers["onlyHere"]]
    only_there = [f"{e['dir']} ({_weighted(e)})" for e in layers["onlyThere"]]
    differ = [
        f"{e['dir']} (here {_weighted(e['here'])}, there {_weighted(e['there'])})"
        for e in layers["differ"]
    ]
    lines += [
        "layers:",
        f"  only here: {_listed(only_here)}",
        f"  only there: {_listed(only_there)}",
        f"  differ: {_listed(differ)}",
        f"  common: {len(layers['common'])} directories",
        "values permitted there but not here, used here:",
    ]
    lines += [
        f'  {e["field"]} "{e["value"]}"  {e["documents"]} documents  '
        f"(declared there in {e['declaredIn']})"
        for e in result["legalisable"]
    ] or ["  (none)"]
    lines.append("by file:")
    lines += [
        f"  {g['file']}  would legalise {g['documents']} documents ({g['values']} values)"
        for g in result["byFile"]
    ] or ["  (none)"]
    lines.append(f"recommendation: {result['recommendation'] or '(none)'}")
    return "\n".join(lines) + "\n"
