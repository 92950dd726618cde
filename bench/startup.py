"""Startup and surface figures of the MCP server (spec 07 §6.2 rows "MCP stdio startup",
"CLI startup", "tools/list size"; 04 §7).

    python -m bench.startup                  # on a generated 368-document bank
    python -m bench.startup --root PATH      # on any bank
    python -m bench.startup --runs 9 --json out.json
    python -m bench.startup --cold [--sizes 368 2000 10000] [--baseline-venv /tmp/venv010]

`--cold` prints issue 17's table instead, on generated banks of each size: spawn → first
`bank_route` answer of a first session (it builds and writes the projection cache), of a second
session (it reads it) and with the cache off, `import mcp` beside them, the server's peak RSS
(VmHWM) of each, the same of another install's server when `--baseline-venv` names its venv
(0.1.0, say), and the warm route / search p50 of a warmed server's index with the bare scandir
+ stat walk and the target 1.3 × walk + 10 ms beside them. It writes the figures as JSON into
`bench/results/` (or `--json`).

What is measured, each in fresh processes except the in-process latency:

- spawn → `initialize` answer, and spawn → first `tools/list` answer, of `mbank --root <bank>`
  (the bare form an MCP client starts), median of 5;
- `mbank route "<question>"` wall time (the CLI never imports `mcp`), median of 5;
- `bank_route` per call through the SDK's in-process client (refresh included), p50 / p95;
- the characters of the full, seed and off surfaces (04 §7.1).

The metric functions also fit `bench/run.py`'s table: each takes its `Context` and returns
`{row: Stat}` (see `ROWS` at the bottom for the rows to register).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
RUNS = 5
ROUTE_CALLS = 200
QUESTION = "how a feature package moves through its gates"


def spawn_to_answers(root: Path, runs: int = RUNS) -> tuple[list[float], list[float]]:
    """Milliseconds from spawn to the `initialize` answer and to the first `tools/list` answer."""
    from mbank.budget import ServerProcess

    initialize: list[float] = []
    first_list: list[float] = []
    for _ in range(runs):
        with ServerProcess(["--root", str(root)], cwd=str(REPO_ROOT)) as server:
            server.initialize(client="mbank-bench")
            initialize.append((time.perf_counter() - server.started) * 1e3)
            server.request("tools/list")
            first_list.append((time.perf_counter() - server.started) * 1e3)
    return initialize, first_list


def import_mcp_times(runs: int = RUNS) -> list[float]:
    """Wall milliseconds of `python -c "import mcp"`: the floor every MCP server pays."""
    samples: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import mcp"], check=True)
        samples.append((time.perf_counter() - started) * 1e3)
    return samples


def _peak_rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def spawn_to_first_route(
    root: Path, env: dict[str, str], python: str = sys.executable
) -> tuple[float, float]:
    """(ms from spawn to the first `bank_route` answer, the server's peak RSS in MiB).

    Another install's `python` runs from a neutral directory, so that `-m mbank` is its own
    mbank and not this checkout's."""
    from mbank.budget import ServerProcess

    cwd = str(REPO_ROOT) if python == sys.executable else tempfile.gettempdir()
    with ServerProcess(["--root", str(root)], cwd=cwd, env=env, python=python) as server:
        server.initialize(client="mbank-bench")
        answer = server.request(
            "tools/call", {"name": "bank_route", "arguments": {"question": QUESTION}}
        )
        elapsed = (time.perf_counter() - server.started) * 1e3
        if answer.get("isError"):
            raise RuntimeError(str(answer))
        return elapsed, _peak_rss_mib(server.process.pid)


def cold_start_samples(root: Path, runs: int = RUNS) -> dict[str, list[float]]:
    """Spawn → first route of a first session (empty cache: it builds and writes it), of a
    second session (the cache it left), and with the cache off (0.1.0's path), with RSS."""
    found: dict[str, list[float]] = {
        key: [] for key in ("first", "second", "off", "rss_first", "rss_second", "rss_off")
    }
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="mbank-cold-") as cache:
            env = {**os.environ, "XDG_CACHE_HOME": cache}
            for label, extra in (("first", {}), ("second", {}), ("off", {"MBANK_NO_CACHE": "1"})):
                elapsed, rss = spawn_to_first_route(root, {**env, **extra})
                found[label].append(elapsed)
                found[f"rss_{label}"].append(rss)
    return found


