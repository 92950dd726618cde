"""`bank_validate`: the bank checked against its own governance (spec 02 §7).

Three entry points, all pure functions of a snapshot:

- `findings(snapshot)` — every finding, unfiltered, in the spec's order (§7.5);
- `findings_for(snapshot, paths)` — the findings a plan touching `paths` can affect, for the
  write post-check (spec 03 §1.5);
- `validate(snapshot, scope=, severity=, rule=)` — the `bank_validate` result (§7.1).

The rules themselves live in `mbank.validation` (one function each). This module runs them,
keeps what it learned about a snapshot, and sorts.

**What is kept.** Validating a snapshot builds a `_State`: the findings of each document, the
unregistered documents, the `canonical_for` conflicts, the cycle scan, and reverse indexes
(which documents have edges, index links or rule claims pointing at a path, and which carry a
file name). States are cached by snapshot identity in a small LRU (`_CACHE_SIZE` entries); an
entry holds its snapshot, so an id can never be confused with another bank's.

**Incremental validation.** A snapshot that differs from a cached one in a few documents (the
virtual post-plan snapshot of a write, or the bank's next refresh after one) is validated by
copying the cached state and recomputing only what the changed documents can influence: the
changed documents themselves; documents whose edges, index links or rule claims resolve to a
changed path or name a changed file name; documents a changed index registers or registered;
the `canonical_for` keys a changed document owns or owned. The difference is never trusted
from a caller: it is computed from the texts (a C-level dict comparison when the caller's
`paths` are the whole difference). A change under `dna/` (contract, layers) or a large change
rebuilds from scratch. The result is, by construction and by test, the full validation.

**Cycles** are global: where the depth-first walk enters a strongly connected component
decides which loop is reported and on which node, so one new edge far away can move a finding
(spec 02 §7.4). The cached cycle scan is reused only when no changed document reaches a node
on a cycle, before or after the change, and no changed document lies on a cycle afterwards —
then no loop exists or disappears and no component is entered elsewhere; otherwise the walk
reruns over the whole graph.

**What `findings_for` returns.** For a plan touching `paths` (no `dna/` path): the per-document
findings (rules 1, 2, 3, 6, 7, 9, 10) of the touched paths and of every document whose
edges, index links or rule claims point at a touched path or its file name — a set that is the
same before and after the plan for every untouched document — plus *every* finding of the
rules whose subject the snapshot after a plan cannot trace back to the plan: `unregistered-doc`
(an index that stops linking a document no longer points at it), `ssot-conflict` (a deleted
owner no longer appears among the owners) and `cycle-in-derived-from` (above). The layer and
contract findings cannot change without a `dna/` path; with one, everything is returned. So
comparing `findings_for(S, paths)` with `findings_for(S', paths)` gives exactly the new (and
the resolved) findings that comparing two full validations gives.
"""

from __future__ import annotations

import bisect
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

from mbank.catalogue import shipped_template_names
from mbank.model import TEMPLATE_FUNCTION, Doc, Finding, RefusalError
from mbank.paths import in_scope, refuse
from mbank.paths import normalise_scope as normalise_scope
from mbank.projection import Snapshot
from mbank.validation import ERROR, RULE_ORDER, RULES, SEVERITIES, WARNING, file_name
from mbank.validation.contract_rules import (
    CycleScan,
    cycles_in_derived_from,
    internal_targets,
    missing_derived_from,
    unknown_enum_values,
)
from mbank.validation.declaration import no_contract, unknown_layer_values
from mbank.validation.references import (
    Claim,
    claim_name,
    claim_target,
    scan_claims,
    unresolved_rule_references,
)
from mbank.validation.structural import (
    broken_derived_from,
    dangling_index_entries,
    invalid_frontmatter,
    is_index,
    must_not_define_violated,
    ssot_conflict,
    unregistered_doc,
)

DNA_PREFIX = "dna/"
_CACHE_SIZE = 4
# A difference larger than this share of the bank is validated from scratch.
_INCREMENTAL_SHARE = 8
_INCREMENTAL_MINIMUM = 64

