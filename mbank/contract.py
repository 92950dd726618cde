"""What a bank declares about itself in `dna/`: layers, contract, vocabulary (spec 01 §8-§10).

Pure functions of the raw text of the `dna/` documents. The snapshot does the reading; this
module only turns `(bank path, text)` pairs into records, so every rule here is testable with
inline strings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from mbank.model import Contract, LayerMap, LayerRow, VocabularyRow

KNOWN_LAYERS: tuple[str, ...] = (
    "dna",
    "knowledge",
    "decision",
    "delivery",
    "flow",
    "inbox",
    "other",
)

BUILTIN_LAYER_DIRS: dict[str, str] = {
    "dna": "dna",
    "product": "knowledge",
    "domain": "knowledge",
    "engineering": "knowledge",
    "ops": "knowledge",
    "system": "knowledge",
    "services": "knowledge",
    "research": "knowledge",
    "strategies": "knowledge",
    "adr": "decision",
    "use-cases": "decision",
    "use_cases": "decision",
    "prd": "decision",
    "features": "delivery",
    "epics": "delivery",
    "tasks": "delivery",
    "flows": "flow",
    "processes": "flow",
    "prompts": "flow",
    "_inbox": "inbox",
}


class LayerWeights(NamedTuple):
    """Every weight that depends on a document's layer, so a layer's row reads at once.

    `header`: upstream's built-in weight (the header-only score of spec 02 §3.5; the starter's
    layer table restates it). `route`: mbank's §3.9 prior, which does not damp delivery.
    `defines`: the part of a literal's definition the layer carries in search (issue 16):
    knowledge and governance documents define the vocabulary, flows their own identifiers,
    delivery documents use them.
    """

    header: float
    route: float
    defines: float


LAYER_WEIGHTS: dict[str, LayerWeights] = {
    "dna": LayerWeights(header=1.0, route=1.0, defines=1.0),
    "knowledge": LayerWeights(header=1.5, route=1.5, defines=1.0),
    "decision": LayerWeights(header=1.2, route=1.2, defines=0.6),
    "delivery": LayerWeights(header=0.6, route=1.0, defines=0.0),
    "flow": LayerWeights(header=1.0, route=1.0, defines=0.9),
    "inbox": LayerWeights(header=0.2, route=0.2, defines=0.4),
    "other": LayerWeights(header=1.0, route=1.0, defines=0.4),
}
BUILTIN_WEIGHTS: dict[str, float] = {layer: w.header for layer, w in LAYER_WEIGHTS.items()}

# The five enumerated fields, in the order the Contract lists them.
ENUM_FIELDS: tuple[str, ...] = (
    "doc_kind",
    "doc_function",
    "status",
    "delivery_status",
    "decision_status",
)


def declared_values(contract: Contract, field: str) -> tuple[str, ...]:
    """The values `contract` declares for one of the five enumerated fields, in declared
    order; () for any other field."""
    return {
        "doc_kind": contract.doc_kinds,
        "doc_function": contract.doc_functions,
        "status": contract.statuses,
        "delivery_status": contract.delivery_statuses,
        "decision_status": contract.decision_statuses,
    }.get(field, ())


# Backticked words that describe a field's type or format, never a value of it.
NOISE_WORDS: frozenset[str] = frozenset(
    {"enum", "string", "array", "object", "md", "yaml", "true", "false"}
)

# Where a bank's rules live: the contract, the layers and the vocabulary are read from the
# documents under this folder and nowhere else (`_dna_docs`), so it is the whole of the
# governance a write can change (issue 14: an agent cannot change it).
GOVERNANCE_FOLDER = "dna/"


def is_governance_path(path: str) -> bool:
    """Whether a bank path lies in the governance folder, where the bank's rules live."""
    return path.startswith(GOVERNANCE_FOLDER)


EMPTY_LAYERS = LayerMap(by_dir={}, weight={}, unknown=(), source=())

