"""`can_do`: route an intent to the memory's tools, or say why not (06 §11.2)."""

from __future__ import annotations

import heapq
import uuid
from collections.abc import Callable
from typing import Any, Final

import msgspec

from mbank.memo.graph import blockers_of, blocking_open, is_load_bearing
from mbank.memo.model import (
    CLOSED,
    HOTTEST,
    MAX_BODY_BYTES,
    MAX_TITLE_CHARS,
    OPEN,
    STATUSES,
)
from mbank.memo.reducer import MemoState
from mbank.memo.salience import salience
from mbank.memo.stems import english_stem, folded_words, spanish_stem, spanish_stems
from mbank.memo.timestamps import iso_millis
from mbank.memo.views import stats
from mbank.package_data import tsv_rows

CONFIDENCE_FLOOR: Final = 0.15
VALID_STATIC_S: Final = 240.0
VALID_TARGET_S: Final = 20.0
SOURCE: Final = "mbank-memo"
READS: Final = ("read_pending", "read_related", "read_item")


class Capability(msgspec.Struct, frozen=True):
    """One catalogue entry: its tool and what it costs.

    The words that call for it are data, in `capability_words.tsv` beside this module: English
    and Spanish, accent-free (issue 19). A matched verb weighs `VERB_WEIGHT`, a noun
    `NOUN_WEIGHT`, a `weak` word (an item kind, a generic reading verb) `WEAK_WEIGHT` — the
    action an agent asks for outweighs the things it names; a `modal` word (both languages:
    "allowed", "puedo") `MODAL_WEIGHT`, above any one verb.
    """

    name: str
    latency_ms: int
    takes_node: bool = False
    side_effects: tuple[str, ...] = ()
    constraints: dict[str, Any] = {}


MODAL_WEIGHT: Final = 4.0
VERB_WEIGHT: Final = 3.0
NOUN_WEIGHT: Final = 1.0
WEAK_WEIGHT: Final = 0.5
# confidence = score / (score + CONFIDENCE_HALF): one verb and one noun → 0.57; never 1.0,
# which stays the mark of an intent naming the tool as its `action`.
CONFIDENCE_HALF: Final = 3.0

CATALOGUE: Final = (
    Capability(
        "read_pending",
        latency_ms=5,
    ),
    Capability(
        "read_related",
        latency_ms=15,
        takes_node=True,
    ),
    Capability(
        "read_item",
        latency_ms=5,
        takes_node=True,
    ),
    Capability(
        "do_remember",
        latency_ms=20,
        side_effects=("stores one item in volatile memory",),
        constraints={"max_title_chars": MAX_TITLE_CHARS, "max_body_bytes": MAX_BODY_BYTES},
    ),
    Capability(
        "do_update_item",
        latency_ms=10,
        takes_node=True,
        side_effects=("changes one item in volatile memory",),
        constraints={"enum_values": list(STATUSES)},
    ),
    Capability(
        "do_link",
        latency_ms=10,
        takes_node=True,
        side_effects=("adds or removes one edge in volatile memory",),
        constraints={"min": 0.0, "max": 1.0, "unit": "weight"},
    ),
    Capability(
        "do_forget",
        latency_ms=10,
        takes_node=True,
        side_effects=("deletes one item and its edges from volatile memory",),
    ),
    Capability(
        "can_do",
        latency_ms=5,
    ),
    Capability(
        "do_spill",
        latency_ms=50,
        side_effects=("writes one note into the bank's _inbox/",),
    ),
)
MUTATING: Final = ("do_remember", "do_update_item", "do_link", "do_forget")


WEIGHTS: Final = {
    "verb": VERB_WEIGHT,
    "noun": NOUN_WEIGHT,
    "weak": WEAK_WEIGHT,
    "modal": MODAL_WEIGHT,
}
LANGUAGES: Final = {"en": ("en",), "es": ("es",), "both": ("en", "es")}


def _keyword_index() -> dict[tuple[str, str], list[tuple[str, float]]]:
    """`(language, stem) → [(capability, weight)]`: exact stems, no hashing, no collisions."""
    names = {cap.name for cap in CATALOGUE}
    index: dict[tuple[str, str], dict[str, float]] = {}
    for name, weight_kind, language, words in tsv_rows("mbank.memo", "capability_words.tsv"):
        if name not in names or weight_kind not in WEIGHTS or language not in LANGUAGES:
            raise ValueError(f"capability_words.tsv: no such capability/weight/language: {name}")
        weight = WEIGHTS[weight_kind]
        for lang in LANGUAGES[language]:
            for word in words.split():
                stem = english_stem(word) if lang == "en" else spanish_stem(word)
                slot = index.setdefault((lang, stem), {})
                slot[name] = max(slot.get(name, 0.0), weight)
    return {key: sorted(caps.items()) for key, caps in index.items()}