SortKey = tuple[int, str, int, int]
Refs = dict[str, tuple[str, ...]]


# --------------------------------------------------------------------------------------------
# Per-document findings
# --------------------------------------------------------------------------------------------


def _document_findings(
    doc: Doc,
    snapshot: Snapshot,
    claims: tuple[Claim, ...],
    names: Mapping[str, tuple[str, ...]],
    shipped: frozenset[str],
) -> tuple[Finding, ...]:
    """The findings of the per-document rules except `unregistered-doc`, in rule order."""
    docs = snapshot.docs
    contract = snapshot.contract
    return (
        *invalid_frontmatter(doc),
        *broken_derived_from(doc, docs),
        *missing_derived_from(doc, contract),
        *unresolved_rule_references(doc, claims, docs, names, shipped),
        *unknown_enum_values(doc, contract),
        *must_not_define_violated(doc),
        *dangling_index_entries(doc, docs),
    )


def _claims_of(doc: Doc, snapshot: Snapshot) -> tuple[Claim, ...]:
    if not doc.text_ok or doc.doc_function == TEMPLATE_FUNCTION:
        return ()
    return scan_claims(snapshot.raw.get(doc.path, ""))


def _edge_targets(doc: Doc | None) -> set[str]:
    if doc is None:
        return set()
    return {edge.resolved for edge in doc.derived_from if edge.resolved is not None}


def _index_link_targets(doc: Doc | None) -> set[str]:
    if doc is None or not is_index(doc):
        return set()
    return {link.to for link in doc.links if link.to is not None}


def _claim_targets(path: str, claims: tuple[Claim, ...]) -> set[str]:
    targets = {claim_target(path, claim) for claim in claims}
    return {target for target in targets if target is not None}


def _claim_names(claims: tuple[Claim, ...]) -> set[str]:
    return {claim_name(claim) for claim in claims}


def _add_refs(index: dict[str, list[str]], keys: Iterable[str], path: str) -> None:
    for key in keys:
        index.setdefault(key, []).append(path)


def _frozen(index: dict[str, list[str]]) -> Refs:
    return {key: tuple(paths) for key, paths in index.items()}


def _replace_refs(index: Refs, before: set[str], after: set[str], path: str) -> None:
    """Move `path` from the entries of `before` keys to those of `after` keys (copied index)."""
    for key in before - after:
        kept = tuple(holder for holder in index.get(key, ()) if holder != path)
        if kept:
            index[key] = kept
        else:
            index.pop(key, None)
    for key in after - before:
        holders = index.get(key, ())
        if path not in holders:
            index[key] = (*holders, path)


# --------------------------------------------------------------------------------------------
# The state kept per snapshot
# --------------------------------------------------------------------------------------------


