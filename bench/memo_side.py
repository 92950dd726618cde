"""The issue-19 run of the working-memory benchmark: mbank memo beside devmemomcp 0.1.1.

The same seeded workload (10,000 items, 815 explicit links alternating with the inserts), once
in process through each implementation's tool functions and once through each one's real
stdio server with the same client. devmemomcp is installed from the package index into a
scratch venv by the benchmark itself (never an mbank dependency); its API was read from its
installed source. Run through `python -m bench.memo` (see bench/README.md).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

from bench import memo as core
from bench.memo import COMPONENTS, ISSUES, _stats, _timed, generate, link_plan

DEVMEMOMCP = "devmemomcp==0.1.1"
SIDE_LINKS = 815
HELDOUT = Path(__file__).resolve().parents[1] / "tests" / "memo" / "can_do_heldout.json"
PARAPHRASES = (
    "problems with the {component}: {issue}",
    "{issue} affecting the {component}",
    "the {component} has a {issue}",
)


def topic_of(title: str) -> tuple[str | None, str | None]:
    """The (component, issue) a generated title is about."""
    lowered = title.lower()
    component = next((c for c in COMPONENTS if c.lower() in lowered), None)
    return component, next((i for i in ISSUES if i in lowered), None)


class _MbankSide:
    """mbank memo driven through `MemoTools` (the functions its MCP tools call)."""

    name = "mbank memo"

    def __init__(self, size: int) -> None:
        import tempfile

        from mbank.memo.model import MemoConfig
        from mbank.memo.server import build_server
        from mbank.memo.store import MemoStore
        from mbank.memo.tools import MemoTools

        self.tools = MemoTools(
            MemoStore(MemoConfig(max_nodes=size)),
            bank_root=Path(tempfile.gettempdir()),
            inbox_writer=lambda *a, **k: "unused",  # do_spill routable; never called here
        )
        self.server = build_server(self.tools)

    def remember(self, key: str, item: dict[str, Any]) -> str:
        node_id: str = self.tools.do_remember(idempotency_key=key, **item)["applied_value"]["node"][
            "id"
        ]
        return node_id

    def link(self, key: str, src: str, dst: str, kind: str) -> None:
        self.tools.do_link(src, dst, key, kind=kind)

    def related_titles(self, query: str) -> list[str]:
        return [m["title"] for m in self.tools.read_related(query=query)["value"]["matches"]]

    def first_tool(self, goal: str) -> str | None:
        candidates = self.tools.can_do({"goal": goal})["candidates"]
        return candidates[0]["capability"] if candidates else None

    def pending_text(self) -> str:
        import anyio
        from mcp import Client

        out: list[str] = []

        async def main() -> None:
            async with Client(self.server) as client:
                result = await client.call_tool("read_pending", {})
                out.append(result.content[0].text)  # type: ignore[union-attr]

        anyio.run(main)
        return out[0]


class _DevmemoSide:
    """devmemomcp 0.1.1 driven through its surface functions (what its MCP tools call); its API
    read from the installed source: `MemoryStore`, `build_surface(store, Registry)`."""

    name = "devmemomcp 0.1.1"

    def __init__(self, size: int) -> None:
        from devmemomcp.domain.store import MemoryStore  # type: ignore[import-not-found]
        from devmemomcp.surface import build_surface  # type: ignore[import-not-found]
        from promcp.registry import Registry  # type: ignore[import-not-found]

        self.store = MemoryStore(max_nodes=size)
        self.tools = build_surface(self.store, Registry(name="devmemomcp"))

    def remember(self, key: str, item: dict[str, Any]) -> str:
        node_id: str = self.tools["do_remember"](idempotency_key=key, **item)["applied_value"][
            "node"
        ]["id"]
        return node_id

    def link(self, key: str, src: str, dst: str, kind: str) -> None:
        self.tools["do_link"](src=src, dst=dst, idempotency_key=key, kind=kind)

    def related_titles(self, query: str) -> list[str]:
        value = self.tools["read_related"](query=query)["value"] or {}
        return [m["title"] for m in value.get("matches", [])]

    def first_tool(self, goal: str) -> str | None:
        candidates = self.tools["can_do"](intent={"goal": goal})["candidates"]
        return candidates[0]["capability"] if candidates else None

    def pending_text(self) -> str:
        import anyio
        import fastmcp  # type: ignore[import-not-found]
        from devmemomcp.transport.server import create_server  # type: ignore[import-not-found]

        server, _, _ = create_server(store=self.store)
        out: list[str] = []

        async def main() -> None:
            async with fastmcp.Client(server._mcp) as client:
                result = await client.call_tool("read_pending", {})
                out.append(result.content[0].text)

        anyio.run(main)
        return out[0]


def run_side(impl: str, size: int, seed: int) -> dict[str, Any]:
    """One implementation, one fresh process: the shared workload and every figure of it."""
    side: Any = _MbankSide(size) if impl == "mbank" else _DevmemoSide(size)
    corpus = generate(size, seed)
    by_last: dict[int, list[tuple[int, int, str]]] = {}
    for a, b, kind in link_plan(size, SIDE_LINKS, seed):
        by_last.setdefault(max(a, b), []).append((a, b, kind))
    ids: list[str] = []
    times: list[float] = []
    t0 = core._TIMER()
    for i, item in enumerate(corpus):
        ms, node_id = _timed(lambda item=item, i=i: side.remember(f"r{i}", item))
        times.append(ms)
        ids.append(node_id)
        for n, (a, b, kind) in enumerate(by_last.get(i, ())):  # links alternate with inserts
            side.link(f"l{i}-{n}", ids[a], ids[b], kind)
    total_s = core._TIMER() - t0
    decile = size // 10
    rng = random.Random(seed + 7)
    sample = rng.sample(range(size), 200)
    exact = sum(1 for i in sample if side.related_titles(corpus[i]["title"])[:1]
                == [corpus[i]["title"]])  # fmt: skip
    paraphrase_hits = 0
    for n, i in enumerate(sample[:100]):
        component, issue = topic_of(corpus[i]["title"])
        query = PARAPHRASES[n % len(PARAPHRASES)].format(component=component, issue=issue)
        top5 = [topic_of(t) for t in side.related_titles(query)[:5]]
        paraphrase_hits += (component, issue) in top5
    intents = json.loads(HELDOUT.read_text(encoding="utf-8"))["intents"]
    routed = [(x["tool"], side.first_tool(x["goal"])) for x in intents]
    return {
        "impl": side.name,
        "size": size,
        "load_at_start": os.getloadavg()[0],
        "remember_p50_by_decile_ms": [
            statistics.median(times[k * decile : (k + 1) * decile]) for k in range(10)
        ],
        "remember_all": _stats(times),
        "total_remember_s": total_s,
        "links": SIDE_LINKS,
        "peak_rss_mib": core._peak_rss_mib(),
        "exact_title_first": exact,
        "exact_title_sampled": len(sample),
        "paraphrase_top5": paraphrase_hits,
        "paraphrase_sampled": 100,
        "read_pending_20_chars": len(side.pending_text()),
        "can_do_heldout_right_first": sum(1 for want, got in routed if want == got),
        "can_do_heldout_right_first_without_spill": sum(
            1 for want, got in routed if want == got and want != "do_spill"
        ),
        "can_do_heldout": len(routed),
        "can_do_heldout_without_spill": sum(1 for want, _ in routed if want != "do_spill"),
        "can_do_misses": [
            [x["goal"], want, got]
            for x, (want, got) in zip(intents, routed, strict=True)
            if want != got
        ],
    }


def _server_command(impl: str, python: str, size: int) -> list[str]:
    """The stdio server of each implementation, both with the cap at `size` (devmemomcp's
    `python -m devmemomcp` has no option for it, so its `create_server` is called directly)."""
    if impl == "mbank":  # with --bank, so do_spill is in the catalogue the held-out set spans
        return [python, "-m", "mbank.memo", "--max-nodes", str(size), "--bank", tempfile_dir()]
    code = (
        "from devmemomcp.domain.store import MemoryStore\n"
        "from devmemomcp.transport.server import create_server\n"
        f"create_server(store=MemoryStore(max_nodes={size}))[0].run()\n"
    )
    return [python, "-c", code]


def _child() -> Path:
    """/proc/<pid> of this process's child (the stdio server)."""
    me = str(os.getpid())
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:
            return stat.parent
    raise RuntimeError("the stdio server process was not found")


