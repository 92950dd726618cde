"""The working-memory benchmark (07 §6.3): `python -m bench.memo`.

Not a test: it never asserts a time. It prints a Markdown table and writes JSON to
`bench/results/`. The corpus generator below is also what the recall tests use.

`--side-by-side N` (default 10,000; 0 skips it) first runs issue 19's workload beside
devmemomcp 0.1.1, installed into the scratch venv `--scratch` (`bench/memo_side.py`);
`--only-side-by-side` stops after it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

VERBS = (
    "Fix", "Investigate", "Refactor", "Add tests for", "Handle", "Document", "Optimize", "Debug",
    "Review", "Remove", "Migrate", "Validate", "Implement", "Replace", "Cache", "Log", "Retry",
    "Guard against", "Profile", "Simplify",
)  # fmt: skip
COMPONENTS = (
    "auth middleware", "token refresh", "user service", "payment gateway", "order queue",
    "search index", "cache layer", "config loader", "session store", "rate limiter",
    "email sender", "webhook handler", "file uploader", "image resizer", "report builder",
    "CSV exporter", "GraphQL resolver", "REST client", "database pool", "migration runner",
    "feature flags", "audit log", "notification worker", "billing cron", "inventory sync",
    "CLI parser", "settings page", "login form", "dashboard widget", "metrics collector",
    "health check", "retry policy", "event bus", "schema validator", "i18n loader",
    "PDF renderer", "S3 adapter", "Redis client", "websocket server", "job scheduler",
)  # fmt: skip
ISSUES = (
    "null pointer exception", "race condition", "memory leak", "timeout on large input",
    "off-by-one error", "stale cache entries", "unicode handling", "slow query",
    "deadlock under load", "missing validation", "wrong timezone", "flaky test",
    "duplicate events", "silent failure", "broken pagination", "incorrect rounding",
    "retry storm", "connection reset", "permission check", "encoding mismatch",
)  # fmt: skip
FILES = (
    "src/auth/middleware.py", "src/api/routes.py", "lib/cache.ts", "services/billing.go",
    "app/models/user.rb", "src/db/pool.py", "web/components/Form.tsx", "cmd/worker/main.go",
    "src/utils/dates.js", "config/settings.yaml", "tests/test_orders.py", "scripts/migrate.sh",
)  # fmt: skip
TITLE_TEMPLATES = (
    "{verb} {issue} in {component}",
    "{verb} {component} {issue} ({file})",
    "{component}: {verb_l} {issue}",
    "{verb} {issue} in {file}",
)
TAGS = (
    "backend", "frontend", "auth", "perf", "bug", "tech-debt", "security", "infra", "db", "api",
    "tests", "ui", "ops", "docs", "urgent",
)  # fmt: skip
KIND_WEIGHTS = (
    ("task", 53), ("insight", 11), ("decision", 11), ("question", 10), ("blocker", 10),
    ("artifact", 5),
)  # fmt: skip
PRIORITY_WEIGHTS = (("critical", 1), ("high", 3), ("normal", 5), ("low", 2))
LINK_KINDS = ("blocks", "depends_on", "subtask_of", "touches")
WORDS = (
    "request", "response", "handler", "payload", "schema", "column", "index", "worker",
    "thread", "lock", "queue", "buffer", "socket", "header", "cookie", "session", "token",
    "client", "server", "endpoint", "migration", "rollback", "deploy", "release", "staging",
    "production", "metric", "latency", "throughput", "counter", "histogram", "alert", "pager",
    "fixture", "mock", "assertion", "coverage", "snapshot", "regression", "benchmark",
    "refactor", "interface", "adapter", "factory", "builder", "decorator", "callback",
    "promise", "coroutine", "generator", "iterator", "serializer", "parser", "lexer",
    "template", "renderer", "component", "hook", "reducer", "store", "selector", "router",
    "controller", "model", "repository", "transaction", "isolation", "constraint", "trigger",
    "cursor", "batch", "chunk", "stream", "pipe", "retry", "backoff", "jitter", "circuit",
    "breaker", "timeout", "deadline", "quota", "limit", "tenant", "account", "invoice",
    "customer", "order", "cart", "checkout", "refund", "ledger", "balance", "currency",
    "locale", "timezone", "calendar", "scheduler", "cron", "daemon", "container", "volume",
    "cluster", "replica", "shard", "partition", "consumer", "producer", "topic", "offset",
    "checksum", "hash", "signature", "certificate", "secret", "vault", "permission", "role",
    "policy", "audit", "trace", "span", "logger", "formatter", "config", "flag", "toggle",
    "variant", "experiment", "cohort", "dashboard", "widget", "chart", "table", "filter",
    "pagination", "cursor", "search", "ranking", "synonym", "stemmer", "tokenizer",
)  # fmt: skip
SENTENCES = (
    "The {component} {verb_l}s the {w1} before the {w2} is flushed.",
    "Seen in production when the {w1} {w2} exceeds its {w3} under load.",
    "Repro: call the {component} with an empty {w1} and a stale {w2}.",
    "We suspect the {w1} in {file} is not released after the {w2} fails.",
    "Customer reports that the {component} shows {issue} after a {w1} {w2}.",
    "Plan: {verb_l} the {w1}, then add a {w2} around the {w3}.",
    "The {issue} started after the last {w1} {w2} was deployed.",
    "Decision pending on whether the {w1} should own the {w2} or the {w3}.",
    "Related to the {component} work; the {w1} {w2} path is shared.",
    "Logs show {issue} every few minutes on the {w1} {w2}.",
    "Open question: does the {component} need a {w1} per {w2}?",
    "Measured {n} ms p95 on the {w1} {w2} in staging.",
)
TRACE_FRAMES = ("handle", "dispatch", "process", "run", "execute", "load", "save", "flush")
NATURAL_QUERIES = (
    "why does the login keep failing",
    "slow database queries",
    "cache invalidation problems",
    "payment errors",
    "memory problems in workers",
    "timezone bugs",
    "what breaks under heavy load",
    "tests that fail randomly",
    "unicode text handling",
    "webhook duplicates",
    "pagination is broken",
    "config loading issues",
    "retry logic",
    "permission problems",
    "exporting reports to csv",
    "websocket disconnects",
)


def _weighted(rng: random.Random, pairs: tuple[tuple[str, int], ...]) -> str:
    return rng.choices([p[0] for p in pairs], weights=[p[1] for p in pairs])[0]


def _title(rng: random.Random) -> str:
    verb = rng.choice(VERBS)
    return rng.choice(TITLE_TEMPLATES).format(
        verb=verb,
        verb_l=verb.lower(),
        issue=rng.choice(ISSUES),
        component=rng.choice(COMPONENTS),
        file=rng.choice(FILES),
    )


def _sentence(rng: random.Random) -> str:
    verb = rng.choice(VERBS).lower()
    return rng.choice(SENTENCES).format(
        component=rng.choice(COMPONENTS),
        verb_l=verb,
        issue=rng.choice(ISSUES),
        file=rng.choice(FILES),
        w1=rng.choice(WORDS),
        w2=rng.choice(WORDS),
        w3=rng.choice(WORDS),
        n=rng.randint(20, 900),
    )


def _trace(rng: random.Random) -> str:
    lines = ["Traceback (most recent call last):"]
    for _ in range(rng.randint(3, 6)):
        file = rng.choice(FILES)
        lines.append(f'  File "{file}", line {rng.randint(10, 900)}, in {rng.choice(TRACE_FRAMES)}')
        lines.append(f"    {rng.choice(WORDS)} = self.{rng.choice(WORDS)}({rng.choice(WORDS)})")
    lines.append(f"{rng.choice(('KeyError', 'TimeoutError', 'ValueError'))}: {rng.choice(WORDS)}")
    return "\n".join(lines)


def _code(rng: random.Random) -> str:
    name = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}"
    return (
        "```python\n"
        f"def {name}({rng.choice(WORDS)}, {rng.choice(WORDS)}=None):\n"
        f"    if not {rng.choice(WORDS)}:\n"
        f"        raise ValueError('{rng.choice(WORDS)} missing')\n"
        f"    return {rng.choice(WORDS)}.{rng.choice(WORDS)}()\n"
        "```"
    )


def _body(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.05:
        target = rng.randint(3000, 6000)
        parts: list[str] = []
        size = 0
        while size < target:
            s = _sentence(rng)
            parts.append(s)
            size += len(s) + 1
        return " ".join(parts)
    body = " ".join(_sentence(rng) for _ in range(rng.randint(1, 4)))
    if roll < 0.20:
        body += "\n\n" + _trace(rng)
    elif roll < 0.30:
        body += "\n\n" + _code(rng)
    return body


def generate(count: int, seed: int = 20260914) -> list[dict[str, Any]]:
    """`count` `do_remember` argument sets shaped like devmemomcp's benchmark corpus."""
    rng = random.Random(seed)
    items = []
    for _ in range(count):
        items.append(
            {
                "title": _title(rng),
                "kind": _weighted(rng, KIND_WEIGHTS),
                "body": _body(rng),
                "tags": rng.sample(TAGS, rng.randint(0, 3)),
                "priority": _weighted(rng, PRIORITY_WEIGHTS),
            }
        )
    return items


