"""Route and search latency on generated banks and the real corpora (spec 07 §6.2).

    python -m bench.reads_speed [--sizes 368 2000 10000] [--seed S] [--questions 60]
                                [--corpora DIR ...] [--no-corpora]

Every timed call includes its `Bank.refresh()` and the index sync, as a tool call does; the
first search-index build (and the first query that triggers it) and the number of terms are
reported separately. The same functions plug into `bench/run.py`'s table: each takes its
`Context` and returns `{row key: Stat}` (rows in `ROWS` below). Not a test: nothing here
asserts a time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from random import Random
from typing import Any

from mbank.route import route, route_header_only
from mbank.search import SearchIndex, search
from mbank.snapshot import Bank, Snapshot

QUESTIONS = 60
RUSSIAN_QUESTIONS = (
    "где пороги фильтрации",
    "почему выбрали одну очередь",
    "как выкатить релиз",
    "настройки окружения для тестов",
    "схема фронтматтера",
    "кто владеет правилами домена",
    "как устроена сборка",
    "план миграции базы данных",
    "ошибки синхронизации",
    "ревью архитектуры",
)

# (key, label, unit, show p95): the rows these functions fill, for bench/run.py's METRICS
ROWS: tuple[tuple[str, str, str, bool], ...] = (
    ("reads_route", "route incl. refresh + sync (p50 / p95)", "ms", True),
    ("reads_route_core", "route without refresh (p50 / p95)", "ms", True),
    ("reads_route_header_only", "route, header score only, incl. refresh (p50 / p95)", "ms", True),
    ("reads_search", "search incl. refresh + sync (p50 / p95)", "ms", True),
    ("reads_search_core", "search without refresh (p50 / p95)", "ms", True),
    ("reads_index_build", "search index: first build (sync of a fresh index)", "ms", False),
    ("reads_first_search", "search: first query on a fresh index, incl. the build", "ms", False),
    ("reads_index_terms", "search index: terms", "terms", False),
    ("reads_sync_after_edit", "index sync after one edited document", "ms", False),
    ("reads_refresh", "refresh alone, unchanged bank (p50 / p95)", "ms", True),
)


def route_questions(snapshot: Snapshot, rng: Random, count: int) -> list[str]:
    """Titles and purposes with up to two words dropped, plus the Russian questions."""
    docs = sorted(
        (doc for doc in snapshot.docs.values() if doc.layer != "inbox"), key=lambda d: d.path
    )
    questions: list[str] = []
    while len(questions) < count and docs:
        doc = rng.choice(docs)
        words = (doc.title if rng.random() < 0.5 or not doc.purpose else doc.purpose).split()
        for _ in range(min(2, len(words) // 3)):
            words.pop(rng.randrange(len(words)))
        if words:
            questions.append(" ".join(words).lower())
    return questions + list(RUSSIAN_QUESTIONS)


def search_queries(snapshot: Snapshot, rng: Random, count: int) -> list[str]:
    """Identifiers, single words and two-word phrases from the bank's own bodies."""
    import re

    identifier = re.compile(r"\b[A-Z]{2,}(?:-[A-Z0-9]+)+\b|\b[a-z]+_[a-z_]+\b")
    word = re.compile(r"[A-Za-zА-Яа-яЁё][a-zа-яё]{3,}")
    paths = sorted(path for path in snapshot.raw if not path.startswith("_inbox/"))
    queries: list[str] = []
    while len(queries) < count and paths:
        text = snapshot.raw[rng.choice(paths)]
        kind = len(queries) % 3
        if kind == 0:
            found = identifier.findall(text)
            if found:
                queries.append(rng.choice(found))
                continue
        words = word.findall(text)
        if len(words) < 2:
            continue
        at = rng.randrange(len(words) - 1)
        queries.append(words[at].lower() if kind == 1 else " ".join(words[at : at + 2]).lower())
    return queries


def _samples(call: Callable[[str], object], inputs: Sequence[str], repeat: int) -> list[float]:
    timings: list[float] = []
    for _ in range(repeat):
        for value in inputs:
            started = time.perf_counter_ns()
            call(value)
            timings.append((time.perf_counter_ns() - started) / 1e6)
    return timings


def _stat(ctx: Any, unit: str, samples: list[float]) -> Any:
    from bench.run import Stat

    return Stat(unit, samples)


def reads_route(ctx: Any) -> dict[str, Any]:
    """Route p50/p95 with and without the refresh, and the header-only score for comparison."""
    bank = Bank(ctx.target.root)
    snapshot = bank.refresh()
    questions = route_questions(snapshot, Random(ctx.seed), QUESTIONS)
    # each row starts from an index built by one warm-up call, as a server's first call builds
    # it; per-word figures are then computed on first use in both rows alike
    index = SearchIndex()
    route(bank.refresh(), index, questions[-1])
    full = _samples(lambda q: route(bank.refresh(), index, q), questions, ctx.repeat)
    index = SearchIndex()
    route(snapshot, index, questions[-1])
    core = _samples(lambda q: route(snapshot, index, q), questions, ctx.repeat)
    header = _samples(lambda q: route_header_only(bank.refresh(), q), questions, ctx.repeat)
    refresh = _samples(lambda q: bank.refresh(), questions, ctx.repeat)
    return {
        "reads_route": _stat(ctx, "ms", full),
        "reads_route_core": _stat(ctx, "ms", core),
        "reads_route_header_only": _stat(ctx, "ms", header),
        "reads_refresh": _stat(ctx, "ms", refresh),
    }


