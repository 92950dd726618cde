"""`can_do`: route an intent to the memory's tools, or say why not (06 §11.2)."""

from __future__ import annotations

import heapq
import uuid
from collections.abc import Callable
from typing import Any, Final

import msgspec

from mbank.memo.embedder import HashingEmbedder, cosine
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
from mbank.memo.timestamps import iso_millis
from mbank.memo.views import stats

CONFIDENCE_FLOOR: Final = 0.15
CONFIDENCE_SCALE: Final = 2.2
VALID_STATIC_S: Final = 240.0
VALID_TARGET_S: Final = 20.0
SOURCE: Final = "mbank-memo"
READS: Final = ("read_pending", "read_related", "read_item")


class Capability(msgspec.Struct, frozen=True):
    """One catalogue entry: its tool, keyword text (English / Spanish) and what it costs."""

    name: str
    keywords: str
    latency_ms: int
    takes_node: bool
    side_effects: tuple[str, ...]
    constraints: dict[str, Any]


CATALOGUE: Final = (
    Capability(
        "read_pending",
        "pending open work list todo left resume session state backlog priorities "
        "pendientes trabajo abierto lista que queda retomar sesion estado prioridades",
        5,
        False,
        (),
        {},
    ),
    Capability(
        "read_related",
        "related context find search similar previous decisions blockers topic before coding "
        "relacionado contexto buscar similar decisiones previas bloqueos tema antes codificar",
        15,
        True,
        (),
        {},
    ),
    Capability(
        "read_item",
        "item detail show one node neighbours history blockers chain "
        "detalle item mostrar nodo vecinos historial cadena bloqueadores",
        5,
        True,
        (),
        {},
    ),
    Capability(
        "do_remember",
        "remember record save note new pending task blocker decision question insight artifact "
        "recordar guardar apuntar anotar nuevo pendiente tarea bloqueo decision pregunta hallazgo",
        20,
        False,
        ("stores one item in volatile memory",),
        {"max_title_chars": MAX_TITLE_CHARS, "max_body_bytes": MAX_BODY_BYTES},
    ),
    Capability(
        "do_update_item",
        "update change status start begin finish done close complete priority rename bump "
        "actualizar cambiar estado empezar terminar hecho cerrar completar prioridad renombrar",
        10,
        True,
        ("changes one item in volatile memory",),
        {"enum_values": list(STATUSES)},
    ),
    Capability(
        "do_link",
        "link relate connect depends blocks subtask supersedes touches unlink edge "
        "enlazar relacionar conectar depende bloquea subtarea reemplaza toca desenlazar",
        10,
        True,
        ("adds or removes one edge in volatile memory",),
        {"min": 0.0, "max": 1.0, "unit": "weight"},
    ),
    Capability(
        "do_forget",
        "forget delete remove erase duplicate mistake wrong "
        "olvidar borrar eliminar quitar duplicado error equivocado",
        10,
        True,
        ("deletes one item and its edges from volatile memory",),
        {},
    ),
    Capability(
        "can_do",
        "check whether possible feasible allowed can before acting "
        "comprobar verificar si es posible viable permitido puedo antes",
        5,
        False,
        (),
        {},
    ),
    Capability(
        "do_spill",
        "handoff spill export persist save bank inbox keep for later "
        "traspasar volcar exportar persistir guardar banco bandeja",
        50,
        False,
        ("writes one note into the bank's _inbox/",),
        {},
    ),
)
MUTATING: Final = ("do_remember", "do_update_item", "do_link", "do_forget")

_EMBEDDER = HashingEmbedder()
_KEYWORD_VECTORS: Final = {c.name: _EMBEDDER.embed(c.keywords) for c in CATALOGUE}


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
        query = _EMBEDDER.embed(text) if text else {}
        for position, cap in enumerate(catalogue):
            if action == cap.name:
                confidence = 1.0
            elif query:
                confidence = round(
                    min(1.0, cosine(query, _KEYWORD_VECTORS[cap.name]) * CONFIDENCE_SCALE), 4
                )
            elif target:
                confidence = 0.5 if cap.takes_node else 0.0
            else:
                confidence = 0.0
            if cap.name == "do_update_item" and status is not None:
                confidence = max(confidence, 0.5)
            if confidence < CONFIDENCE_FLOOR:
                continue
            block = _blocked(state, cap.name, status, target_node, open_blockers)
            if block is not None:
                blocked.append(block)
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
        "feasible": any(c["permission"] == "allowed" for c in emitted),
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


def _blocked(
    state: MemoState,
    capability: str,
    status: Any,
    target: Any,
    open_blockers: list[str],
) -> dict[str, Any] | None:
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