def baseline_samples(root: Path, python: str, runs: int = RUNS) -> dict[str, list[float]]:
    """Spawn → first route and peak RSS of another install's server (0.1.0 has no cache: its
    every session is a first one)."""
    found: dict[str, list[float]] = {"first": [], "rss": []}
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="mbank-cold-") as cache:
            elapsed, rss = spawn_to_first_route(
                root, {**os.environ, "XDG_CACHE_HOME": cache}, python
            )
        found["first"].append(elapsed)
        found["rss"].append(rss)
    return found


def warm_read_samples(root: Path, calls: int = 60) -> dict[str, list[float]]:
    """Per-call ms of `route` and `search` (each with its refresh) on the index a server's
    warm-up leaves (`warm_start`, frozen as a server freezes it), interleaved with the bare
    scandir + stat walk of the same bank."""
    import gc
    from random import Random

    from bench.run import route_questions, search_queries, walk_markdown
    from mbank.projection_cache import warm_start
    from mbank.route import route
    from mbank.search import SearchIndex, search
    from mbank.snapshot import Bank

    bank = Bank(root)
    index, _ = warm_start(bank, SearchIndex(), freeze=True)
    snapshot = bank.refresh()
    questions = route_questions(snapshot, Random(1), calls)
    queries = search_queries(snapshot, Random(1), calls)
    for question, query in zip(questions, queries, strict=False):  # first uses, not timed
        route(bank.refresh(), index, question)
        search(bank.refresh(), index, query)
    found: dict[str, list[float]] = {"walk": [], "route": [], "search": []}

    def timed(label: str, call: Any) -> None:
        started = time.perf_counter()
        call()
        found[label].append((time.perf_counter() - started) * 1e3)

    for question, query in zip(questions, queries, strict=False):
        timed("walk", lambda: sum(1 for _ in walk_markdown(str(root))))
        timed("route", lambda: route(bank.refresh(), index, question))  # noqa: B023
        timed("search", lambda: search(bank.refresh(), index, query))  # noqa: B023
    gc.unfreeze()
    return found


def cli_route_times(root: Path, runs: int = RUNS) -> list[float]:
    """Wall milliseconds of `python -m mbank --root <bank> route "<question>"`."""
    samples: list[float] = []
    command = [sys.executable, "-m", "mbank", "--root", str(root), "route", QUESTION]
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, cwd=REPO_ROOT, check=True)
        samples.append((time.perf_counter() - started) * 1e3)
    return samples


def in_process_route_times(root: Path, calls: int = ROUTE_CALLS) -> list[float]:
    """Milliseconds per `bank_route` call through the in-process client (after one warm call)."""
    import anyio

    from mbank.server import build_server, in_process_client

    questions = [QUESTION, "where are the filter thresholds defined", "как устроен релиз"]
    samples: list[float] = []

    async def run() -> None:
        async with in_process_client(build_server(str(root))) as client:
            await client.call_tool("bank_route", {"question": QUESTION})
            for position in range(calls):
                question = questions[position % len(questions)]
                started = time.perf_counter()
                result = await client.call_tool("bank_route", {"question": question})
                samples.append((time.perf_counter() - started) * 1e3)
                if result.is_error:
                    raise RuntimeError(str(result.content))

    anyio.run(run)
    return samples


def surface_sizes(root: Path) -> dict[str, Any]:
    """`mbank surface-cost` figures for the bank (full, seed, off)."""
    from mbank.budget import surface_cost

    return surface_cost(str(root))


# --------------------------------------------------------------------------------------------
# bench/run.py metric functions: (ctx) -> {row key: Stat}
# --------------------------------------------------------------------------------------------


def mcp_stdio_startup(ctx: Any) -> dict[str, Any]:
    """Spawn → initialize answer and → first tools/list answer, median of 5."""
    from bench.run import Stat

    initialize, first_list = spawn_to_answers(ctx.target.root, RUNS * ctx.repeat)
    return {
        "mcp_initialize": Stat("ms", initialize),
        "mcp_first_tools_list": Stat("ms", first_list),
    }


def cold_start(ctx: Any) -> dict[str, Any]:
    """Issue 17's row: spawn → first `bank_route` answer of a first and a second session and
    with the cache off, `import mcp` in a bare interpreter beside them, and peak RSS."""
    from bench.run import Stat

    runs = RUNS * ctx.repeat
    found = cold_start_samples(ctx.target.root, runs)
    stats = {
        "cold_import_mcp": Stat("ms", import_mcp_times(runs)),
        **{f"cold_{label}": Stat("ms", found[label]) for label in ("first", "second", "off")},
        **{
            f"cold_rss_{label}": Stat("MiB", found[f"rss_{label}"])
            for label in ("first", "second", "off")
        },
    }
    floor = statistics.median(stats["cold_import_mcp"].samples)
    stats["cold_second_over_mcp"] = Stat(
        "ms", [statistics.median(found["second"]) - floor], note="second − import mcp (medians)"
    )
    return stats