def link_plan(count: int, links: int = 200, seed: int = 20260914) -> list[tuple[int, int, str]]:
    """`links` explicit edges between random pairs of item positions."""
    rng = random.Random(seed + 1)
    plan = []
    while len(plan) < links:
        a, b = rng.randrange(count), rng.randrange(count)
        if a != b:
            plan.append((a, b, rng.choice(LINK_KINDS)))
    return plan


# ---------------------------------------------------------------------------- measuring


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    n = len(ordered)

    def pct(p: float) -> float:
        return ordered[min(n - 1, round(p * (n - 1)))]

    return {
        "p50": statistics.median(ordered),
        "p95": pct(0.95),
        "p99": pct(0.99),
        "mean": statistics.fmean(ordered),
        "n": n,
    }


# `--clock cpu` times with the process CPU clock: on a shared, busy machine wall time also
# counts the time this process waited for a CPU. Every figure is labelled with the clock used.
_TIMER: Callable[[], float] = time.perf_counter


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = _TIMER()
    result = fn()
    return (_TIMER() - start) * 1000.0, result


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class _Clock:
    """A clock advancing 1 s per call, so salience recency varies like a real session."""

    def __init__(self) -> None:
        self.now = 1_789_387_200.0  # 2026-09-14T12:00:00Z

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def _populate(tools: Any, corpus: list[dict[str, Any]]) -> tuple[list[str], list[float]]:
    ids: list[str] = []
    times: list[float] = []
    for i, item in enumerate(corpus):
        ms, result = _timed(
            lambda item=item, i=i: tools.do_remember(idempotency_key=f"r{i}", **item)
        )
        times.append(ms)
        ids.append(result["applied_value"]["node"]["id"])
    return ids, times