def reads_search(ctx: Any) -> dict[str, Any]:
    """Search p50/p95; the first build, the first query, the terms and a one-edit sync."""
    bank = Bank(ctx.target.root)
    snapshot = bank.refresh()
    queries = search_queries(snapshot, Random(ctx.seed), QUESTIONS)
    build, first, terms = [], [], []
    index = SearchIndex()
    for _ in range(ctx.repeat):
        fresh = SearchIndex()
        started = time.perf_counter_ns()
        fresh.sync(snapshot)
        build.append((time.perf_counter_ns() - started) / 1e6)
        terms.append(float(fresh.term_count()))
        fresh = SearchIndex()
        started = time.perf_counter_ns()
        search(bank.refresh(), fresh, queries[0])
        first.append((time.perf_counter_ns() - started) / 1e6)
        index = fresh
    full = _samples(lambda q: search(bank.refresh(), index, q), queries, ctx.repeat)
    index = SearchIndex()
    search(snapshot, index, queries[0])
    core = _samples(lambda q: search(snapshot, index, q), queries, ctx.repeat)
    edit = _sync_after_edit(ctx)
    return {
        "reads_search": _stat(ctx, "ms", full),
        "reads_search_core": _stat(ctx, "ms", core),
        "reads_index_build": _stat(ctx, "ms", build),
        "reads_first_search": _stat(ctx, "ms", first),
        "reads_index_terms": _stat(ctx, "terms", terms),
        "reads_sync_after_edit": _stat(ctx, "ms", edit),
    }


def _sync_after_edit(ctx: Any) -> list[float]:
    """Append a line to one document of a private copy; time refresh + sync, 5 documents."""
    root = ctx.writable_copy()
    bank = Bank(root)
    index = SearchIndex()
    index.sync(bank.refresh())
    paths = sorted(bank.refresh().docs)[:: max(1, len(bank.refresh().docs) // 5)][:5]
    timings: list[float] = []
    for path in paths:
        with open(os.path.join(root, path), "a", encoding="utf-8") as handle:
            handle.write("\nA line appended by the benchmark.\n")
        started = time.perf_counter_ns()
        index.sync(bank.refresh())
        timings.append((time.perf_counter_ns() - started) / 1e6)
    return timings


METRIC_FUNCTIONS = (reads_route, reads_search)


# --------------------------------------------------------------------------------------------
# Stand-alone run
# --------------------------------------------------------------------------------------------


def _summary(samples: list[float], unit: str, p95: bool) -> str:
    from bench.run import percentile

    if not samples:
        return "n/a"
    values = sorted(samples)
    p50 = statistics.median(values)
    if unit == "terms":
        return f"{p50:.0f}"
    text = f"{p50:.1f}" if p50 >= 10 else f"{p50:.2f}"
    if p95:
        high = percentile(values, 95)
        text += f" / {high:.1f}" if high >= 10 else f" / {high:.2f}"
    return text


def main(argv: Sequence[str] | None = None) -> int:
    """Measure the banks and print one Markdown table (rows: metrics, columns: banks)."""
    import tempfile

    from bench.generate import DEFAULT_SEED
    from bench.run import BANKS_DIR, Context, corpus_roots, describe, generated_bank

    parser = argparse.ArgumentParser(prog="python -m bench.reads_speed")
    parser.add_argument("--sizes", type=int, nargs="*", default=[368, 2000, 10000])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--corpora", nargs="*", default=None)
    parser.add_argument("--no-corpora", action="store_true")
    args = parser.parse_args(argv)

    targets = [generated_bank(size, args.seed, BANKS_DIR) for size in args.sizes]
    if not args.no_corpora:
        for root in corpus_roots(args.corpora):
            targets.append(describe(root.name, root, "corpus", None, None))
    columns: list[dict[str, Any]] = []
    for target in targets:
        print(f"reads_speed: {target.label} ({target.documents} documents)", file=sys.stderr)
        with tempfile.TemporaryDirectory(prefix="mbank-reads-") as scratch:
            ctx = Context(target, args.seed, args.repeat, Path(scratch))
            produced: dict[str, Any] = {}
            for function in METRIC_FUNCTIONS:
                produced.update(function(ctx))
        columns.append(produced)
    header = "| metric | " + " | ".join(t.label for t in targets) + " |"
    lines = [header, "|---|" + "---:|" * len(targets)]
    lines.append("| documents | " + " | ".join(str(t.documents) for t in targets) + " |")
    for key, label, unit, p95 in ROWS:
        cells = [_summary(column[key].samples, unit, p95) for column in columns]
        suffix = f" ({unit})" if unit != "terms" else ""
        lines.append(f"| {label}{suffix} | " + " | ".join(cells) + " |")
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print("\n".join(lines))
    if load is not None:
        print(f"\nload average after the run: {load[0]:.2f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