def mcp_route_in_process(ctx: Any) -> dict[str, Any]:
    """`bank_route` through the in-process MCP client, p50 / p95 of 200."""
    from bench.run import Stat

    return {"mcp_route": Stat("ms", in_process_route_times(ctx.target.root))}


def tools_list_size(ctx: Any) -> dict[str, Any]:
    """Characters of the full, seed and off surfaces (04 §7.1)."""
    from bench.run import Stat

    surfaces = surface_sizes(ctx.target.root)["surfaces"]
    return {
        f"surface_{name}": Stat("characters", [float(surfaces[name]["total"])])
        for name in ("full", "seed", "off")
    }


# Rows for bench/run.py's METRICS table (key, label, unit, p95):
ROWS: dict[str, tuple[tuple[str, str, str, bool], ...]] = {
    "mcp_stdio_startup": (
        ("mcp_initialize", "MCP stdio: spawn → initialize answer (median of 5)", "ms", False),
        ("mcp_first_tools_list", "MCP stdio: spawn → first tools/list (median of 5)", "ms", False),
    ),
    "cold_start": (
        ("cold_import_mcp", "cold start: `python -c 'import mcp'` (the floor)", "ms", False),
        ("cold_first", "cold start: spawn → first route, first session (builds)", "ms", False),
        ("cold_second", "cold start: spawn → first route, second session (cache)", "ms", False),
        ("cold_off", "cold start: spawn → first route, --no-cache (0.1.0's path)", "ms", False),
        ("cold_second_over_mcp", "cold start: second session − import mcp", "ms", False),
        ("cold_rss_first", "cold start: server peak RSS, first session", "MiB", False),
        ("cold_rss_second", "cold start: server peak RSS, second session", "MiB", False),
        ("cold_rss_off", "cold start: server peak RSS, --no-cache", "MiB", False),
    ),
    "mcp_route_in_process": (
        ("mcp_route", "bank_route via in-process MCP client (p50 / p95 of 200)", "ms", True),
    ),
    "tools_list_size": (
        ("surface_full", "surface: full (04 §7, limit 18,290)", "characters", False),
        ("surface_seed", "surface: seed (limit 1,575)", "characters", False),
        ("surface_off", "surface: off (limit 87)", "characters", False),
    ),
}


# --------------------------------------------------------------------------------------------
# Stand-alone run
# --------------------------------------------------------------------------------------------


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))
    return ordered[int(rank) - 1]


# The rows of the --cold table: figure key → label (with its unit)
COLD_ROWS: dict[str, str] = {
    "import_mcp": "`python -c 'import mcp'`, the floor (ms)",
    "first": "spawn → first route, first session: builds, writes the cache (ms)",
    "second": "spawn → first route, second session: reads the cache (ms)",
    "off": "spawn → first route, cache off (ms)",
    "baseline": "spawn → first route, baseline install (ms)",
    "rss_first": "peak RSS, first session (MiB)",
    "rss_second": "peak RSS, second session (MiB)",
    "rss_off": "peak RSS, cache off (MiB)",
    "rss_baseline": "peak RSS, baseline install (MiB)",
    "walk": "bare scandir + stat walk, p50 (ms)",
    "route": "warm bank_route incl. refresh, p50 (ms)",
    "search": "warm bank_search incl. refresh, p50 (ms)",
    "warm_target": "warm target: 1.3 × walk + 10 ms (ms)",
}


def cold_table(sizes: list[int], runs: int, baseline: str | None) -> dict[str, Any]:
    """Issue 17's figures on generated banks of `sizes` (medians of `runs` processes)."""
    from bench.generate import DEFAULT_SEED, generate

    columns: dict[str, dict[str, float]] = {}
    loads: list[float] = []
    with tempfile.TemporaryDirectory(prefix="mbank-cold-banks-") as scratch:
        for size in sizes:
            root = Path(scratch) / f"bank-{size}"
            generate(size, DEFAULT_SEED, root)
            loads.append(os.getloadavg()[0])
            print(f"bench.startup --cold: {size} documents", file=sys.stderr)
            found = cold_start_samples(root, runs)
            column = {key: statistics.median(values) for key, values in found.items()}
            column["import_mcp"] = statistics.median(import_mcp_times(runs))
            if baseline is not None:
                base = baseline_samples(root, baseline, runs)
                column["baseline"] = statistics.median(base["first"])
                column["rss_baseline"] = statistics.median(base["rss"])
            warm = warm_read_samples(root)
            column.update({key: statistics.median(values) for key, values in warm.items()})
            column["warm_target"] = 1.3 * column["walk"] + 10
            columns[str(size)] = column
            loads.append(os.getloadavg()[0])
    return {"sizes": sizes, "runs": runs, "baseline": baseline, "load": loads, "columns": columns}