def run_size(size: int, seed: int) -> dict[str, Any]:
    """Every store-layer and in-process MCP measurement at one size."""
    from mbank.memo.model import MemoConfig
    from mbank.memo.store import MemoStore
    from mbank.memo.tools import MemoTools

    rng = random.Random(seed + 7)
    corpus = generate(size, seed)
    store = MemoStore(MemoConfig(max_nodes=max(5000, size)), clock=_Clock())
    tools = MemoTools(store)
    t0 = _TIMER()
    ids, insert_ms = _populate(tools, corpus)
    total_insert_s = _TIMER() - t0
    for a, b, kind in link_plan(size, 200, seed):
        tools.do_link(ids[a], ids[b], "", kind=kind)
    auto_edges = sum(1 for out in store.state.out.values() for e in out.values() if e.auto)
    metrics: dict[str, Any] = {
        "do_remember (all)": _stats(insert_ms),
        "do_remember (last 200)": _stats(insert_ms[-200:]),
    }
    samples = 200
    sample_idx = rng.sample(range(size), samples)
    metrics["read_pending"] = _stats([_timed(tools.read_pending)[0] for _ in range(samples)])

    recall_first = 0
    rel2: list[float] = []
    for i in sample_idx:
        title = corpus[i]["title"]
        ms, result = _timed(lambda t=title: tools.read_related(query=t))
        rel2.append(ms)
        matches = result["value"]["matches"]
        if matches and matches[0]["title"].strip() == title.strip():
            recall_first += 1
    metrics["read_related query hops=2"] = _stats(rel2)
    metrics["read_related query hops=0"] = _stats(
        [
            _timed(lambda i=i: tools.read_related(query=corpus[i]["title"], hops=0))[0]
            for i in sample_idx
        ]
    )
    metrics["read_related anchor"] = _stats(
        [_timed(lambda i=i: tools.read_related(node_id=ids[i]))[0] for i in sample_idx]
    )
    metrics["read_item hops=1"] = _stats(
        [_timed(lambda i=i: tools.read_item(ids[i]))[0] for i in sample_idx]
    )
    metrics["read_item hops=2"] = _stats(
        [_timed(lambda i=i: tools.read_item(ids[i], hops=2))[0] for i in sample_idx]
    )
    metrics["do_update_item bump"] = _stats(
        [_timed(lambda i=i: tools.do_update_item(ids[i], "", bump=True))[0] for i in sample_idx]
    )
    goals = (
        "record a new pending task",
        "what is left to do",
        "mark it done",
        "guardar un pendiente",
    )
    metrics["can_do"] = _stats(
        [_timed(lambda g=g: tools.can_do({"goal": g}))[0] for g in goals * 50]
    )
    natural_empty = sum(
        1 for q in NATURAL_QUERIES if not tools.read_related(query=q)["value"]["matches"]
    )
    metrics.update(_mcp_metrics(tools, corpus, ids, sample_idx))
    return {
        "size": size,
        "total_insert_s": total_insert_s,
        "auto_edges": auto_edges,
        "auto_edges_per_node": auto_edges / size,
        "recall_exact_first": recall_first,
        "recall_sampled": samples,
        "natural_queries": len(NATURAL_QUERIES),
        "natural_queries_empty": natural_empty,
        "metrics": metrics,
        "peak_rss_mib": _peak_rss_mib(),
    }


