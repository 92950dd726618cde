"""Startup and surface figures of the MCP server (spec 07 §6.2 rows "MCP stdio startup",
"CLI startup", "tools/list size"; 04 §7).

    python -m bench.startup                  # on a generated 368-document bank
    python -m bench.startup --root PATH      # on any bank
    python -m bench.startup --runs 9 --json out.json

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


def spawn_to_first_route(root: Path, env: dict[str, str]) -> tuple[float, float]:
    """(ms from spawn to the first `bank_route` answer, the server's peak RSS in MiB)."""
    from mbank.budget import ServerProcess

    with ServerProcess(["--root", str(root)], cwd=str(REPO_ROOT), env=env) as server:
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


def main(argv: list[str] | None = None) -> int:
    """Print the startup table for one bank (a generated 368-document bank by default)."""
    parser = argparse.ArgumentParser(prog="python -m bench.startup", description=__doc__)
    parser.add_argument("--root", type=Path, help="the bank (default: a generated 368-doc bank)")
    parser.add_argument("--runs", type=int, default=RUNS, help="processes per figure (5)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
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