_SEPARATOR_CELL = re.compile(r":?-+:?", re.ASCII)
_WEIGHT = re.compile(r"\d+(\.\d+)?|\.\d+", re.ASCII)
_ENUM_VALUE = re.compile(r"`([a-z][a-z0-9_-]*)`")
_MUST_DEFINE = re.compile(r"must define `?derived_from`?", re.IGNORECASE)
_CYCLES_EN = re.compile(r"cyclic dependencies are forbidden", re.IGNORECASE)
# Russian governance (mbank): no re.ASCII, so \w and case folding cover Cyrillic.
_CYCLES_RU = re.compile(r"циклическ\w* зависимост\w* запрещ", re.IGNORECASE)
# "должн[аоы]" covers the "…" of the spec's должен / должна / должно list; the look-ahead keeps
# "должность" (a job title) out.
_REQUIRED_RU = re.compile(r"обязател|долж(?:ен|н[аоы])(?!\w).*?(?:определ|указ)", re.IGNORECASE)
_ROOT_EN = re.compile(r"root document is \[?`?([\w./-]+\.md)`?", re.IGNORECASE | re.ASCII)
_ROOT_RU = re.compile(
    r"корнев\w* документ\w*\s*(?:—|-|–|:|это)?\s*\[?`?([\w./-]+\.md)`?", re.IGNORECASE
)
_VOCAB_SEPARATOR = re.compile(r"\|[\s:|-]+\|")
_VOCAB_WORD = re.compile(r"[a-z][a-z0-9_-]*")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")


def table_cells(line: str) -> list[str]:
    """Split a markdown table line into stripped cells (spec 01 §8.2)."""
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|"):
        text = text[:-1]
    return [cell.strip() for cell in text.split("|")]


def _is_table_line(line: str) -> bool:
    return line.lstrip().startswith("|")