_KEYWORDS: Final = _keyword_index()


def intent_scores(text: str) -> dict[str, float]:
    """Each capability's score for `text`: per distinct word, the heaviest keyword it matches
    (English stem against English keywords, Spanish stems against Spanish ones)."""
    best: dict[str, dict[str, float]] = {}
    for word in dict.fromkeys(folded_words(text)):
        keys = [("en", english_stem(word))] + [("es", s) for s in spanish_stems(word)]
        for key in keys:
            for cap, weight in _KEYWORDS.get(key, ()):
                per_word = best.setdefault(cap, {})
                per_word[word] = max(per_word.get(word, 0.0), weight)
    return {cap: sum(words.values()) for cap, words in best.items()}


def intent_confidence(score: float) -> float:
    """`score / (score + CONFIDENCE_HALF)`, rounded to 4 decimals."""
    return round(score / (score + CONFIDENCE_HALF), 4)


def _text_of(intent: dict[str, Any]) -> str:
    parts = [intent.get(k) for k in ("goal", "intent", "text", "action")]
    return " ".join(p for p in parts if isinstance(p, str) and p.strip())


def _target_of(intent: dict[str, Any]) -> str | None:
    for key in ("node_id", "id"):
        value = intent.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _details(state: MemoState, ids: list[str]) -> list[str]:
    return [f"{i}: {state.nodes[i].title}" for i in ids[:5]]


def can_do(
    state: MemoState,
    intent: dict[str, Any],
    scope: list[str] | None,
    *,
    now: float,
    half_life_h: float,
    started_at: float,
    spill_enabled: bool,
    elapsed_ms: Callable[[], float],
) -> dict[str, Any]:
    """The `can_do` result: `{query_id, feasible, candidates, blocked, unroutable, context,
    metadata}`."""
    catalogue = [c for c in CATALOGUE if spill_enabled or c.name != "do_spill"]
    if scope is not None:
        wanted = set(scope)
        catalogue = [c for c in catalogue if c.name in wanted]
    text = _text_of(intent)
    target = _target_of(intent)
    action = intent.get("action") if isinstance(intent.get("action"), str) else None
    status = intent.get("status") if "status" in intent else None
    timestamp = iso_millis(now)
    current = {"value": stats(state), "unit": "items", "timestamp": timestamp}
    valid_until = iso_millis(now + (VALID_TARGET_S if target else VALID_STATIC_S))

    candidates: list[tuple[float, int, dict[str, Any]]] = []
    blocked: list[dict[str, Any]] = []
    unroutable: list[dict[str, Any]] = []
    target_node = state.nodes.get(target) if target else None
    open_blockers: list[str] = []
    if target_node is not None:
        open_blockers = blockers_of(state, target_node.id)

    if not text and not action and not target:
        unroutable.append(
            {
                "outcome": "unroutable",
                "reason": "malformed_request",
                "detail": "the intent names no goal, action or node_id",
                "producers_found": [],
                "missing_requirements": ["goal or action or node_id"],
            }
        )
    elif target and target_node is None:
        unroutable.append(
            {
                "outcome": "unroutable",
                "reason": "requirements_unmet",
                "detail": f"no item {target} in working memory (it is volatile: a restart "
                "empties it)",
                "producers_found": [
                    c.name for c in CATALOGUE if c.name in MUTATING or c.name == "read_item"
                ],
                "missing_requirements": [f"node_id {target} exists"],
            }
        )
    else:
        scores = intent_scores(text) if text else {}
        for position, cap in enumerate(catalogue):
            if action == cap.name:
                confidence = 1.0
            elif text and scores:
                confidence = intent_confidence(scores.get(cap.name, 0.0))
            elif target:
                confidence = 0.5 if cap.takes_node else 0.0
            else:
                confidence = 0.0
            if cap.name == "do_update_item" and status is not None:
                confidence = max(confidence, 0.5)
            if confidence < CONFIDENCE_FLOOR:
                continue
            starting = status == "active" or (status is None and _asks_to_start(text))
            block = _blocked(state, cap.name, status, target_node, open_blockers, starting)
            if block is not None:
                blocked.append({**block, "confidence": confidence})
                continue
            candidates.append(
                (
                    confidence,
                    position,
                    {
                        "capability": cap.name,
                        "source": SOURCE,
                        "confidence": confidence,
                        "permission": "allowed",
                        "current_state": current,
                        "constraints": cap.constraints,
                        "side_effects": list(cap.side_effects),
                        "estimated_latency_ms": cap.latency_ms,
                        "valid_until": valid_until,
                    },
                )
            )
        if not candidates and not blocked:
            unroutable.append(
                {
                    "outcome": "unroutable",
                    "reason": "no_producer",
                    "detail": "no tool of the working memory matches this intent",
                    "producers_found": [],
                    "missing_requirements": [],
                }
            )
    candidates.sort(key=lambda c: (-c[0], c[1]))
    emitted = [] if unroutable else [c[2] for c in candidates]
    open_ids = [n for n in state.nodes.values() if n.status in OPEN]
    hottest = heapq.nsmallest(
        HOTTEST,
        ((salience(n, state.degree(n.id), now, half_life_h), n.id, n.title) for n in open_ids),
        key=lambda t: (-t[0], t[1]),
    )
    return {
        "query_id": str(uuid.uuid4()),
        "feasible": _feasible(emitted, blocked),
        "candidates": emitted,
        "blocked": blocked,
        "unroutable": unroutable,
        "context": {
            "related_reads": list(READS),
            "current_observations": {
                "stats": stats(state),
                "open": len(open_ids),
                "hottest": [{"id": i, "title": t, "salience": round(s, 4)} for s, i, t in hottest],
                "embedder": state.embedder.signature,
                "uptime_s": round(now - started_at, 3),
                "volatile": True,
                "forgotten_total": state.forgotten_total,
                "evicted_total": state.evicted_total,
                "target": target_node.title if target_node is not None else None,
                "open_blockers": len(open_blockers),
                "memory_cold": not state.nodes,
            },
        },
        "metadata": {
            "timestamp": timestamp,
            "total_latency_ms": round(elapsed_ms(), 3),
            "embedder": state.embedder.signature,
        },
    }


