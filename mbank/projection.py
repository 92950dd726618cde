"""The projection as a value: one bank at one moment, built from documents already read.

Pure: nothing here touches the disk, the clock or the environment. `mbank.snapshot.Bank` walks
the bank and reads what moved; `build_snapshot` derives every map of spec 01 §7 from what it
handed over. Gates and reducers import `Snapshot` from here so that reaching the projection
never reaches the walk (tests/test_pure_core.py proves it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import msgspec

from mbank.contract import (
    EMPTY_CONTRACT,
    EMPTY_LAYERS,
    layer_of,
    parse_contract,
    parse_layers,
    parse_vocabulary,
)
from mbank.model import INDEX_FUNCTION, Contract, Doc, LayerMap, Link, VocabularyRow

VOCABULARY_PATH = "dna/vocabulary.md"


class Snapshot(msgspec.Struct, frozen=True):
    """An immutable projection of one bank at one moment (ARCHITECTURE.md)."""

    root: str
    real_root: str
    docs: dict[str, Doc]
    raw: dict[str, str]
    contract: Contract
    layers: LayerMap
    incoming: dict[str, tuple[str, ...]]
    owners: dict[str, tuple[str, ...]]
    index_links: tuple[Link, ...]
    vocabulary: tuple[VocabularyRow, ...]
    generation: int

    @property
    def paths(self) -> list[str]:
        """Document paths in code-point order (the walk's order)."""
        return list(self.docs)


class ParsedDocument(Protocol):
    """What `build_snapshot` reads of one document: its parsed record and its decoded text."""

    @property
    def doc(self) -> Doc: ...

    @property
    def text(self) -> str: ...


def build_snapshot(
    root: str, real_root: str, cached: Mapping[str, ParsedDocument], generation: int
) -> Snapshot:
    """Derive every map of spec 01 §7 from the parsed documents (sorted by path)."""
    base: dict[str, Doc] = {path: entry.doc for path, entry in cached.items()}
    raw: dict[str, str] = {path: entry.text for path, entry in cached.items()}

    incoming_sets: dict[str, set[str]] = {}
    owners_lists: dict[str, list[str]] = {}
    for path, doc in base.items():
        for edge in doc.derived_from:
            if edge.resolved is not None and edge.resolved in base:
                incoming_sets.setdefault(edge.resolved, set()).add(path)
        for key in doc.canonical_for:
            holders = owners_lists.setdefault(key, [])
            if path not in holders:
                holders.append(path)
    incoming = {target: tuple(sorted(paths)) for target, paths in sorted(incoming_sets.items())}
    owners = {key: tuple(paths) for key, paths in owners_lists.items()}

    registered: dict[str, set[str]] = {}
    index_links: list[Link] = []
    for path, doc in base.items():
        if doc.doc_function != INDEX_FUNCTION and path.rsplit("/", 1)[-1] != "README.md":
            continue
        for link in doc.links:
            index_links.append(link)
            if link.to is not None and link.to in base and link.to != path:
                registered.setdefault(link.to, set()).add(path)

    dna_texts = [(path, raw[path]) for path, doc in base.items() if path.startswith("dna/")]
    dna_texts = [(path, text) for path, text in dna_texts if base[path].text_ok]
    if dna_texts:
        contract = parse_contract(dna_texts, "dna/principles.md" in base)
        layers = parse_layers(dna_texts)
    else:
        contract, layers = EMPTY_CONTRACT, EMPTY_LAYERS
    vocabulary_doc = base.get(VOCABULARY_PATH)
    vocabulary = (
        parse_vocabulary(raw[VOCABULARY_PATH])
        if vocabulary_doc is not None and vocabulary_doc.text_ok
        else ()
    )

    docs: dict[str, Doc] = {}
    for path, doc in base.items():
        layer = layer_of(path, layers)
        registered_in = tuple(sorted(registered.get(path, ())))
        if layer != doc.layer or registered_in != doc.registered_in:
            doc = msgspec.structs.replace(doc, layer=layer, registered_in=registered_in)
        docs[path] = doc
    return Snapshot(
        root=root,
        real_root=real_root,
        docs=docs,
        raw=raw,
        contract=contract,
        layers=layers,
        incoming=incoming,
        owners=owners,
        index_links=tuple(index_links),
        vocabulary=vocabulary,
        generation=generation,
    )