def print_cold_table(figures: dict[str, Any]) -> None:
    columns: dict[str, dict[str, float]] = figures["columns"]
    print("| metric | " + " | ".join(f"{size} docs" for size in columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for key, label in COLD_ROWS.items():
        if not any(key in column for column in columns.values()):
            continue
        cells = [f"{column[key]:.1f}" if key in column else "–" for column in columns.values()]
        print(f"| {label} | " + " | ".join(cells) + " |")
    low, high = min(figures["load"]), max(figures["load"])
    print(
        f"\nmedians of {figures['runs']} processes; 1-minute load {low:.2f}–{high:.2f} on "
        f"{os.cpu_count()} CPUs; baseline: {figures['baseline'] or 'none'}"
    )


def main(argv: list[str] | None = None) -> int:
    """Print the startup table for one bank (a generated 368-document bank by default)."""
    parser = argparse.ArgumentParser(prog="python -m bench.startup", description=__doc__)
    parser.add_argument("--root", type=Path, help="the bank (default: a generated 368-doc bank)")
    parser.add_argument("--runs", type=int, default=RUNS, help="processes per figure (5)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--cold", action="store_true", help="issue 17's cold-start table")
    parser.add_argument("--sizes", type=int, nargs="*", default=[368, 2000, 10000])
    parser.add_argument("--baseline-venv", type=Path, help="another install's venv (0.1.0)")
    args = parser.parse_args(argv)
    if args.cold:
        baseline = str(args.baseline_venv / "bin" / "python") if args.baseline_venv else None
        cold = cold_table(args.sizes, args.runs, baseline)
        print_cold_table(cold)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        out = args.json or REPO_ROOT / "bench" / "results" / f"{stamp}-cold-start.json"
        out.write_text(json.dumps(cold, indent=2) + "\n", encoding="utf-8")
        print(f"written: {out}", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory(prefix="mbank-startup-") as scratch:
        root: Path = args.root
        if root is None:
            from bench.generate import DEFAULT_SEED, generate

            root = Path(scratch) / "bank"
            generate(368, DEFAULT_SEED, root)
        initialize, first_list = spawn_to_answers(root, args.runs)
        cli = cli_route_times(root, args.runs)
        route = in_process_route_times(root)
        sizes = surface_sizes(root)["surfaces"]
    figures: dict[str, Any] = {
        "bank": str(args.root or "generated 368"),
        "spawn_to_initialize_ms": statistics.median(initialize),
        "spawn_to_first_tools_list_ms": statistics.median(first_list),
        "cli_route_ms": statistics.median(cli),
        "in_process_route_p50_ms": statistics.median(route),
        "in_process_route_p95_ms": _percentile(route, 95),
        "surface_characters": {name: sizes[name]["total"] for name in ("full", "seed", "off")},
        "samples": {"initialize": initialize, "tools_list": first_list, "cli_route": cli},
    }
    rows = [
        (
            "MCP stdio: spawn → initialize answer (median)",
            f"{figures['spawn_to_initialize_ms']:.0f} ms",
        ),
        (
            "MCP stdio: spawn → first tools/list (median)",
            f"{figures['spawn_to_first_tools_list_ms']:.0f} ms",
        ),
        ('CLI `mbank route "<q>"` (median)', f"{figures['cli_route_ms']:.0f} ms"),
        (
            "bank_route, in-process client (p50 / p95)",
            f"{figures['in_process_route_p50_ms']:.2f} / "
            f"{figures['in_process_route_p95_ms']:.2f} ms",
        ),
        *(
            (f"surface {name} (characters)", str(total))
            for name, total in figures["surface_characters"].items()
        ),
    ]
    print(f"bank: {figures['bank']}  (runs: {args.runs})\n")
    print("| metric | value |\n|---|---:|")
    for label, value in rows:
        print(f"| {label} | {value} |")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