def _peak_rss_mib(proc: Path) -> float:
    """VmHWM of a process, from /proc."""
    for line in (proc / "status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def _cpu_s(proc: Path) -> float:
    """User + system CPU seconds a process has used, from /proc (load-independent)."""
    fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_wire(impl: str, python: str, size: int, seed: int) -> dict[str, Any]:
    """The same workload as `run_side`, as an agent pays it: through the real stdio server of
    each implementation, with the same client (mbank's `mcp`), the server's peak RSS from /proc."""
    import anyio
    from mcp import Client, StdioServerParameters

    corpus = generate(size, seed)
    by_last: dict[int, list[tuple[int, int, str]]] = {}
    for a, b, kind in link_plan(size, SIDE_LINKS, seed):
        by_last.setdefault(max(a, b), []).append((a, b, kind))
    intents = json.loads(HELDOUT.read_text(encoding="utf-8"))["intents"]
    out: dict[str, Any] = {"impl": impl, "size": size, "load_at_start": os.getloadavg()[0]}
    command = _server_command(impl, python, size)
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=tempfile_dir())

    async def main() -> None:
        async with Client(params, mode="legacy") as client:

            async def call(name: str, args: dict[str, Any]) -> Any:
                result = await client.call_tool(name, args)
                text = result.content[0].text  # type: ignore[union-attr]
                return text, json.loads(text)

            ids: list[str] = []
            times: list[float] = []
            server = _child()
            cpu = [_cpu_s(server)]
            t0 = time.perf_counter()
            for i, item in enumerate(corpus):
                start = time.perf_counter()
                _, made = await call("do_remember", {**item, "idempotency_key": f"r{i}"})
                times.append((time.perf_counter() - start) * 1000.0)
                ids.append(made["applied_value"]["node"]["id"])
                for n, (a, b, kind) in enumerate(by_last.get(i, ())):
                    await call(
                        "do_link",
                        {
                            "src": ids[a],
                            "dst": ids[b],
                            "kind": kind,
                            "idempotency_key": f"l{i}-{n}",
                        },
                    )
                if (i + 1) % (size // 10) == 0:
                    cpu.append(_cpu_s(server))
            out["total_remember_s"] = time.perf_counter() - t0
            decile = size // 10
            out["remember_p50_by_decile_ms"] = [
                statistics.median(times[k * decile : (k + 1) * decile]) for k in range(10)
            ]
            out["remember_all"] = _stats(times)
            out["server_cpu_ms_per_insert_by_decile"] = [
                (b - a) * 1000.0 / decile for a, b in pairwise(cpu)
            ]
            text, _ = await call("read_pending", {})
            out["read_pending_20_chars"] = len(text)
            right = right_without_spill = 0
            for x in intents:
                _, routed = await call("can_do", {"intent": {"goal": x["goal"]}})
                candidates = routed.get("candidates") or []
                hit = bool(candidates) and candidates[0]["capability"] == x["tool"]
                right += hit
                right_without_spill += hit and x["tool"] != "do_spill"
            out["can_do_heldout_right_first"] = right
            out["can_do_heldout_right_first_without_spill"] = right_without_spill
            out["can_do_heldout"] = len(intents)
            out["can_do_heldout_without_spill"] = sum(x["tool"] != "do_spill" for x in intents)
            out["server_peak_rss_mib"] = _peak_rss_mib(server)

    anyio.run(main)
    return out


def tempfile_dir() -> str:
    """A scratch working directory for a spawned server."""
    import tempfile

    return tempfile.mkdtemp(prefix="mbank-bench-memo-")


def scratch_devmemomcp(venv: Path) -> Path:
    """devmemomcp from the package index into a scratch venv (never an mbank dependency)."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", DEVMEMOMCP], check=True, capture_output=True
    )
    return python


def spawn_side(python: str, impl: str, size: int, seed: int, clock: str) -> dict[str, Any]:
    done = subprocess.run(
        [python, "-m", "bench.memo", "--side", impl, "--worker", str(size), "--seed", str(seed),
         "--clock", clock],
        check=True, capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1],
    )  # fmt: skip
    data: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return data


def wire_table(wires: list[dict[str, Any]]) -> str:
    size = wires[0]["size"]
    names = {"mbank": "mbank memo", "devmemomcp": "devmemomcp 0.1.1"}
    head = f"| through stdio, same client ({size:,} items, {SIDE_LINKS} links) | "
    lines = [
        head + " | ".join(names[w["impl"]] for w in wires) + " |",
        "|---" * (len(wires) + 1) + "|",
    ]

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> None:
        lines.append(f"| {label} | " + " | ".join(cell(w) for w in wires) + " |")

    for k in range(10):
        row(
            f"do_remember p50, items {k * 10}–{(k + 1) * 10} % (ms)",
            lambda w, k=k: f"{w['remember_p50_by_decile_ms'][k]:.3f}",
        )
    row(
        "last ÷ first decile",
        lambda w: f"{w['remember_p50_by_decile_ms'][-1] / w['remember_p50_by_decile_ms'][0]:.2f}",
    )
    row(
        "server CPU per insert (its links included), first / last decile (ms)",
        lambda w: (
            f"{w['server_cpu_ms_per_insert_by_decile'][0]:.2f} / "
            f"{w['server_cpu_ms_per_insert_by_decile'][-1]:.2f}"
        ),
    )
    row("total time of the inserts and links (s)", lambda w: f"{w['total_remember_s']:.1f}")
    row("server peak RSS (MiB)", lambda w: f"{w['server_peak_rss_mib']:.1f}")
    row("read_pending (20 items), text characters", lambda w: f"{w['read_pending_20_chars']:,}")
    row(
        "can_do right tool first, held-out (all / without do_spill)",
        lambda w: (
            f"{w['can_do_heldout_right_first']}/{w['can_do_heldout']} / "
            f"{w['can_do_heldout_right_first_without_spill']}/{w['can_do_heldout_without_spill']}"
        ),
    )
    row("load average at the start", lambda w: f"{w['load_at_start']:.2f}")
    return "\n".join(lines)


def side_table(sides: list[dict[str, Any]]) -> str:
    head = "| issue 19 workload (" + f"{sides[0]['size']:,} items, {SIDE_LINKS} links) | "
    lines = [head + " | ".join(s["impl"] for s in sides) + " |", "|---" * (len(sides) + 1) + "|"]

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> None:
        lines.append(f"| {label} | " + " | ".join(cell(s) for s in sides) + " |")

    for k in range(10):
        row(
            f"do_remember p50, items {k * 10}–{(k + 1) * 10} % (ms)",
            lambda s, k=k: f"{s['remember_p50_by_decile_ms'][k]:.3f}",
        )
    row(
        "last ÷ first decile",
        lambda s: f"{s['remember_p50_by_decile_ms'][-1] / s['remember_p50_by_decile_ms'][0]:.2f}",
    )
    row("do_remember p95 / p99 (ms)",
        lambda s: f"{s['remember_all']['p95']:.2f} / {s['remember_all']['p99']:.2f}")  # fmt: skip
    row("total time of the inserts and links (s)", lambda s: f"{s['total_remember_s']:.1f}")
    row("peak RSS (MiB)", lambda s: f"{s['peak_rss_mib']:.1f}")
    row("exact title first", lambda s: f"{s['exact_title_first']}/{s['exact_title_sampled']}")
    row("paraphrase, same topic in top 5",
        lambda s: f"{s['paraphrase_top5']}/{s['paraphrase_sampled']}")  # fmt: skip
    row("read_pending (20 items), text characters", lambda s: f"{s['read_pending_20_chars']:,}")
    row(
        "can_do right tool first, held-out (all / without do_spill)",
        lambda s: (
            f"{s['can_do_heldout_right_first']}/{s['can_do_heldout']} / "
            f"{s['can_do_heldout_right_first_without_spill']}/{s['can_do_heldout_without_spill']}"
        ),
    )
    row("load average at the start", lambda s: f"{s['load_at_start']:.2f}")
    return "\n".join(lines)