class _State:
    """Everything validation learned about one snapshot (cached; never shared across banks).

    Not a frozen record: it is a cache entry private to this module, filled once by `_build`
    or `_derive` and then only read, except for the lazily sorted full list.
    """

    __slots__ = (
        "_sorted",
        "claim_name_refs",
        "claim_target_refs",
        "claims",
        "conflicts",
        "cycles",
        "declared",
        "edge_refs",
        "empty",
        "link_refs",
        "names",
        "per_doc",
        "snapshot",
        "unregistered",
    )

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.names: Refs = {}  # file name -> documents carrying it
        self.edge_refs: Refs = {}  # resolved edge target -> documents with that edge
        self.link_refs: Refs = {}  # resolved link target -> index documents linking it
        self.claims: dict[str, tuple[Claim, ...]] = {}  # document -> its rule claims
        self.claim_target_refs: Refs = {}  # resolved claim path -> documents claiming it
        self.claim_name_refs: Refs = {}  # claimed file name -> documents claiming it
        self.empty: frozenset[str] = frozenset()  # documents whose text is "" (non-text too)
        self.per_doc: dict[str, tuple[Finding, ...]] = {}  # only documents with findings
        self.unregistered: dict[str, Finding] = {}
        self.conflicts: dict[str, Finding] = {}  # canonical key -> its ssot-conflict
        self.cycles = CycleScan((), frozenset())
        self.declared: tuple[Finding, ...] = ()  # unknown-layer-value, no-contract
        self._sorted: tuple[Finding, ...] | None = None

    def recompute(self, path: str, shipped: frozenset[str]) -> None:
        """Re-run the per-document rules on one document (or forget it when it is gone)."""
        doc = self.snapshot.docs.get(path)
        if doc is None:
            self.per_doc.pop(path, None)
            self.unregistered.pop(path, None)
            return
        found = _document_findings(
            doc, self.snapshot, self.claims.get(path, ()), self.names, shipped
        )
        if found:
            self.per_doc[path] = found
        else:
            self.per_doc.pop(path, None)
        unregistered = unregistered_doc(doc)
        if unregistered:
            self.unregistered[path] = unregistered[0]
        else:
            self.unregistered.pop(path, None)

    def conflict_keys(self) -> list[tuple[SortKey, Finding]]:
        """The `ssot-conflict` findings with their sort keys (emission = first-seen order)."""
        docs = self.snapshot.docs
        out = []
        for key, item in self.conflicts.items():
            first_owner = docs[item.path]
            out.append((_sort_key(item, first_owner.canonical_for.index(key)), item))
        return out

    def items(self, paths: Iterable[str] | None) -> list[tuple[SortKey, Finding]]:
        """Sortable findings: every one (`paths` None) or those selected for `paths`."""
        selected: list[tuple[SortKey, Finding]] = []
        per_doc = self.per_doc
        documents = per_doc if paths is None else paths
        for path in documents:
            for emitted, item in enumerate(per_doc.get(path, ())):
                selected.append((_sort_key(item, emitted), item))
        selected.extend((_sort_key(item, 0), item) for item in self.unregistered.values())
        selected.extend(self.conflict_keys())
        selected.extend(
            (_sort_key(item, emitted), item) for emitted, item in enumerate(self.cycles.findings)
        )
        if paths is None:
            selected.extend(
                (_sort_key(item, emitted), item) for emitted, item in enumerate(self.declared)
            )
        return selected

    def all_findings(self) -> tuple[Finding, ...]:
        """Every finding in the spec's order, sorted once."""
        if self._sorted is None:
            self._sorted = _in_order(self.items(None))
        return self._sorted


def _sort_key(item: Finding, emitted: int) -> SortKey:
    return (RULE_ORDER[item.rule], item.path, item.line or 0, emitted)


def _in_order(items: list[tuple[SortKey, Finding]]) -> tuple[Finding, ...]:
    items.sort(key=lambda pair: pair[0])
    return tuple(item for _key, item in items)


def _build(snapshot: Snapshot) -> _State:
    """Validate a snapshot from scratch."""
    state = _State(snapshot)
    docs = snapshot.docs
    names: dict[str, list[str]] = {}
    edge_refs: dict[str, list[str]] = {}
    link_refs: dict[str, list[str]] = {}
    claim_target_refs: dict[str, list[str]] = {}
    claim_name_refs: dict[str, list[str]] = {}
    for path, doc in docs.items():
        names.setdefault(file_name(path), []).append(path)
        if doc.derived_from:
            _add_refs(edge_refs, _edge_targets(doc), path)
        if doc.links:
            _add_refs(link_refs, _index_link_targets(doc), path)
        claims = _claims_of(doc, snapshot)
        if claims:
            state.claims[path] = claims
            _add_refs(claim_target_refs, _claim_targets(path, claims), path)
            _add_refs(claim_name_refs, _claim_names(claims), path)
    state.names = _frozen(names)
    state.edge_refs = _frozen(edge_refs)
    state.link_refs = _frozen(link_refs)
    state.claim_target_refs = _frozen(claim_target_refs)
    state.claim_name_refs = _frozen(claim_name_refs)
    state.empty = frozenset(path for path, text in snapshot.raw.items() if not text)
    shipped = shipped_template_names()
    for path in docs:
        state.recompute(path, shipped)
    for key, holders in snapshot.owners.items():
        if len(holders) > 1:
            state.conflicts[key] = ssot_conflict(key, holders)
    state.cycles = cycles_in_derived_from(docs, snapshot.contract)
    state.declared = (*unknown_layer_values(snapshot.layers), *no_contract(snapshot.contract))
    return state


