"""Measure mbank on generated banks and real corpora (spec 07 §6.2).

    python -m bench.run --size 368
    python -m bench.run --size all --repeat 2
    python -m bench.run --size 2000 --corpus ../shared/corpora/dapi__code-converge --json out.json

Every metric is a small function registered in `METRICS` (bottom of this file). A function
that needs a module mbank does not have yet raises ImportError, and its rows read `n/a`; any
other exception marks its rows `error` (with the reason on stderr) without stopping the run.
Benchmarks never assert a time: the numbers are printed as a Markdown table (one row per
metric, one column per bank) and written as one JSON file per bank under `bench/results/`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from random import Random
from typing import Any

from bench.apply_speed import apply_latency
from bench.drift_speed import drift_50_anchors
from bench.generate import (
    DEFAULT_SEED,
    GENERATOR_VERSION,
    MARKER,
    STANDARD_SIZES,
    fingerprint,
    generate,
)
from bench.reads_speed import ROWS as READS_ROWS
from bench.reads_speed import reads_route, reads_search
from bench.route_quality import RUN_ROWS, run_metric
from bench.startup import ROWS as STARTUP_ROWS
from bench.startup import cold_start, mcp_route_in_process, mcp_stdio_startup, tools_list_size

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO_ROOT / "bench" / "results"
BANKS_DIR = REPO_ROOT / "bench" / ".banks"
DEFAULT_CORPORA = REPO_ROOT.parent / "shared" / "corpora"
SKIPPED_DIRECTORIES = ("node_modules", "dist")

COLD_PROCESSES = 5
UNCHANGED_REFRESHES = 50
EDITED_DOCUMENTS = 20
ROUTE_QUESTIONS = 200
VALIDATE_RUNS = 5
CLI_RUNS = 5
CREATES = 20
# reads_speed's rows that `reads_route` fills; `reads_search` fills the others
ROUTE_READS_KEYS = ("reads_route", "reads_route_core", "reads_route_header_only", "reads_refresh")
COUNT_UNITS = ("files", "anchors", "terms", "findings", "characters")

# --------------------------------------------------------------------------------------------
# Banks under test
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One bank to measure: a generated one (with size and seed) or a corpus folder."""

    label: str
    root: Path
    kind: str  # "generated" or "corpus"
    size: int | None
    seed: int | None
    documents: int
    bytes: int
    git: bool


def walk_markdown(root: str) -> Iterator[str]:
    """Absolute paths of the files the bank walk would index (01 §1.2), stat'ed on the way.

    This is the bare baseline the unchanged refresh is compared with: `os.scandir`, the same
    skip rules, one `stat` per document, nothing parsed and nothing kept.
    """
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as entries:
                listed = list(entries)
        except OSError:
            continue
        for entry in listed:
            name = entry.name
            if name.startswith(".") or entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if name not in SKIPPED_DIRECTORIES:
                    stack.append(entry.path)
            elif name.endswith(".md"):
                os.stat(entry.path, follow_symlinks=False)
                yield entry.path


def describe(label: str, root: Path, kind: str, size: int | None, seed: int | None) -> Target:
    """The bank at `root`, counted; the root is made absolute because some metrics hand it
    to processes started in another directory (`mbank surface-cost` runs in a temporary one,
    where a relative root would name no bank and measure the seed surface instead)."""
    root = root.resolve()
    paths = list(walk_markdown(str(root)))
    total = sum(os.stat(p).st_size for p in paths)
    git = (root / ".git").exists()
    return Target(label, root, kind, size, seed, len(paths), total, git)


def generated_bank(
    size: int, seed: int, banks_dir: Path, materialized: bool = False, git_commits: int = 0
) -> Target:
    """Generate the bank under `banks_dir`, or reuse it when its marker says it matches."""
    suffix = ("-m" if materialized else "") + (f"-g{git_commits}" if git_commits else "")
    out = banks_dir / f"{size}-{seed}{suffix}"
    wanted = {
        "generator": GENERATOR_VERSION,
        "fingerprint": fingerprint(),
        "size": size,
        "seed": seed,
        "materialized": materialized,
        "git_commits": git_commits,
    }
    marker = out / MARKER
    reuse = False
    if marker.is_file():
        try:
            found = json.loads(marker.read_text(encoding="utf-8"))
            reuse = all(found.get(k) == v for k, v in wanted.items())
        except (OSError, ValueError):
            reuse = False
    if not reuse:
        log(f"generating a bank of {size} documents in {out}")
        generate(size, seed, out, materialized, git_commits)
    return describe(f"gen-{size}{suffix}", out, "generated", size, seed)


