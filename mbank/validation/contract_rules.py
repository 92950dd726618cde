"""Contract rules: they apply only where the bank's `dna/` declares them (spec 02 §7.2).

"The server enforces the bank's rules, not its own": without `dna/` (degraded mode) the
contract is empty, so none of these fire and `no-contract` says so instead.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from mbank.model import Contract, Doc, Finding
from mbank.validation import finding

ACTIVE = "active"


def missing_derived_from(doc: Doc, contract: Contract) -> tuple[Finding, ...]:
    """Rule 3: an active non-root document without any `derived_from` edge, when required.

    "Any edge" counts every entry the parser kept, external and empty ones included: the
    document did declare its sources, and the other rules judge where they point.
    """
    if (
        not contract.requires_derived_from
        or doc.status != ACTIVE
        or doc.derived_from
        or doc.path in contract.roots
    ):
        return ()
    return (
        finding(
            "missing-derived-from",
            doc.path,
            "Governance requires every active non-root document to declare derived_from.",
        ),
    )


def _declared_sets(contract: Contract) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return (
        ("doc_kind", contract.doc_kinds),
        ("doc_function", contract.doc_functions),
        ("status", contract.statuses),
        ("delivery_status", contract.delivery_statuses),
        ("decision_status", contract.decision_statuses),
    )


def unknown_enum_values(doc: Doc, contract: Contract) -> tuple[Finding, ...]:
    """Rule 7: a field value outside the non-empty set `dna/` declares for that field."""
    if not contract.present:
        return ()
    values = (
        doc.doc_kind,
        doc.doc_function,
        doc.status,
        doc.delivery_status,
        doc.decision_status,
    )
    out: list[Finding] = []
    for (field, declared), value in zip(_declared_sets(contract), values, strict=True):
        if value and declared and value not in declared:
            listed = ", ".join(sorted(set(declared)))
            out.append(
                finding(
                    "unknown-enum-value",
                    doc.path,
                    f'{field}: "{value}" is not among the values declared in dna/ ({listed}).',
                )
            )
    return tuple(out)


class CycleScan(msgspec.Struct, frozen=True):
    """The cycle findings of a snapshot and the nodes lying on any cycle.

    `cyclic` is every node of a strongly connected component with a cycle (two or more
    nodes, or one with an edge to itself). Incremental validation uses it to prove that a
    change cannot move any cycle finding (see `mbank.validate`).
    """

    findings: tuple[Finding, ...]
    cyclic: frozenset[str]


def internal_targets(doc: Doc, docs: Mapping[str, Doc]) -> list[str]:
    """The targets of a document's internal edges (resolved to a document), in order."""
    return [
        edge.resolved
        for edge in doc.derived_from
        if edge.resolved is not None and edge.resolved in docs
    ]


def cycles_in_derived_from(docs: Mapping[str, Doc], contract: Contract) -> CycleScan:
    """Rule 4: the loops of the internal `derived_from` graph, when `dna/` forbids cycles.

    Iterative depth-first search (spec 02 §7.4): documents in path order, edges in declaration
    order, states new / on the stack / done. An edge from the current node to a node on the
    stack closes a loop: the stack from that node to the current one, then that node again.
    A loop whose sorted node set was already reported is skipped. The finding sits on the
    current node. The same walk runs Tarjan's algorithm to find every node on any cycle.
    """
    findings: list[Finding] = []
    cyclic: set[str] = set()
    if not contract.forbids_cycles:
        return CycleScan((), frozenset())
    reported: set[str] = set()
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    position: dict[str, int] = {}  # index on the DFS path
    order: dict[str, int] = {}  # Tarjan's discovery index
    low: dict[str, int] = {}
    component_stack: list[str] = []
    on_component_stack: set[str] = set()
    self_loops: set[str] = set()
    path: list[str] = []  # the DFS stack of nodes (state 1)
    work: list[tuple[str, list[str], int]] = []  # node, its targets, the next edge to follow

    def enter(node: str) -> None:
        state[node] = 1
        position[node] = len(path)
        path.append(node)
        order[node] = low[node] = len(order)
        component_stack.append(node)
        on_component_stack.add(node)
        work.append((node, internal_targets(docs[node], docs), 0))

    for start in docs:
        if start in state:
            continue
        enter(start)
        while work:
            node, targets, next_edge = work[-1]
            descended = False
            while next_edge < len(targets):
                target = targets[next_edge]
                next_edge += 1
                seen = state.get(target, 0)
                if seen == 0:
                    work[-1] = (node, targets, next_edge)
                    enter(target)
                    descended = True
                    break
                if seen == 1:
                    loop = path[position[target] :]
                    key = ">".join(sorted(loop))
                    if target == node:
                        self_loops.add(node)
                    if key not in reported:
                        reported.add(key)
                        shown = " -> ".join([*loop, target])
                        findings.append(
                            finding("cycle-in-derived-from", node, f"Cyclic derived_from: {shown}.")
                        )
                if target in on_component_stack:
                    low[node] = min(low[node], order[target])
            if descended:
                continue
            work.pop()
            path.pop()
            state[node] = 2
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == order[node]:
                component: list[str] = []
                while True:
                    member = component_stack.pop()
                    on_component_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in self_loops:
                    cyclic.update(component)
    return CycleScan(tuple(findings), frozenset(cyclic))
