"""The journal: every byte a write puts on disk goes through here (spec 03 §14).

`.mbank/` in the bank holds `journal.jsonl` (one record per applied write), `wal/` (the plan
being applied, with its pre-images), `objects/` (content-addressed pre-images for `undo`),
`lock` (the advisory lock) and a `.gitignore`. A plan is applied under the lock as: check
every precondition, store pre-images, write and fsync the write-ahead entry, swap each file
(temp file + fsync + `os.replace` in the target directory + directory fsync), append the
record, delete the entry. Any failure restores the exact pre-images; a crash leaves the entry,
and `recover()` rolls it back before anything else runs.

The parts: `layout` (where things live), `durable` (fsynced writes and careful reads),
`lock` (`.mbank/` and the lock), `records` (ids, reading the journal, what a record keeps),
`objects` (pre-images), `wal` (write-ahead entries), `apply` (the numbered steps of §14.5),
`recovery` (§14.6) and `history` (history, "where did it go?", undo's facts). The names other
modules use are re-exported here; the rest stay in their part.

Crash tests name the operation boundaries (spec 07 §4.1): `wal-written`, `wal-synced`, then per
op *i* (1-based) `op-<i>-temp`, `op-<i>-swapped`, `op-<i>-dirsynced`, then `journal-partial`,
`journal-appended`, `wal-removed`. A process started with `MBANK_FAULT_INJECTION=1` and
`MBANK_FAULT=<point>` sends itself SIGKILL there; the variables are not read otherwise. In
process, a `fault` callable passed to `apply_plan` is called at each point (tests raise from it).
"""

from __future__ import annotations

from mbank.journal.apply import FaultHook, apply_plan, changed_on_disk
from mbank.journal.history import (
    created_dirs,
    format_history,
    history,
    journal_resource,
    journal_summary,
    undo_facts,
    where_did_it_go,
)
from mbank.journal.layout import (
    JOURNAL_FILE,
    LOCK_TIMEOUT,
    MBANK_DIR,
    RECORD_VERSION,
    has_journal_dir,
    mbank_version,
    object_path,
)
from mbank.journal.lock import LOCK_BUSY, bank_lock, ensure_journal_dir, lock_is_free
from mbank.journal.objects import encode_preimage, read_object, store_object
from mbank.journal.records import (
    compact_intent,
    fresh_journal_id,
    random_journal_id,
    read_records,
    record_data,
    record_ops,
)
from mbank.journal.recovery import recover, recover_at_start
from mbank.journal.wal import WalDir, WalEntry, WalOp, interrupted_notices, pending_wal_ids

__all__ = [
    "JOURNAL_FILE",
    "LOCK_BUSY",
    "LOCK_TIMEOUT",
    "MBANK_DIR",
    "RECORD_VERSION",
    "FaultHook",
    "WalDir",
    "WalEntry",
    "WalOp",
    "apply_plan",
    "bank_lock",
    "changed_on_disk",
    "compact_intent",
    "created_dirs",
    "encode_preimage",
    "ensure_journal_dir",
    "format_history",
    "fresh_journal_id",
    "has_journal_dir",
    "history",
    "interrupted_notices",
    "journal_resource",
    "journal_summary",
    "lock_is_free",
    "mbank_version",
    "object_path",
    "pending_wal_ids",
    "random_journal_id",
    "read_object",
    "read_records",
    "record_data",
    "record_ops",
    "recover",
    "recover_at_start",
    "store_object",
    "undo_facts",
    "where_did_it_go",
]