# --------------------------------------------------------------------------------------------
# Incremental validation
# --------------------------------------------------------------------------------------------


def _difference(
    old: Snapshot, new: Snapshot, empty: frozenset[str], hint: frozenset[str] | None
) -> set[str] | None:
    """The documents whose content differs between two snapshots of one bank, or None.

    None means "validate from scratch": another bank, a `dna/` change, or a large change.
    `hint` (a caller's touched paths) is checked with one C-level comparison of the texts
    outside it; when it does not cover the difference, the difference is computed.
    """
    if old.root != new.root or old.real_root != new.real_root:
        return None
    changed: set[str] | None = None
    if hint is not None and _same_outside(old.raw, new.raw, hint):
        changed = set(hint)
    if changed is None:
        old_raw = old.raw
        changed = {
            path
            for path, text in new.raw.items()
            if old_raw.get(path) is not text and old_raw.get(path) != text
        }
        changed.update(path for path in old_raw if path not in new.raw)
        limit = max(_INCREMENTAL_MINIMUM, len(new.raw) // _INCREMENTAL_SHARE)
        if len(changed) > limit:
            return None
    # Two non-text files (or an empty file and a non-text one) both have the text "".
    for path in empty - changed:
        before_doc, after_doc = old.docs.get(path), new.docs.get(path)
        if before_doc is None or after_doc is None or before_doc.sha256 != after_doc.sha256:
            changed.add(path)
    if any(path.startswith(DNA_PREFIX) for path in changed):
        return None
    return changed


def _without(mapping: Mapping[str, str], hint: frozenset[str]) -> tuple[list[str], list[str]]:
    """The keys and values of `mapping` in order, the `hint` keys taken out."""
    keys, values = list(mapping), list(mapping.values())
    found = []
    for key in hint:
        # snapshots keep paths sorted; if one does not, a key is simply not found here and
        # stays in, and the comparison below falls back to the exact difference
        at = bisect.bisect_left(keys, key)
        if at < len(keys) and keys[at] == key:
            found.append(at)
    for at in sorted(found, reverse=True):
        del keys[at]
        del values[at]
    return keys, values


def _same_outside(
    before: Mapping[str, str], after: Mapping[str, str], hint: frozenset[str]
) -> bool:
    """Whether two text maps are equal outside `hint` (list comparisons in C, identity first)."""
    return _without(before, hint) == _without(after, hint)


def _reach(docs: Mapping[str, Doc], starts: Iterable[str]) -> set[str]:
    """The documents reachable from `starts` (included) along internal edges."""
    seen: set[str] = set()
    pending = [path for path in starts if path in docs]
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        pending.extend(internal_targets(docs[path], docs))
    return seen


def _cycles_after(previous: _State, snapshot: Snapshot, changed: set[str]) -> CycleScan:
    """The cycle scan of `snapshot`, reusing the previous one when the change cannot move it."""
    if not snapshot.contract.forbids_cycles:
        return CycleScan((), frozenset())
    old_docs, docs = previous.snapshot.docs, snapshot.docs
    cyclic = previous.cycles.cyclic
    reusable = True
    if cyclic and (_reach(old_docs, changed) & cyclic or _reach(docs, changed) & cyclic):
        reusable = False
    if reusable:
        for path in changed:
            doc = docs.get(path)
            if doc is not None and path in _reach(docs, internal_targets(doc, docs)):
                reusable = False
                break
    if reusable:
        return previous.cycles
    return cycles_in_derived_from(docs, snapshot.contract)


def _moved(index: Refs, moves: list[tuple[set[str], set[str], str]]) -> Refs:
    """`index` with each path moved from its old keys to its new ones; copied only if needed."""
    moves = [move for move in moves if move[0] != move[1]]
    if not moves:
        return index
    out = dict(index)
    for before, after, path in moves:
        _replace_refs(out, before, after, path)
    return out


def _is_template(doc: Doc | None) -> bool:
    return doc is not None and doc.doc_function == TEMPLATE_FUNCTION


def _derive(previous: _State, snapshot: Snapshot, changed: set[str]) -> _State:
    """Validate `snapshot` from the state of a snapshot it differs from only in `changed`.

    Besides the changed documents, a document is re-validated when its outcome can depend on
    the change: when a changed path appears or disappears, the documents whose edges, index
    links or rule claims resolve to it and the claims naming its file name; when a carrier
    becomes or stops being a template, the claims naming its file name; when an index
    changes, the documents it links or linked.
    """
    old = previous.snapshot
    old_docs, docs = old.docs, snapshot.docs
    state = _State(snapshot)
    state.declared = previous.declared
    state.per_doc = dict(previous.per_doc)
    state.unregistered = dict(previous.unregistered)

    names: list[tuple[set[str], set[str], str]] = []
    edges: list[tuple[set[str], set[str], str]] = []
    links: list[tuple[set[str], set[str], str]] = []
    claim_targets: list[tuple[set[str], set[str], str]] = []
    claim_names: list[tuple[set[str], set[str], str]] = []
    claims: dict[str, tuple[Claim, ...]] = {}
    appeared: set[str] = set()  # paths that exist on one side only
    renamed: set[str] = set()  # file names whose carriers changed
    affected = set(changed)
    keys: set[str] = set()
    empty = set(previous.empty)
    for path in changed:
        before, after = old_docs.get(path), docs.get(path)
        name = file_name(path)
        if (before is None) != (after is None):
            appeared.add(path)
            renamed.add(name)
        elif _is_template(before) != _is_template(after):
            renamed.add(name)
        names.append(
            ({name} if before is not None else set(), {name} if after is not None else set(), path)
        )
        edges.append((_edge_targets(before), _edge_targets(after), path))
        before_links, after_links = _index_link_targets(before), _index_link_targets(after)
        links.append((before_links, after_links, path))
        # registration: a document a changed index stopped or started linking
        affected |= before_links ^ after_links
        old_claims = previous.claims.get(path, ())
        new_claims = _claims_of(after, snapshot) if after is not None else ()
        if new_claims != old_claims:
            claims[path] = new_claims
        claim_targets.append(
            (_claim_targets(path, old_claims), _claim_targets(path, new_claims), path)
        )
        claim_names.append((_claim_names(old_claims), _claim_names(new_claims), path))
        if after is not None and not snapshot.raw.get(path):
            empty.add(path)
        else:
            empty.discard(path)
        keys.update(before.canonical_for if before is not None else ())
        keys.update(after.canonical_for if after is not None else ())

    state.names = _moved(previous.names, names)
    state.edge_refs = _moved(previous.edge_refs, edges)
    state.link_refs = _moved(previous.link_refs, links)
    state.claim_target_refs = _moved(previous.claim_target_refs, claim_targets)
    state.claim_name_refs = _moved(previous.claim_name_refs, claim_names)
    state.claims = previous.claims
    if claims:
        state.claims = dict(previous.claims)
        for path, found in claims.items():
            if found:
                state.claims[path] = found
            else:
                state.claims.pop(path, None)
    state.empty = previous.empty if empty == previous.empty else frozenset(empty)
    for path in appeared:
        affected.update(state.edge_refs.get(path, ()))
        affected.update(state.link_refs.get(path, ()))
        affected.update(state.claim_target_refs.get(path, ()))
    for name in renamed:
        affected.update(state.claim_name_refs.get(name, ()))

    shipped = shipped_template_names()
    for path in affected:
        state.recompute(path, shipped)
    state.conflicts = previous.conflicts
    if keys:
        state.conflicts = dict(previous.conflicts)
        for key in keys:
            holders = snapshot.owners.get(key, ())
            if len(holders) > 1:
                state.conflicts[key] = ssot_conflict(key, holders)
            else:
                state.conflicts.pop(key, None)
    state.cycles = _cycles_after(previous, snapshot, changed)
    return state


# --------------------------------------------------------------------------------------------
# The cache
# --------------------------------------------------------------------------------------------

_states: OrderedDict[int, _State] = OrderedDict()
_states_lock = threading.Lock()


def _state_of(snapshot: Snapshot, hint: frozenset[str] | None = None) -> _State:
    """The validation state of a snapshot: cached, derived from a cached one, or built."""
    with _states_lock:
        cached = _states.get(id(snapshot))
        if cached is not None and cached.snapshot is snapshot:
            _states.move_to_end(id(snapshot))
            return cached
        candidates = [
            state for state in reversed(_states.values()) if state.snapshot.root == snapshot.root
        ]
    state: _State | None = None
    for previous in candidates[:2]:
        changed = _difference(previous.snapshot, snapshot, previous.empty, hint)
        if changed is not None:
            state = _derive(previous, snapshot, changed)
            break
    if state is None:
        state = _build(snapshot)
    with _states_lock:
        _states[id(snapshot)] = state
        _states.move_to_end(id(snapshot))
        while len(_states) > _CACHE_SIZE:
            _states.popitem(last=False)
    return state


def clear_cache() -> None:
    """Forget every cached validation state (tests and benchmarks measure cold runs)."""
    with _states_lock:
        _states.clear()


# --------------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------------


def findings(snapshot: Snapshot) -> tuple[Finding, ...]:
    """Every finding of the snapshot, unfiltered, in the spec's order (02 §7.5)."""
    return _state_of(snapshot).all_findings()


def findings_uncached(snapshot: Snapshot) -> tuple[Finding, ...]:
    """Every finding, validated from scratch with no cache (the reference for tests)."""
    return _build(snapshot).all_findings()


def findings_for(snapshot: Snapshot, paths: Iterable[str]) -> tuple[Finding, ...]:
    """The findings a plan touching `paths` can affect, in the spec's order (03 §1.5).

    Comparing `findings_for(S, paths)` with `findings_for(S', paths)` gives what comparing
    two full validations gives; the module docstring says what is selected and why.
    """
    touched = frozenset(paths)
    state = _state_of(snapshot, touched)
    if any(path.startswith(DNA_PREFIX) for path in touched):
        return state.all_findings()
    selected = set(touched)
    for path in touched:
        selected.update(state.edge_refs.get(path, ()))
        selected.update(state.link_refs.get(path, ()))
        selected.update(state.claim_target_refs.get(path, ()))
        selected.update(state.claim_name_refs.get(file_name(path), ()))
    return _in_order(state.items(sorted(selected)))


def _scope_filter(state: _State, scope: str) -> Any:
    """Whether a finding is in scope (02 §7.5): by its path; an `ssot-conflict` by any owner;
    `no-contract` always."""
    owners = {id(item): state.snapshot.owners[key] for key, item in state.conflicts.items()}

    def keep(item: Finding) -> bool:
        if item.rule == "no-contract":
            return True
        paths = owners.get(id(item), (item.path,))
        return any(in_scope(path, scope) for path in paths)

    return keep


def finding_json(item: Finding) -> dict[str, Any]:
    """A finding as the tools publish it: `{severity, rule, path, message, line?}`."""
    out: dict[str, Any] = {
        "severity": item.severity,
        "rule": item.rule,
        "path": item.path,
        "message": item.message,
    }
    if item.line is not None:
        out["line"] = item.line
    return out


def summarise(selected: Iterable[Finding]) -> dict[str, Any]:
    """`{total, errors, warnings, byRule, findings}` for findings already filtered."""
    chosen = list(selected)
    counts = dict.fromkeys(RULES, 0)
    for item in chosen:
        counts[item.rule] += 1
    return {
        "total": len(chosen),
        "errors": sum(1 for item in chosen if item.severity == ERROR),
        "warnings": sum(1 for item in chosen if item.severity == WARNING),
        "byRule": {rule: count for rule, count in counts.items() if count},
        "findings": [finding_json(item) for item in chosen],
    }


def validate(
    snapshot: Snapshot,
    *,
    scope: str | None = None,
    severity: str | None = None,
    rule: str | None = None,
) -> dict[str, Any]:
    """The `bank_validate` result (02 §7.1): scope, then severity and rule filters; counts after.

    An unknown `severity` or `rule` is refused (the published schema's enums keep them out).
    """
    if severity is not None and severity not in SEVERITIES:
        raise _unknown("severity", severity, SEVERITIES)
    if rule is not None and rule not in RULE_ORDER:
        raise _unknown("rule", rule, RULES)
    state = _state_of(snapshot)
    chosen: Iterable[Finding] = state.all_findings()
    where = normalise_scope(scope)
    if where is not None:
        chosen = list(filter(_scope_filter(state, where), chosen))
    if severity is not None:
        chosen = [item for item in chosen if item.severity == severity]
    if rule is not None:
        chosen = [item for item in chosen if item.rule == rule]
    return summarise(chosen)


def _unknown(name: str, value: str, allowed: Iterable[str]) -> RefusalError:
    return refuse(f"invalid-{name}", f"Unknown {name} {value!r}; use one of: {', '.join(allowed)}.")


# --------------------------------------------------------------------------------------------
# Output for people (spec 04 §9.3)
# --------------------------------------------------------------------------------------------


GROUP_AFTER = 3  # a rule with more findings than this prints a count and its first paths


def _where(item: dict[str, Any]) -> str:
    return str(item["path"]) + (f":{item['line']}" if "line" in item else "")


def _finding_lines(findings: list[dict[str, Any]], *, grouped: bool) -> list[str]:
    """Each finding as two lines; with `grouped`, a rule seen more than `GROUP_AFTER` times
    at one severity prints once: its count, its first three paths and its first message."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for item in findings:
        groups.setdefault((item["severity"], item["rule"]), []).append(item)
    lines: list[str] = []
    for (severity, rule), items in groups.items():
        if not grouped or len(items) <= GROUP_AFTER:
            for item in items:
                lines.append(f"{severity.upper():<7} {rule:<24} {_where(item)}")
                lines.append(" " * 8 + item["message"])
            continue
        first = ", ".join(_where(item) for item in items[:GROUP_AFTER])
        lines.append(f"{severity.upper():<7} {rule:<24} {len(items)} findings: {first}, …")
        lines.append(" " * 8 + items[0]["message"])
        lines.append(" " * 8 + f"(`validate --rule {rule}` lists all {len(items)})")
    return lines


def _totals_by_rule(findings: list[dict[str, Any]]) -> list[str]:
    """Per rule, by count descending: its errors and its warnings, in two columns."""
    split: dict[str, list[int]] = {}
    for item in findings:
        counts = split.setdefault(item["rule"], [0, 0])
        counts[0 if item["severity"] == ERROR else 1] += 1
    ranked = sorted(split.items(), key=lambda pair: (-sum(pair[1]), RULE_ORDER[pair[0]]))
    if not ranked:
        return []
    return ["  errors  warnings  rule"] + [
        f"  {errors:>6}  {warnings:>8}  {rule}" for rule, (errors, warnings) in ranked
    ]


def format_validation(
    result: dict[str, Any], *, summary: bool = False, grouped: bool = True
) -> str:
    """The human rendering of a `validate` result; `summary` keeps only the totals.

    Findings of one rule and severity repeated more than `GROUP_AFTER` times are grouped
    (unless `grouped` is False: `--rule` asks for every one). With no findings the list and
    its blank line are left out: the output is `total: 0`. The totals split each rule's
    count into errors and warnings.
    """
    lines: list[str] = []
    if not summary and result["findings"]:
        lines.extend(_finding_lines(result["findings"], grouped=grouped))
        lines.append("")
    lines.append(f"total: {result['total']}")
    lines.extend(_totals_by_rule(result["findings"]))
    return "\n".join(lines) + "\n"


def fails(result: dict[str, Any], fail_on: str | None) -> bool:
    """Whether `--fail-on` trips: any error for `error`; any error or warning for `warning`."""
    if fail_on == ERROR:
        return bool(result["errors"])
    if fail_on == WARNING:
        return bool(result["errors"] or result["warnings"])
    return False
