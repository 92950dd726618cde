"""Declaration rules: findings about what `dna/` declares, or fails to (spec 02 §7.2)."""

from __future__ import annotations

from mbank.contract import KNOWN_LAYERS
from mbank.model import Contract, Finding, LayerMap
from mbank.validation import finding

NO_CONTRACT_PATH = "dna/"


def unknown_layer_values(layers: LayerMap) -> tuple[Finding, ...]:
    """Rule 11: a layer-table row naming a layer mbank does not know, on the declaring file."""
    known = ", ".join(KNOWN_LAYERS)
    return tuple(
        finding(
            "unknown-layer-value",
            row.source,
            f'"{row.dir}" is declared as layer "{row.layer}", which is not one of {known}. '
            f'The row is ignored and "{row.dir}" keeps its default layer.',
        )
        for row in layers.unknown
    )


def no_contract(contract: Contract) -> tuple[Finding, ...]:
    """Rule 12: the bank has no `dna/`, so the contract rules are not applied."""
    if contract.present:
        return ()
    return (
        finding(
            "no-contract",
            NO_CONTRACT_PATH,
            "This bank has no dna/ directory, so contract-dependent rules (missing "
            "derived_from, cycles, declared values) are not applied.",
        ),
    )