_START_STEMS: Final = frozenset({"start", "begin", "empez", "comenz", "inici", "arranc"})


def _asks_to_start(text: str) -> bool:
    """Whether the goal asks to start work ("start", "empieza", "comenzar" …)."""
    for word in folded_words(text):
        if english_stem(word) in _START_STEMS or spanish_stems(word) & _START_STEMS:
            return True
    return False


def _feasible(candidates: list[dict[str, Any]], blocked: list[dict[str, Any]]) -> bool:
    """An allowed candidate exists and the intent's best route is not a blocked one (issue 19:
    "start the task" on a task with an open blocker is not feasible, even though reading it
    would be). A blocked route wins a tie."""
    if not candidates:
        return False
    best_blocked = max((b["confidence"] for b in blocked), default=-1.0)
    return float(candidates[0]["confidence"]) > best_blocked


def _blocked(
    state: MemoState,
    capability: str,
    status: Any,
    target: Any,
    open_blockers: list[str],
    starting: bool,
) -> dict[str, Any] | None:
    if (
        capability == "do_update_item"
        and starting
        and target is not None
        and open_blockers
        and status in (None, "active")
    ):
        return {
            "capability": capability,
            "source": SOURCE,
            "permission": "requires_human_approval",
            "reason": f"{len(open_blockers)} open blockers; resolve them before starting",
            "details": _details(state, open_blockers),
        }
    if capability == "do_update_item" and status is not None:
        if status not in STATUSES:
            return {
                "capability": capability,
                "source": SOURCE,
                "permission": "out_of_range",
                "reason": f'status "{status}" is not one of {", ".join(STATUSES)}',
                "details": list(STATUSES),
            }
        if status in CLOSED and target is not None and open_blockers:
            return {
                "capability": capability,
                "source": SOURCE,
                "permission": "requires_human_approval",
                "reason": f"{len(open_blockers)} open blockers",
                "details": _details(state, open_blockers),
            }
    if capability == "do_forget" and target is not None and is_load_bearing(state, target.id):
        blocking = blocking_open(state, target.id)
        return {
            "capability": capability,
            "source": SOURCE,
            "permission": "requires_human_approval",
            "reason": f"blocks {len(blocking)} open items; unlink them first",
            "details": _details(state, blocking),
        }
    return None