def _dna_docs(dna_docs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    # The callers pass dna/ documents in path order already; filtering and sorting here keeps
    # "only dna/ is read" and "first declaring document" true whatever a caller passes.
    return sorted((doc for doc in dna_docs if is_governance_path(doc[0])), key=lambda d: d[0])


def _index(cells: list[str], *names: str) -> int | None:
    for i, cell in enumerate(cells):
        if cell in names:
            return i
    return None


def _cell(cells: list[str], index: int | None) -> str:
    if index is None or index >= len(cells):
        return ""
    return cells[index]


def _layer_rows(text: str) -> Iterator[tuple[str, str, str]]:
    """Yield (dir, layer, weight cell) for each data row of every layer table in `text`."""
    in_layer_table = False
    in_other_table = False
    dir_col: int | None = None
    layer_col: int | None = None
    weight_col: int | None = None
    for line in text.split("\n"):
        if not _is_table_line(line):
            in_layer_table = in_other_table = False
            continue
        if in_other_table:
            continue
        cells = table_cells(line)
        if not in_layer_table:
            header = [cell.replace("`", "").strip().lower() for cell in cells]
            dir_col = _index(header, "directory", "section")
            layer_col = _index(header, "layer")
            weight_col = _index(header, "weight")
            if dir_col is None or layer_col is None:
                in_other_table = True
            else:
                in_layer_table = True
            continue
        if all(_SEPARATOR_CELL.fullmatch(cell) for cell in cells):
            continue
        directory = _cell(cells, dir_col).replace("`", "").strip().strip("/")
        layer = _cell(cells, layer_col).replace("`", "").strip().lower()
        if directory and layer:
            yield directory, layer, _cell(cells, weight_col).replace("`", "").strip()


def parse_layers(dna_docs: Sequence[tuple[str, str]]) -> LayerMap:
    """Read the bank's declared layer tables from its `dna/` documents (spec 01 §8.2)."""
    by_dir: dict[str, str] = {}
    weight: dict[str, float] = {}
    unknown: list[LayerRow] = []
    source: list[str] = []
    for path, text in _dna_docs(dna_docs):
        contributed = False
        for directory, layer, weight_cell in _layer_rows(text):
            contributed = True
            if layer not in KNOWN_LAYERS:
                unknown.append(LayerRow(dir=directory, layer=layer, source=path))
                continue
            by_dir[directory] = layer
            if _WEIGHT.fullmatch(weight_cell):
                weight[layer] = float(weight_cell)
        if contributed:
            source.append(path)
    if not source:
        return EMPTY_LAYERS
    return LayerMap(by_dir=by_dir, weight=weight, unknown=tuple(unknown), source=tuple(source))


def layer_of(path: str, layers: LayerMap) -> str:
    """Return the layer of a bank path: declared table first, then built-ins (spec 01 §8.3)."""
    if "/" not in path:
        return "other"
    top = path.split("/", 1)[0]
    declared = layers.by_dir.get(top)
    if declared is not None:
        return declared
    return BUILTIN_LAYER_DIRS.get(top, "other")


def effective_weights(layers: LayerMap) -> dict[str, float]:
    """Return the built-in layer weights overlaid with the declared ones (spec 01 §8.3)."""
    return {**BUILTIN_WEIGHTS, **layers.weight}


def _root_of(line: str) -> str | None:
    low = line.lower()
    matches: list[re.Match[str] | None] = []
    if "root document is" in low:
        matches.append(_ROOT_EN.search(line))
    if "корнев" in low:
        matches.append(_ROOT_RU.search(line))
    found = [m for m in matches if m is not None]
    if not found:
        return None
    # Either language may name the root; the leftmost sentence on the line wins.
    first = min(found, key=lambda m: m.start())
    return "dna/" + first.group(1).removeprefix("./")


def _requires_derived_from_ru(line: str) -> bool:
    return "derived_from" in line.lower() and _REQUIRED_RU.search(line) is not None


def parse_contract(dna_docs: Sequence[tuple[str, str]], has_principles: bool) -> Contract:
    """Parse what the `dna/` documents declare about the bank (spec 01 §9)."""
    docs = _dna_docs(dna_docs)
    if not docs:
        return EMPTY_CONTRACT
    values: dict[str, dict[str, None]] = {field: {} for field in ENUM_FIELDS}
    declared_in: dict[tuple[str, str], str] = {}
    roots: dict[str, None] = {}
    requires_derived_from = False
    forbids_cycles = False
    for path, text in docs:
        if not requires_derived_from and _MUST_DEFINE.search(text):
            requires_derived_from = True
        if not forbids_cycles and (_CYCLES_EN.search(text) or _CYCLES_RU.search(text)):
            forbids_cycles = True
        for line in text.split("\n"):
            if not requires_derived_from and _requires_derived_from_ru(line):
                requires_derived_from = True
            root = _root_of(line)
            if root is not None:
                roots.setdefault(root)
            if not _is_table_line(line):
                continue
            cells = table_cells(line)
            if len(cells) < 2:
                continue
            field = cells[0].replace("`", "").strip()
            if field not in values:
                continue
            seen = values[field]
            for cell in cells[1:]:
                for match in _ENUM_VALUE.finditer(cell):
                    value = match.group(1)
                    if value in NOISE_WORDS or value == field or value in seen:
                        continue
                    seen[value] = None
                    declared_in[(field, value)] = path
    if not roots and has_principles:
        roots["dna/principles.md"] = None
    return _contract(docs, values, tuple(roots), requires_derived_from, forbids_cycles, declared_in)


def _contract(
    docs: Sequence[tuple[str, str]],
    values: dict[str, dict[str, None]],
    roots: tuple[str, ...],
    requires_derived_from: bool,
    forbids_cycles: bool,
    declared_in: dict[tuple[str, str], str],
) -> Contract:
    """The `Contract` of what the `dna/` documents declared, field by field: the one place
    that maps the enumerated fields to the record, for a parsed bank and the empty one."""
    return Contract(
        present=bool(docs),
        source=tuple(path for path, _ in docs),
        doc_kinds=tuple(values["doc_kind"]),
        doc_functions=tuple(values["doc_function"]),
        statuses=tuple(values["status"]),
        delivery_statuses=tuple(values["delivery_status"]),
        decision_statuses=tuple(values["decision_status"]),
        roots=roots,
        requires_derived_from=requires_derived_from,
        forbids_cycles=forbids_cycles,
        declared_in=declared_in,
    )


# Shared, never mutated: the degraded-mode record of a bank without `dna/` (spec 01 §9.3).
EMPTY_CONTRACT = _contract((), {field: {} for field in ENUM_FIELDS}, (), False, False, {})


def parse_vocabulary(text: str) -> tuple[VocabularyRow, ...]:
    """Read the Russian-stem → English-words rows of `dna/vocabulary.md` (spec 01 §10)."""
    rows: list[VocabularyRow] = []
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped.startswith("|") or _VOCAB_SEPARATOR.fullmatch(stripped):
            continue
        cells = table_cells(stripped)
        if len(cells) < 2:
            continue
        left = cells[0].replace("`", "").strip().lower()
        if not _CYRILLIC.search(left):
            continue
        words = []
        for part in cells[1].replace("`", "").split(","):
            word = part.strip().lower()
            if _VOCAB_WORD.fullmatch(word):
                words.append(word)
        if words:
            rows.append(VocabularyRow(stem=left, words=tuple(words)))
    return tuple(rows)