def corpus_roots(given: Sequence[str] | None) -> list[Path]:
    if given is not None:
        return [Path(p) for p in given]
    if DEFAULT_CORPORA.is_dir():
        return sorted(p for p in DEFAULT_CORPORA.iterdir() if p.is_dir())
    return []


# --------------------------------------------------------------------------------------------
# Numbers
# --------------------------------------------------------------------------------------------


@dataclass
class Stat:
    """The samples of one metric on one bank, or why there are none."""

    unit: str
    samples: list[float] = field(default_factory=list)
    status: str = "ok"  # ok, n/a, error
    note: str = ""
    details: dict[str, Any] | None = None  # extra facts for the JSON (findings by rule …)
    load: float | None = None  # the 1-minute load average when its metric started

    def summary(self) -> dict[str, object]:
        values = sorted(self.samples)
        out: dict[str, object] = {
            "p50": statistics.median(values) if values else None,
            "p95": percentile(values, 95) if values else None,
            "mean": statistics.fmean(values) if values else None,
            "n": len(values),
            "unit": self.unit,
        }
        if self.status != "ok":
            out["status"] = self.status
            out["note"] = self.note
        if self.details:
            out["details"] = self.details
        if self.load is not None:
            out["load"] = round(self.load, 2)
        return out


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of already sorted values."""
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


class NotApplicable(Exception):
    """A metric that cannot run on this bank (for example drift on a bank without git)."""


@dataclass
class Context:
    """What a metric function gets: the bank, the run's settings and a scratch directory."""

    target: Target
    seed: int
    repeat: int
    scratch: Path
    _copy: Path | None = None

    def writable_copy(self) -> Path:
        """A private copy of the bank (mtimes kept) for metrics that write; made once."""
        if self._copy is None:
            self._copy = self.scratch / "bank"
            shutil.copytree(
                self.target.root,
                self._copy,
                ignore=shutil.ignore_patterns(".git"),
                symlinks=True,
            )
        return self._copy


def ms(ns: int) -> float:
    return ns / 1e6


