"""Apply latency of a 3-file plan through the journal, beside bare fsynced writes (07 §6.2).

    python -m bench.apply_speed                 # a generated 368-document bank, 200 runs
    python -m bench.apply_speed --size 2000 --runs 100
    python -m bench.apply_speed --root PATH     # a copy of an existing bank
    python -m bench.apply_speed --scratch /dev/shm   # on tmpfs: the cost without the disk

Each run plans a document in a new section: the document, the section's index (both created,
in a new directory) and the root index (replaced, one line appended) — the plan of a
`bank_create` that opens a section. Timed: the journal path (take the lock, the recovery
check, preconditions, pre-images, WAL entry, three atomic swaps with file and directory
fsyncs, the record, the WAL removal). Beside it, in the same run and interleaved, the same
three files' bytes written to a twin copy of the bank two ways: bare (open, write, fsync)
and atomic without a journal (temp file, fsync, rename, directory fsync). Planning and the
refresh are not timed. Benchmarks never assert a time; this prints numbers.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

WARMUP = 5


def _percentile(values: Sequence[float], p: float) -> float:
    import math

    ordered = sorted(values)
    return ordered[max(1, math.ceil(p / 100 * len(ordered))) - 1]


def _plan(snapshot: Any, number: int) -> Any:
    from mbank.model import Plan
    from mbank.plan import create_document, document_text, replace_document

    section = f"bench-{number:04d}"
    doc = (
        "---\n"
        f"title: Bench Document {number}\n"
        "doc_kind: engineering\n"
        "doc_function: canonical\n"
        "purpose: A document the apply benchmark writes.\n"
        "derived_from:\n  - ../README.md\n"
        "status: draft\n"
        "---\n"
        f"# Bench Document {number}\n\n" + "Some prose for the benchmark. " * 60 + "\n"
    )
    index = (
        "---\n"
        f"title: {section} Index\n"
        "doc_kind: engineering\n"
        "doc_function: index\n"
        "purpose: Lists the benchmark documents.\n"
        "status: active\n"
        "---\n"
        f"# {section} Index\n\n## Registry\n\n"
        f"- [Bench Document {number}](doc.md) — A document the apply benchmark writes.\n"
    )
    root_text = (
        document_text(snapshot, "README.md")
        + f"\n- [{section}/README.md]({section}/README.md) — Benchmark section {number}.\n"
    )
    return Plan(
        "bank_create",
        (
            create_document(f"{section}/doc.md", doc),
            create_document(f"{section}/README.md", index),
            replace_document(snapshot, "README.md", root_text),
        ),
    )


def _bare(root: Path, plan: Any) -> None:
    for op in plan.ops:
        target = root / op.path
        target.parent.mkdir(exist_ok=True)
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            os.write(descriptor, op.content)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _atomic(root: Path, plan: Any) -> None:
    for op in plan.ops:
        target = root / op.path
        target.parent.mkdir(exist_ok=True)
        temp = target.parent / f".bench-{os.getpid()}.tmp"
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            os.write(descriptor, op.content)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.replace(temp, target)
        directory = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def measure_apply(bank_root: Path, scratch: Path, runs: int) -> dict[str, list[float]]:
    """Milliseconds per run: `journal`, `bare` and `atomic` writes of the same 3-file plans.

    `bank_root` is copied three times into `scratch` (the journal's bank and the two twins);
    the bank itself is never written.
    """
    from mbank.journal import (
        RECORD_VERSION,
        apply_plan,
        bank_lock,
        ensure_journal_dir,
        record_ops,
        recover,
    )
    from mbank.model import JournalRecord
    from mbank.snapshot import Bank

    copies = {}
    for name in ("journal", "bare", "atomic"):
        copies[name] = scratch / name
        shutil.copytree(bank_root, copies[name], ignore=shutil.ignore_patterns(".git", ".mbank"))
    root = str(copies["journal"])
    bank = Bank(root)
    ensure_journal_dir(root)
    samples: dict[str, list[float]] = {"journal": [], "bare": [], "atomic": []}
    for number in range(runs + WARMUP):
        snapshot = bank.refresh()
        plan = _plan(snapshot, number)
        record = JournalRecord(
            v=RECORD_VERSION,
            id=f"20260914T120000Z-{number:06x}",
            time="2026-09-14T12:00:00Z",
            tool="bank_create",
            via="cli",
            mbank="bench",
            intent={"path": plan.ops[0].path},
            ops=record_ops(plan),
            warnings=(),
        )
        started = time.perf_counter_ns()
        with bank_lock(root, "bench"):
            recover(root)
            apply_plan(root, bank.real_root, plan, record)
        journal_ms = (time.perf_counter_ns() - started) / 1e6
        started = time.perf_counter_ns()
        _bare(copies["bare"], plan)
        bare_ms = (time.perf_counter_ns() - started) / 1e6
        started = time.perf_counter_ns()
        _atomic(copies["atomic"], plan)
        atomic_ms = (time.perf_counter_ns() - started) / 1e6
        if number >= WARMUP:
            samples["journal"].append(journal_ms)
            samples["bare"].append(bare_ms)
            samples["atomic"].append(atomic_ms)
    return samples


def summary(samples: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """p50 / p95 / mean per series, and the journal's p50 over the others' p50."""
    table = {
        name: {
            "p50": statistics.median(values),
            "p95": _percentile(values, 95),
            "mean": statistics.fmean(values),
            "n": len(values),
        }
        for name, values in samples.items()
    }
    journal = table["journal"]["p50"]
    table["journal/bare"] = {"p50": journal / table["bare"]["p50"]}
    table["journal/atomic"] = {"p50": journal / table["atomic"]["p50"]}
    return table


def markdown(table: dict[str, dict[str, float]], label: str) -> str:
    """The summary as a Markdown table."""
    lines = [
        f"| apply, 3-file plan ({label}) | p50 | p95 | mean | n |",
        "|---|---:|---:|---:|---:|",
    ]
    names = {
        "journal": "through the journal (lock, WAL, atomic swaps, record), ms",
        "bare": "bare fsynced writes of the same files, ms",
        "atomic": "atomic writes without a journal (temp, fsync, rename, dir fsync), ms",
    }
    for key, name in names.items():
        row = table[key]
        lines.append(
            f"| {name} | {row['p50']:.2f} | {row['p95']:.2f} | {row['mean']:.2f} | "
            f"{int(row['n'])} |"
        )
    lines.append(f"| journal / bare (p50) | {table['journal/bare']['p50']:.2f}× | | | |")
    lines.append(f"| journal / atomic (p50) | {table['journal/atomic']['p50']:.2f}× | | | |")
    return "\n".join(lines) + "\n"


def apply_latency(ctx: Any) -> dict[str, Any]:
    """The `bench.run` metric: rows `apply_journal`, `apply_bare`, `apply_atomic`,
    `apply_overhead` (journal p50 / bare p50)."""
    from bench.run import Stat

    with tempfile.TemporaryDirectory(dir=ctx.scratch) as scratch:
        samples = measure_apply(ctx.target.root, Path(scratch), 40 * ctx.repeat)
    ratio = statistics.median(samples["journal"]) / statistics.median(samples["bare"])
    return {
        "apply_journal": Stat("ms", samples["journal"]),
        "apply_bare": Stat("ms", samples["bare"]),
        "apply_atomic": Stat("ms", samples["atomic"]),
        "apply_overhead": Stat("x", [ratio]),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Measure on a generated bank (or a copy of `--root`) and print the table."""
    parser = argparse.ArgumentParser(prog="python -m bench.apply_speed")
    parser.add_argument("--size", type=int, default=368, help="generated bank size")
    parser.add_argument("--seed", type=int, default=20260914)
    parser.add_argument("--root", type=Path, help="measure on a copy of this bank instead")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument(
        "--scratch", type=Path, help="where the copies live (e.g. /dev/shm: fsync-free CPU cost)"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mbank-apply-", dir=args.scratch) as scratch:
        base = Path(scratch)
        if args.root is not None:
            source, label = args.root, str(args.root)
        else:
            from bench.generate import generate

            source = base / "generated"
            generate(args.size, args.seed, source)
            label = f"generated {args.size}"
        samples = measure_apply(source, base / "work", args.runs)
    sys.stdout.write(markdown(summary(samples), label))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
