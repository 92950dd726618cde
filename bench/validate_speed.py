"""How fast validation is: whole-bank runs and the post-check's partial validation.

    python -m bench.validate_speed                      # 368, 2,000 and 10,000 + the corpora
    python -m bench.validate_speed --sizes 368 --corpus ../shared/corpora/dapi__code-converge

Targets (issue 4): full validation ≤ 50 ms at 368 documents and ≤ 1.5 s at 10,000; partial
validation of a one-document plan ≤ 5 ms at 10,000.

- **full**: `validate(snapshot)` with the validation cache cleared first, median of 5.
- **partial**: a one-document plan (a line appended to one document), over 20 documents: the
  post-check's two calls, `findings_for(S, paths)` (S's state cached, as in a running server)
  and `findings_for(S', paths)` on the virtual post-plan snapshot, median and p95 of 20. The
  virtual apply (re-parse the document, `build_snapshot`) is the write pipeline's cost and is
  not timed. Garbage is collected before each sample, so a collection triggered by the
  100-ms snapshot rebuild does not land inside a 3-ms measurement.

Wall time and this process's CPU time are both printed: on a shared machine the CPU time is
the steadier figure. Benchmarks never assert; they print a Markdown table.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from random import Random
from typing import Any

from bench.generate import DEFAULT_SEED, STANDARD_SIZES
from bench.run import BANKS_DIR, DEFAULT_CORPORA, generated_bank
from mbank.model import Plan
from mbank.plan import apply_virtually, replace_document
from mbank.snapshot import Bank, Snapshot
from mbank.validate import clear_cache, findings, findings_for, validate

FULL_RUNS = 5
PARTIAL_DOCUMENTS = 20


def apply_one_edit(snapshot: Snapshot, path: str, text: str) -> Snapshot:
    """The snapshot after replacing one document's text, built as the post-check builds it
    (`mbank.plan.apply_virtually` of a one-op plan)."""
    return apply_virtually(snapshot, Plan("bench", (replace_document(snapshot, path, text),)))


def _ms(seconds: float) -> float:
    return seconds * 1000


def _p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, -(-95 * len(ordered) // 100) - 1)]


def full_validation(root: Path, runs: int = FULL_RUNS) -> dict[str, Any]:
    """Whole-bank validation from a cold cache: wall and CPU medians, findings by rule."""
    snapshot = Bank(root).refresh()
    wall: list[float] = []
    cpu: list[float] = []
    result: dict[str, Any] = {}
    for _ in range(runs):
        clear_cache()
        gc.collect()
        started, started_cpu = time.perf_counter(), time.process_time()
        result = validate(snapshot)
        wall.append(_ms(time.perf_counter() - started))
        cpu.append(_ms(time.process_time() - started_cpu))
    return {
        "documents": len(snapshot.docs),
        "wall_ms": statistics.median(wall),
        "cpu_ms": statistics.median(cpu),
        "total": result["total"],
        "byRule": result["byRule"],
    }


def partial_validation(
    root: Path, documents: int = PARTIAL_DOCUMENTS, seed: int = DEFAULT_SEED
) -> dict[str, Any]:
    """The post-check's partial validation of one-document plans over `documents` documents."""
    snapshot = Bank(root).refresh()
    findings(snapshot)  # the pre-state's validation is cached, as it is in a running server
    candidates = sorted(
        path for path, doc in snapshot.docs.items() if doc.text_ok and not path.startswith("dna/")
    )
    rng = Random(seed + 1)
    wall: list[float] = []
    cpu: list[float] = []
    after_only: list[float] = []
    for path in rng.sample(candidates, min(documents, len(candidates))):
        text = snapshot.raw[path] + "\nOne more line, planned by the benchmark.\n"
        after = apply_one_edit(snapshot, path, text)
        gc.collect()
        started, started_cpu = time.perf_counter(), time.process_time()
        findings_for(snapshot, [path])
        middle = time.perf_counter()
        findings_for(after, [path])
        ended = time.perf_counter()
        cpu.append(_ms(time.process_time() - started_cpu))
        wall.append(_ms(ended - started))
        after_only.append(_ms(ended - middle))
    return {
        "wall_ms": statistics.median(wall),
        "wall_p95_ms": _p95(wall),
        "cpu_ms": statistics.median(cpu),
        "after_ms": statistics.median(after_only),
    }


def _banks(sizes: Sequence[int], corpora: Sequence[Path], seed: int) -> list[tuple[str, Path]]:
    banks = []
    for size in sizes:
        target = generated_bank(size, seed, BANKS_DIR)
        banks.append((target.label, target.root))
    banks.extend((root.name, root) for root in corpora)
    return banks


def table(rows: list[tuple[str, dict[str, Any], dict[str, Any]]]) -> str:
    """The measurements as a Markdown table."""
    lines = [
        "| bank | docs | full wall ms | full CPU ms | findings | partial wall p50 / p95 ms "
        "| partial CPU ms | of which S' ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, full, partial in rows:
        lines.append(
            f"| {label} | {full['documents']} | {full['wall_ms']:.1f} | {full['cpu_ms']:.1f} "
            f"| {full['total']} | {partial['wall_ms']:.2f} / {partial['wall_p95_ms']:.2f} "
            f"| {partial['cpu_ms']:.2f} | {partial['after_ms']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(prog="python -m bench.validate_speed")
    parser.add_argument("--sizes", default=",".join(str(size) for size in STANDARD_SIZES))
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--corpus", action="append", help="a bank root (repeatable)")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",") if size]
    if args.corpus is not None:
        corpora = [Path(root) for root in args.corpus]
    elif DEFAULT_CORPORA.is_dir():
        corpora = sorted(p for p in DEFAULT_CORPORA.iterdir() if (p / "dna").is_dir())
    else:
        corpora = []
    rows = []
    for label, root in _banks(sizes, corpora, args.seed):
        print(f"validate_speed: {label}", file=sys.stderr, flush=True)
        rows.append((label, full_validation(root), partial_validation(root, seed=args.seed)))
    sys.stdout.write(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