def log(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Metrics: each returns {row name: Stat}; the rows are declared in METRICS
# --------------------------------------------------------------------------------------------

_COLD_BUILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from mbank.snapshot import Bank
t1 = time.perf_counter()
bank = Bank(sys.argv[1])
snapshot = bank.refresh()
t2 = time.perf_counter()
# On Linux ru_maxrss survives exec and so includes the parent's high-water mark at fork;
# VmHWM belongs to this address space only.
try:
    with open("/proc/self/status") as fh:
        hwm = [line for line in fh if line.startswith("VmHWM:")]
    peak = int(hwm[0].split()[1]) * 1024
except (OSError, IndexError):
    scale = 1 if sys.platform == "darwin" else 1024
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
print(json.dumps({
    "import_ms": (t1 - t0) * 1e3,
    "build_ms": (t2 - t1) * 1e3,
    "parsed": bank.last_refresh_parsed,
    "documents": len(snapshot.docs),
    "peak_rss": peak,
}))
"""


def _require(module: str) -> None:
    """Raise ImportError when an mbank module does not exist yet (its rows then read n/a)."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ImportError(f"No module named {module!r}")


def _load(module: str, name: str) -> Any:
    """`module.name`, imported now; ImportError (so n/a) while the module does not exist."""
    import importlib

    return getattr(importlib.import_module(module), name)


def cold_build(ctx: Context) -> dict[str, Stat]:
    """New `Bank` + first `refresh()` in fresh processes (files already in the page cache).

    One unmeasured process runs first, so that byte-compiled modules exist and are cached.
    """
    _require("mbank.snapshot")
    build, imports, parsed, rss = Stat("ms"), Stat("ms"), Stat("files"), Stat("MiB")
    for run in range(COLD_PROCESSES * ctx.repeat + 1):
        done = subprocess.run(
            [sys.executable, "-c", _COLD_BUILD, str(ctx.target.root)],
            capture_output=True,
            text=True,
            cwd=REPO_ROOT,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"cold build process failed: {done.stderr.strip()[-400:]}")
        if run == 0:
            continue  # warm-up: byte-compiled modules and the interpreter in the page cache
        result = json.loads(done.stdout.strip().splitlines()[-1])
        build.samples.append(result["build_ms"])
        imports.samples.append(result["import_ms"])
        parsed.samples.append(result["parsed"])
        rss.samples.append(result["peak_rss"] / 2**20)
    return {
        "cold_build": build,
        "cold_build_parsed": parsed,
        "snapshot_import": imports,
        "memory_peak_rss": rss,
    }


def refresh_unchanged(ctx: Context) -> dict[str, Stat]:
    """`refresh()` of an unchanged bank, interleaved with the bare scandir + stat walk."""
    from mbank.snapshot import Bank

    root = str(ctx.target.root)
    bank = Bank(root)
    bank.refresh()
    refresh, walk, parsed = Stat("ms"), Stat("ms"), Stat("files")
    for _ in range(UNCHANGED_REFRESHES * ctx.repeat):
        started = time.perf_counter_ns()
        for _path in walk_markdown(root):
            pass
        walk.samples.append(ms(time.perf_counter_ns() - started))
        started = time.perf_counter_ns()
        bank.refresh()
        refresh.samples.append(ms(time.perf_counter_ns() - started))
        parsed.samples.append(bank.last_refresh_parsed)
    ratio = Stat("x", [statistics.median(refresh.samples) / statistics.median(walk.samples)])
    return {
        "refresh_unchanged": refresh,
        "refresh_unchanged_parsed": parsed,
        "scandir_walk": walk,
        "refresh_over_walk": ratio,
    }


def refresh_after_edit(ctx: Context) -> dict[str, Stat]:
    """Append a line to one document, then `refresh()`; 20 different documents (on a copy)."""
    from mbank.snapshot import Bank

    root = ctx.writable_copy()
    bank = Bank(root)
    snapshot = bank.refresh()
    candidates = sorted(p for p in snapshot.docs if not p.startswith("dna/"))
    rng = Random(ctx.seed)
    count = min(len(candidates), EDITED_DOCUMENTS * ctx.repeat)
    timing, parsed = Stat("ms"), Stat("files")
    for path in rng.sample(candidates, count):
        with open(root / path, "a", encoding="utf-8") as fh:
            fh.write("\nOne more line, appended by the benchmark.\n")
        started = time.perf_counter_ns()
        bank.refresh()
        timing.samples.append(ms(time.perf_counter_ns() - started))
        parsed.samples.append(bank.last_refresh_parsed)
    return {"refresh_after_edit": timing, "refresh_after_edit_parsed": parsed}


RUSSIAN_QUESTIONS = (
    "где пороги фильтрации",
    "почему выбрана очередь",
    "как устроена сверка платежей",
    "кто владеет правилами цен",
    "как откатить релиз",
    "что делать при сбое синхронизации",
    "где описан журнал изменений",
    "какие риски у эпика",
    "как проверить фичу перед закрытием",
    "что такое карантин",
    "как настроить окружение",
    "где требования к отчётам",
    "почему отказались от кэша",
    "как передать сессию",
    "какие поля обязательны во фронтматтере",
    "как восстановить данные",
    "где схема домена",
    "кто утверждает решения",
    "как считать скидки",
    "что входит в план внедрения",
)


def route_questions(snapshot: Any, rng: Random, count: int) -> list[str]:
    """Questions from document titles and purposes with words dropped, plus 20 Russian ones."""
    docs = [d for d in snapshot.docs.values() if d.layer != "inbox"]
    questions: list[str] = []
    while len(questions) < count - len(RUSSIAN_QUESTIONS) and docs:
        doc = rng.choice(docs)
        words = (doc.title if rng.random() < 0.5 or not doc.purpose else doc.purpose).split()
        for _ in range(min(2, len(words) // 3)):
            words.pop(rng.randrange(len(words)))
        if words:
            questions.append(" ".join(words).lower())
    return questions + list(RUSSIAN_QUESTIONS)


def route_latency(ctx: Context) -> dict[str, Stat]:
    """200 `route` calls, each including its refresh (the index is built by a warm-up call)."""
    from mbank.snapshot import Bank

    route = _load("mbank.route", "route")
    search_index = _load("mbank.search", "SearchIndex")
    bank = Bank(ctx.target.root)
    index = search_index()
    questions = route_questions(bank.refresh(), Random(ctx.seed), ROUTE_QUESTIONS)
    route(bank.refresh(), index, questions[0])
    timing = Stat("ms")
    for _ in range(ctx.repeat):
        for question in questions:
            started = time.perf_counter_ns()
            route(bank.refresh(), index, question)
            timing.samples.append(ms(time.perf_counter_ns() - started))
    return {"route": timing}


_IDENTIFIER = re.compile(
    r"\b(?:FT-[A-Z]{3}-\d{3}|(?:REQ|NS|SC|CHK|EVID|SOL|ALT|STEP)-\d{2}|FT-\d{3})\b"
)
_WORD = re.compile(r"[A-Za-z][a-z]{3,}")


def search_queries(snapshot: Any, rng: Random, count: int) -> list[str]:
    """Identifiers, single words and two-word phrases taken from the bank's own text."""
    paths = [p for p in snapshot.raw if not p.startswith("_inbox/")]
    queries: list[str] = []
    while len(queries) < count and paths:
        text = snapshot.raw[rng.choice(paths)]
        kind = len(queries) % 3
        if kind == 0:
            found = _IDENTIFIER.findall(text)
            if found:
                queries.append(rng.choice(found))
                continue
        words = _WORD.findall(text)
        if len(words) < 2:
            continue
        at = rng.randrange(len(words) - 1)
        queries.append(words[at].lower() if kind == 1 else " ".join(words[at : at + 2]).lower())
    return queries


def search_latency(ctx: Context) -> dict[str, Stat]:
    """The first query (it builds the index) alone, then 200 queries with refresh and sync."""
    from mbank.snapshot import Bank

    search = _load("mbank.search", "search")
    search_index = _load("mbank.search", "SearchIndex")
    bank = Bank(ctx.target.root)
    queries = search_queries(bank.refresh(), Random(ctx.seed), ROUTE_QUESTIONS)
    first, terms, timing = Stat("ms"), Stat("terms"), Stat("ms")
    for _ in range(ctx.repeat):
        index = search_index()
        started = time.perf_counter_ns()
        search(bank.refresh(), index, queries[0])
        first.samples.append(ms(time.perf_counter_ns() - started))
        terms.samples.append(index.term_count())
        for query in queries:
            started = time.perf_counter_ns()
            search(bank.refresh(), index, query)
            timing.samples.append(ms(time.perf_counter_ns() - started))
    return {"search_first": first, "search_terms": terms, "search": timing}


def validate_whole_bank(ctx: Context) -> dict[str, Stat]:
    """Whole-bank validation from a cold cache, median of 5; the findings counted by rule."""
    from mbank.snapshot import Bank

    validate = _load("mbank.validate", "validate")
    clear_cache = _load("mbank.validate", "clear_cache")
    bank = Bank(ctx.target.root)
    timing = Stat("ms")
    result: dict[str, Any] = {}
    for _ in range(VALIDATE_RUNS * ctx.repeat):
        snapshot = bank.refresh()
        clear_cache()
        started = time.perf_counter_ns()
        result = validate(snapshot)
        timing.samples.append(ms(time.perf_counter_ns() - started))
    found = Stat("findings", [float(result.get("total", 0))])
    found.details = {
        "errors": result.get("errors"),
        "warnings": result.get("warnings"),
        "byRule": result.get("byRule"),
    }
    return {"validate": timing, "validate_findings": found}


def postcheck_partial(ctx: Context) -> dict[str, Stat]:
    """The post-check's partial validation of a one-document plan (an appended line): the
    findings the plan can affect, before and after, over 20 documents; the virtual apply that
    builds the post-snapshot is not timed."""
    from mbank.snapshot import Bank

    findings = _load("mbank.validate", "findings")
    findings_for = _load("mbank.validate", "findings_for")
    apply_virtually = _load("mbank.plan", "apply_virtually")
    replace_document = _load("mbank.plan", "replace_document")
    document_text = _load("mbank.plan", "document_text")
    plan_type = _load("mbank.model", "Plan")
    snapshot = Bank(ctx.target.root).refresh()
    findings(snapshot)  # the pre-state's validation is cached, as it is for a running server
    candidates = sorted(p for p in snapshot.docs if not p.startswith("dna/"))
    rng = Random(ctx.seed + 1)
    timing = Stat("ms")
    for path in rng.sample(candidates, min(len(candidates), EDITED_DOCUMENTS * ctx.repeat)):
        text = document_text(snapshot, path) + "\nOne more line, planned by the benchmark.\n"
        plan = plan_type("bank_edit", (replace_document(snapshot, path, text),))
        after = apply_virtually(snapshot, plan)
        started = time.perf_counter_ns()
        findings_for(snapshot, plan.paths)
        findings_for(after, plan.paths)
        timing.samples.append(ms(time.perf_counter_ns() - started))
    return {"postcheck_partial": timing}


def drift_latency(ctx: Context) -> dict[str, Stat]:
    """`drift` over the bank's anchors in its git history, median of 5, beside `git log`."""
    from mbank.snapshot import Bank

    drift = _load("mbank.drift", "drift")
    if not ctx.target.git:
        raise NotApplicable("the bank has no git history; generate it with --git 500")
    bank = Bank(ctx.target.root)
    snapshot = bank.refresh()
    anchored = [doc for doc in snapshot.docs.values() if doc.anchors]
    anchors = sorted({a for doc in anchored for a in doc.anchors})
    timing, count, git_log = Stat("ms"), Stat("anchors", [len(anchors)]), Stat("ms")
    for _ in range(VALIDATE_RUNS * ctx.repeat):
        snapshot = bank.refresh()
        started = time.perf_counter_ns()
        drift(snapshot)
        timing.samples.append(ms(time.perf_counter_ns() - started))
    git = shutil.which("git")
    if git is None:
        git_log.status, git_log.note = "n/a", "no git binary"
    else:
        paths = anchors + [doc.path for doc in anchored]
        command = [git, "log", "--no-merges", "--name-only", "--format=%ct", "--", *paths]
        for _ in range(VALIDATE_RUNS * ctx.repeat):
            started = time.perf_counter_ns()
            subprocess.run(command, cwd=ctx.target.root, capture_output=True, check=True)
            git_log.samples.append(ms(time.perf_counter_ns() - started))
    return {"drift": timing, "drift_anchors": count, "drift_git_log": git_log}


def cli_startup(ctx: Context) -> dict[str, Stat]:
    """`mbank route "<q>"` wall time in a fresh process, median of 5."""
    _require("mbank.route")
    timing = Stat("ms")
    command = [sys.executable, "-m", "mbank", "--root", str(ctx.target.root), "route"]
    for _ in range(CLI_RUNS * ctx.repeat):
        started = time.perf_counter_ns()
        done = subprocess.run(
            [*command, "how a feature package moves through its gates"],
            capture_output=True,
            cwd=REPO_ROOT,
            check=False,
        )
        timing.samples.append(ms(time.perf_counter_ns() - started))
        if done.returncode == 2 and b"invalid choice" in done.stderr:
            raise NotApplicable("the CLI has no route subcommand yet")
        if done.returncode != 0:
            raise RuntimeError(f"mbank route exited {done.returncode}: {done.stderr[-300:]!r}")
    return {"cli_startup": timing}


def create_end_to_end(ctx: Context) -> dict[str, Stat]:
    """20 creates into `engineering/` through the tool function, each beside a dry run.

    `mbank.write_tools.create` is what `bank_create` and `mbank create` call: refresh, gates,
    plan, post-check and, for the real create, the journal apply with fsync. It runs on a
    private copy (`.git` and `.mbank/` left out) so the shared writable copy stays as it was.
    One untimed create (dry run and real) first, as a running server has warm caches.
    """
    from mbank.snapshot import Bank

    create = _load("mbank.write_tools", "create")
    root = ctx.scratch / "create"
    shutil.copytree(
        ctx.target.root, root, ignore=shutil.ignore_patterns(".git", ".mbank"), symlinks=True
    )
    bank = Bank(root)
    if "engineering/README.md" not in bank.refresh().docs:
        raise NotApplicable("the bank has no engineering/README.md section index")
    body = "## Context\n\n" + "Prose the create benchmark writes. " * 40 + "\n"
    real, dry = Stat("ms"), Stat("ms")
    for number in range(CREATES * ctx.repeat + 1):
        arguments = {
            "docKind": "engineering",
            "path": f"engineering/bench-create-{number:03d}.md",
            "title": f"Bench Create {number}",
            "purpose": f"Document {number} written by the create benchmark.",
            "derivedFrom": ["README.md"],
            "body": body,
        }
        started = time.perf_counter_ns()
        create(bank, arguments, dry_run=True)
        dry_ms = ms(time.perf_counter_ns() - started)
        started = time.perf_counter_ns()
        result = create(bank, arguments)
        real_ms = ms(time.perf_counter_ns() - started)
        if not result.get("created"):
            raise RuntimeError(f"create wrote nothing: {result!r}"[:400])
        if number:  # the first pair warms the caches
            dry.samples.append(dry_ms)
            real.samples.append(real_ms)
    return {"create": real, "create_dry_run": dry}


@dataclass(frozen=True)
class Row:
    key: str
    label: str
    unit: str
    p95: bool = False  # show "p50 / p95" in the table rather than the median alone


@dataclass(frozen=True)
class Metric:
    func: Callable[[Context], dict[str, Stat]]
    rows: tuple[Row, ...]


# The one table of metrics, in the order of the printed table. Functions kept in their own
# modules (bench/apply_speed.py, drift_speed.py, reads_speed.py, route_quality.py, startup.py)
# declare their rows there; `bench/memo.py` and `bench/validate_speed.py` stay stand-alone (the
# working memory needs no bank; validate_speed adds CPU time to the validate rows below).
METRICS: tuple[Metric, ...] = (
    Metric(
        cold_build,
        (
            Row("cold_build", "cold build: new Bank + first refresh (median of 5 processes)", "ms"),
            Row("cold_build_parsed", "cold build: files parsed", "files"),
            Row("snapshot_import", "import mbank.snapshot in a fresh process", "ms"),
            Row("memory_peak_rss", "peak RSS after the cold build", "MiB"),
        ),
    ),
    Metric(
        refresh_unchanged,
        (
            Row("refresh_unchanged", "refresh, unchanged bank (p50 / p95 of 50)", "ms", True),
            Row("refresh_unchanged_parsed", "refresh, unchanged bank: files parsed", "files"),
            Row("scandir_walk", "bare os.scandir + stat walk (p50 / p95 of 50)", "ms", True),
            Row("refresh_over_walk", "unchanged refresh / bare walk (medians)", "x"),
        ),
    ),
    Metric(
        refresh_after_edit,
        (
            Row("refresh_after_edit", "refresh after one edit (p50 / p95 of 20 docs)", "ms", True),
            Row("refresh_after_edit_parsed", "refresh after one edit: files parsed", "files"),
        ),
    ),
    Metric(route_latency, (Row("route", "route incl. refresh (p50 / p95 of 200)", "ms", True),)),
    Metric(
        search_latency,
        (
            Row("search_first", "search: first query, builds the index", "ms"),
            Row("search_terms", "search: terms in the index", "terms"),
            Row("search", "search incl. refresh + sync (p50 / p95 of 200)", "ms", True),
        ),
    ),
    Metric(reads_route, tuple(Row(*r) for r in READS_ROWS if r[0] in ROUTE_READS_KEYS)),
    Metric(reads_search, tuple(Row(*r) for r in READS_ROWS if r[0] not in ROUTE_READS_KEYS)),
    Metric(run_metric, tuple(Row(*row) for row in RUN_ROWS)),
    Metric(
        validate_whole_bank,
        (
            Row("validate", "validate, whole bank, cold cache (median of 5)", "ms"),
            Row("validate_findings", "validate: findings", "findings"),
        ),
    ),
    Metric(
        postcheck_partial,
        (Row("postcheck_partial", "post-check partial validation (p50 / p95 of 20)", "ms", True),),
    ),
    Metric(
        create_end_to_end,
        (
            Row("create", "create end to end, journal + fsync (p50 / p95 of 20)", "ms", True),
            Row("create_dry_run", "create, dry run (p50 / p95 of 20)", "ms", True),
        ),
    ),
    Metric(
        apply_latency,
        (
            Row(
                "apply_journal",
                "apply 3-file plan through the journal, fsync (p50 / p95)",
                "ms",
                True,
            ),
            Row("apply_bare", "bare fsynced writes of the same 3 files (p50 / p95)", "ms", True),
            Row("apply_atomic", "atomic writes without journal (p50 / p95)", "ms", True),
            Row("apply_overhead", "journal / bare (medians)", "x"),
        ),
    ),
    Metric(
        drift_latency,
        (
            Row("drift", "drift over the anchors (median of 5; needs --git)", "ms"),
            Row("drift_anchors", "drift: distinct anchors", "anchors"),
            Row("drift_git_log", "one `git log --name-only` over the same paths", "ms"),
        ),
    ),
    Metric(
        drift_50_anchors,
        (
            Row("drift_50", "drift over 50 anchors (median of 5; needs --git)", "ms"),
            Row("drift_50_anchors", "drift_50: distinct anchors", "anchors"),
            Row("drift_50_git_log", "drift_50: one `git log --name-only`, same paths", "ms"),
            Row("drift_50_ratio", "drift_50 / git log (medians)", "x"),
        ),
    ),
    Metric(cli_startup, (Row("cli_startup", 'CLI `mbank route "<q>"` (median of 5)', "ms"),)),
    *(
        Metric(f, tuple(Row(*r) for r in STARTUP_ROWS[f.__name__]))
        for f in (mcp_stdio_startup, cold_start, mcp_route_in_process, tools_list_size)
    ),
)


def load_average() -> float | None:
    """The 1-minute load average (None where the platform has none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def selected(only: Sequence[str] | None) -> tuple[Metric, ...]:
    """The registered metrics, or those whose function names are in `only`."""
    if not only:
        return METRICS
    return tuple(m for m in METRICS if m.func.__name__ in only)


def measure(
    target: Target, seed: int, repeat: int, only: Sequence[str] | None = None
) -> dict[str, Stat]:
    """Run every registered metric (or those named in `only`) on one bank.

    Each Stat carries the 1-minute load average at its metric's start: on a shared machine
    that is what says whether a figure can be trusted.
    """
    warm_page_cache(target.root)
    results: dict[str, Stat] = {}
    with tempfile.TemporaryDirectory(prefix="mbank-bench-") as scratch:
        ctx = Context(target, seed, repeat, Path(scratch))
        for metric in selected(only):
            name = metric.func.__name__
            load = load_average()
            log(f"[{target.label}] {name} (load {load if load is None else round(load, 2)})")
            try:
                produced = metric.func(ctx)
            except (ImportError, NotApplicable) as exc:
                produced = {r.key: Stat(r.unit, status="n/a", note=str(exc)) for r in metric.rows}
            except Exception as exc:
                traceback.print_exc()
                note = f"{type(exc).__name__}: {exc}"
                produced = {r.key: Stat(r.unit, status="error", note=note) for r in metric.rows}
            for row in metric.rows:
                results[row.key] = produced.get(row.key, Stat(row.unit, status="n/a"))
                results[row.key].load = load
    return results


def warm_page_cache(root: Path) -> None:
    for path in walk_markdown(str(root)):
        with open(path, "rb") as fh:
            fh.read()


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------


def _number(value: float) -> str:
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def cell(stat: Stat, row: Row) -> str:
    if stat.status != "ok" or not stat.samples:
        return stat.status if stat.status != "ok" else "n/a"
    summary = stat.summary()
    p50, p95 = float(summary["p50"]), float(summary["p95"])  # type: ignore[arg-type]
    if row.unit in COUNT_UNITS:
        text = f"{p50:g}" if p50 == p95 or not row.p95 else f"{p50:g} / {p95:g}"
        return f"{text} {row.unit}"
    text = f"{_number(p50)} / {_number(p95)}" if row.p95 else _number(p50)
    return f"{text} {row.unit}"


def load_range(stats: dict[str, Stat]) -> str:
    """The lowest and highest 1-minute load average seen at the bank's metric starts."""
    loads = [s.load for s in stats.values() if s.load is not None]
    return f"{min(loads):.2f}–{max(loads):.2f}" if loads else "n/a"


def markdown_table(
    targets: Sequence[Target],
    results: Sequence[dict[str, Stat]],
    only: Sequence[str] | None = None,
) -> str:
    header = "| metric | " + " | ".join(t.label for t in targets) + " |"
    lines = [header, "|---|" + "---:|" * len(targets)]
    lines.append("| documents | " + " | ".join(str(t.documents) for t in targets) + " |")
    lines.append("| bytes | " + " | ".join(f"{t.bytes / 2**20:.2f} MiB" for t in targets) + " |")
    lines.append(
        f"| load average (1 min) at metric starts, {os.cpu_count()} CPUs | "
        + " | ".join(load_range(r) for r in results)
        + " |"
    )
    for metric in selected(only):
        for row in metric.rows:
            cells = [cell(r[row.key], row) for r in results]
            lines.append(f"| {row.label} | " + " | ".join(cells) + " |")
    # one note per metric function and reason, naming the banks, rather than one per row
    notes: dict[tuple[str, str, str], list[str]] = {}
    for metric in selected(only):
        keys = tuple(row.key for row in metric.rows)
        for target, result in zip(targets, results, strict=True):
            for key in keys:
                stat = result[key]
                if stat.status != "ok" and stat.note:
                    where = notes.setdefault((metric.func.__name__, stat.status, stat.note), [])
                    if target.label not in where:
                        where.append(target.label)
    if notes:
        lines.append("")
        for (name, status, note), banks in notes.items():
            lines.append(f"- `{name}`: {status} on {', '.join(banks)} — {note}")
    return "\n".join(lines)


def environment() -> dict[str, object]:
    from importlib import metadata

    try:
        version: str | None = metadata.version("mbank")
    except metadata.PackageNotFoundError:
        version = None
    commit: str | None = None
    try:
        from dulwich.repo import Repo

        repo = Repo(str(REPO_ROOT))
        try:
            commit = repo.head().decode()
        finally:
            repo.close()
    except Exception:  # no repository, or no commit yet
        commit = None
    return {
        "mbank_version": version,
        "git_commit": commit,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
    }


def result_document(
    target: Target, env: dict[str, object], stats: dict[str, Stat]
) -> dict[str, object]:
    return {
        **env,
        "bank": target.label,
        "kind": target.kind,
        "root": str(target.root),
        "seed": target.seed,
        "size": target.size,
        "documents": target.documents,
        "bytes": target.bytes,
        "metrics": {key: stat.summary() for key, stat in stats.items()},
    }


def write_results(
    targets: Sequence[Target],
    results: Sequence[dict[str, Stat]],
    json_out: Path | None,
    env: dict[str, object] | None = None,
) -> list[Path]:
    """One JSON file per bank; `env` is the environment taken when the run started (the
    commit the measured code came from, when others commit while it runs)."""
    env = env if env is not None else environment()
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    written: list[Path] = []
    single_file = json_out is not None and json_out.suffix == ".json" and len(targets) == 1
    directory = RESULTS_DIR if json_out is None or single_file else json_out
    for target, stats in zip(targets, results, strict=True):
        if single_file and json_out is not None:
            path = json_out
        else:
            name = str(target.size) if target.kind == "generated" else target.label
            path = directory / f"{stamp}-{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        document = result_document(target, env, stats)
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        written.append(path)
    return written


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def parse_sizes(values: Sequence[str] | None) -> list[int]:
    sizes: list[int] = []
    for value in values or []:
        for part in value.split(","):
            if part == "all":
                sizes.extend(STANDARD_SIZES)
            else:
                sizes.append(int(part))
    return list(dict.fromkeys(sizes))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run",
        description="Measure mbank on generated banks and real corpora (spec 07 §6.2).",
    )
    parser.add_argument(
        "--size",
        action="append",
        metavar="N",
        help="a generated bank of N documents; repeat it, or give 'all' for "
        f"{', '.join(map(str, STANDARD_SIZES))} (default: 368 unless only corpora are given)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--repeat", type=int, default=1, help="multiply every sample count")
    parser.add_argument("--json", type=Path, metavar="OUT", help="a .json file or a directory")
    parser.add_argument(
        "--corpus",
        action="append",
        metavar="PATH",
        help=f"a real bank to measure as well (default: every folder of {DEFAULT_CORPORA})",
    )
    parser.add_argument("--no-corpus", action="store_true", help="measure generated banks only")
    parser.add_argument("--materialized", action="store_true", help="generate with templates")
    parser.add_argument("--git", type=int, default=0, metavar="COMMITS", help="generate with git")
    parser.add_argument("--banks-dir", type=Path, default=BANKS_DIR, help="generated banks cache")
    parser.add_argument(
        "--only",
        metavar="FUNC,…",
        help="run only these metric functions (e.g. route_latency,search_latency)",
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    only = [name for name in (args.only or "").split(",") if name]
    unknown = sorted(set(only) - {m.func.__name__ for m in METRICS})
    if unknown:
        known = ", ".join(m.func.__name__ for m in METRICS)
        parser.error(f"unknown metric {', '.join(unknown)}; choose from {known}")

    sizes = parse_sizes(args.size)
    if not sizes and (args.no_corpus or args.corpus is None):
        sizes = [STANDARD_SIZES[0]]
    targets = [
        generated_bank(size, args.seed, args.banks_dir, args.materialized, args.git)
        for size in sizes
    ]
    if not args.no_corpus:
        for root in corpus_roots(args.corpus):
            if not root.is_dir():
                print(f"error: corpus {root} is not a directory", file=sys.stderr)
                return 2
            targets.append(describe(root.name, root.resolve(), "corpus", None, None))

    env = environment()  # before measuring: the commit whose code this process imports
    results = [measure(target, args.seed, args.repeat, only) for target in targets]
    print(markdown_table(targets, results, only))
    for path in write_results(targets, results, args.json, env):
        log(f"wrote {path}")
    return 0


if __name__ == "__main__":
    # Run the copy imported as `bench.run`, not this `__main__` one: the metric modules import
    # `Stat` and `NotApplicable` from `bench.run`, and a NotApplicable of another class would
    # be reported as an error instead of n/a.
    from bench.run import main as run_main

    raise SystemExit(run_main())