def _mcp_metrics(
    tools: Any, corpus: list[dict[str, Any]], ids: list[str], sample_idx: list[int]
) -> dict[str, Any]:
    """The same reads through the in-process MCP client (`Client(server)`)."""
    import anyio
    from mcp import Client

    from mbank.memo.server import build_server

    server = build_server(tools)
    out: dict[str, Any] = {}

    async def main() -> None:
        async with Client(server) as client:
            await client.list_tools()
            calls: list[tuple[str, Callable[[int], tuple[str, dict[str, Any]]]]] = [
                ("mcp read_pending", lambda i: ("read_pending", {})),
                ("mcp read_related", lambda i: ("read_related", {"query": corpus[i]["title"]})),
                ("mcp read_item", lambda i: ("read_item", {"node_id": ids[i]})),
                ("mcp can_do", lambda i: ("can_do", {"intent": {"goal": "what is left to do"}})),
            ]
            for label, make in calls:
                samples = []
                for i in sample_idx[:100]:
                    name, args = make(i)
                    start = _TIMER()
                    await client.call_tool(name, args)
                    samples.append((_TIMER() - start) * 1000.0)
                out[label] = _stats(samples)
            samples = []
            for n, i in enumerate(sample_idx[:100]):
                start = _TIMER()
                await client.call_tool(
                    "do_remember",
                    {"title": corpus[i]["title"] + " again", "idempotency_key": f"mcp{n}"},
                )
                samples.append((_TIMER() - start) * 1000.0)
            out["mcp do_remember"] = _stats(samples)

    anyio.run(main)
    return out


def run_eviction(inserts: int, seed: int) -> dict[str, Any]:
    """7,000 inserts against the default cap of 5,000: insert p50 below versus at the cap."""
    from mbank.memo.store import MemoStore
    from mbank.memo.tools import MemoTools

    store = MemoStore(clock=_Clock())
    tools = MemoTools(store)
    _, times = _populate(tools, generate(inserts, seed + 3))
    cap = store.config.max_nodes
    return {
        "inserts": inserts,
        "below_cap": _stats(times[cap - 1000 : cap]),
        "at_cap": _stats(times[cap:]),
        "evicted_total": store.state.evicted_total,
        "nodes": len(store.state.nodes),
    }


def measure_stdio(with_bank: bool) -> dict[str, Any]:
    """Spawn `python -m mbank.memo`; time to initialize; compact tools/list characters."""
    import tempfile

    import anyio
    from mcp import Client, StdioServerParameters

    args = ["-m", "mbank.memo"]
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if with_bank:
            args += ["--bank", tmp]
        params = StdioServerParameters(
            command=sys.executable,
            args=args,
            cwd=tmp,
            env={"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
        )

        async def main() -> None:
            start = time.perf_counter()
            async with Client(params, mode="legacy") as client:
                out["spawn_to_initialize_ms"] = (time.perf_counter() - start) * 1000.0
                result = await client.list_tools()
                wire = result.model_dump(by_alias=True, exclude_none=True, mode="json")
                wire = {"tools": wire["tools"]}
                out["tools_list_chars"] = len(
                    json.dumps(wire, separators=(",", ":"), ensure_ascii=False)
                )
                out["tools"] = len(wire["tools"])

        anyio.run(main)
    return out


def _worker(size: int, seed: int, side: str | None = None) -> None:
    if side is not None:
        import bench.memo as imported  # memo_side's copy of this module, not __main__
        from bench.memo_side import run_side

        imported._TIMER = _TIMER
        print(json.dumps(run_side(side, size, seed)))
    elif size < 0:
        print(json.dumps(run_eviction(-size, seed)))
    else:
        print(json.dumps(run_size(size, seed)))


def _spawn(arg: int, seed: int, clock: str) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.memo",
            "--worker",
            str(arg),
            "--seed",
            str(seed),
            "--clock",
            clock,
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    data: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return data


DEVMEMOMCP_2000 = {
    "do_remember (all)": "0.71–0.74 / 1.29–1.46",
    "read_pending": "7.4–8.3 / 9.7–10.3",
    "read_related query hops=2": "0.36–0.46 / 5.4–5.8",
    "read_item hops=1": "0.055–0.076 / 0.10–0.14",
}


def _table(runs: list[dict[str, Any]], eviction: dict[str, Any], stdio: dict[str, Any]) -> str:
    sizes = [r["size"] for r in runs]
    head = "| metric (ms, p50 / p95) | " + " | ".join(f"{s:,} items" for s in sizes)
    head += " | devmemomcp @2,000 |"
    lines = [head, "|---" * (len(sizes) + 2) + "|"]
    names = list(runs[0]["metrics"])
    for name in names:
        cells = [f"{r['metrics'][name]['p50']:.3f} / {r['metrics'][name]['p95']:.3f}" for r in runs]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {DEVMEMOMCP_2000.get(name, '')} |")
    rows = [
        ("do_remember p99 (all)", lambda r: f"{r['metrics']['do_remember (all)']['p99']:.3f}", ""),
        ("total insert time (s)", lambda r: f"{r['total_insert_s']:.2f}", "1.4–1.8"),
        ("auto edges per node", lambda r: f"{r['auto_edges_per_node']:.2f}", "3.97"),
        (
            "exact title first",
            lambda r: f"{r['recall_exact_first']}/{r['recall_sampled']}",
            "152/200",
        ),
        (
            "natural queries empty",
            lambda r: f"{r['natural_queries_empty']}/{r['natural_queries']}",
            "7/16",
        ),
        ("peak RSS (MiB)", lambda r: f"{r['peak_rss_mib']:.1f}", "≈103"),
    ]
    for label, cell, dev in rows:
        lines.append(f"| {label} | " + " | ".join(cell(r) for r in runs) + f" | {dev} |")
    lines.append("")
    below, at = eviction["below_cap"], eviction["at_cap"]
    lines.append(
        f"Eviction run ({eviction['inserts']:,} inserts, cap 5,000): insert p50 "
        f"{below['p50']:.3f} ms below the cap → {at['p50']:.3f} ms at the cap "
        f"(p95 {below['p95']:.3f} → {at['p95']:.3f}); evicted {eviction['evicted_total']} "
        "(devmemomcp: 0.54 → 15.5 ms)."
    )
    lines.append(
        f"tools/list: {stdio['default']['tools_list_chars']:,} characters "
        f"({stdio['default']['tools']} tools; target ≤ 5,800; devmemomcp 9,702); with --bank "
        f"{stdio['bank']['tools_list_chars']:,} ({stdio['bank']['tools']} tools). "
        f"stdio spawn to initialize: {stdio['default']['spawn_to_initialize_ms']:.0f} ms "
        "(devmemomcp 1.9 s)."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run every size in a fresh process (for an honest peak RSS) and print the table."""
    parser = argparse.ArgumentParser(prog="python -m bench.memo")
    parser.add_argument("--sizes", default="2000,10000")
    parser.add_argument("--seed", type=int, default=20260914)
    parser.add_argument("--eviction-inserts", type=int, default=7000)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--side", choices=("mbank", "devmemomcp"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--side-by-side",
        type=int,
        default=10_000,
        metavar="N",
        help="items of the issue-19 run beside devmemomcp (0 = skip)",
    )
    parser.add_argument(
        "--scratch",
        type=Path,
        default=Path("/tmp/mbank-bench-devmemomcp"),
        help="scratch venv for devmemomcp",
    )
    parser.add_argument("--only-side-by-side", action="store_true")
    args = parser.parse_args(argv)
    global _TIMER
    _TIMER = time.process_time if args.clock == "cpu" else time.perf_counter
    if args.worker is not None:
        _worker(args.worker, args.seed, args.side)
        return 0
    load = os.getloadavg()[0]
    print(f"Clock: {args.clock}; load average at start {load:.2f} on {os.cpu_count()} CPUs.\n")
    sides: list[dict[str, Any]] = []
    wires: list[dict[str, Any]] = []
    if args.side_by_side:
        from bench.memo_side import run_wire, scratch_devmemomcp, side_table, spawn_side, wire_table

        devmemo = str(scratch_devmemomcp(args.scratch))
        for impl, python in (("mbank", sys.executable), ("devmemomcp", devmemo)):
            sides.append(spawn_side(python, impl, args.side_by_side, args.seed, args.clock))
        print(side_table(sides) + "\n")
        wires = [
            run_wire(impl, python, args.side_by_side, args.seed)
            for impl, python in (("mbank", sys.executable), ("devmemomcp", devmemo))
        ]
        print(wire_table(wires) + "\n")
    runs: list[dict[str, Any]] = []
    eviction: dict[str, Any] = {}
    stdio: dict[str, Any] = {}
    if not args.only_side_by_side:
        runs = [_spawn(int(s), args.seed, args.clock) for s in args.sizes.split(",")]
        eviction = _spawn(-args.eviction_inserts, args.seed, args.clock)
        stdio = {"default": measure_stdio(False), "bank": measure_stdio(True)}
        print(_table(runs, eviction, stdio))
    results = Path(__file__).resolve().parent / "results"
    results.mkdir(exist_ok=True)
    from mbank.journal import mbank_version

    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out = results / f"{stamp}-memo.json"
    out.write_text(
        json.dumps(
            {
                "mbank_version": mbank_version(),
                "git_commit": commit or None,
                "python": platform.python_version(),
                "platform": platform.platform(),
                "cpu_count": os.cpu_count(),
                "seed": args.seed,
                "clock": args.clock,
                "load_average_at_start": load,
                "runs": runs,
                "side_by_side": sides,
                "side_by_side_stdio": wires,
                "eviction": eviction,
                "stdio": stdio,
            },
            indent=2,
        )
    )
    print(f"\nJSON: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
