"""The persisted projection: what parsing and indexing produced, kept between processes.

Every MCP session starts a fresh server, and on a large bank parsing every document and
tokenising every body is most of its first answer. This keeps, outside the project (the user
cache directory, `$XDG_CACHE_HOME/mbank/`, default `~/.cache/mbank/`, one file per bank keyed
by the bank's real path and the mbank version), each document as it was parsed with the facts
of the file it came from, and the search index built over them.

It is trusted only where it can be proved fresh (issue 17):

- the whole file is checked before any of it is used: magic, format, each part's length and
  sha256 (a header, the documents, the index state and its three postings arrays), the mbank
  version and a stamp of the code that wrote it, the bank's real path. A truncated, damaged,
  foreign or half-written file, or one with a part missing, is ignored (and rebuilt), never
  an error; no part is used without the others;
- a document is reused only when its file's (mtime_ns, size) — what the in-memory refresh
  trusts — and its ctime_ns, inode and device are all unchanged; anything else is re-read;
- a document whose ctime was too close to the moment it was read is never written here
  ("racy", as git calls it): a later edit in the same clock tick could leave every stat fact
  unchanged. `mbank.snapshot` re-reads such files instead of trusting them;
- the index part is reconciled document by document against the snapshot (`SearchIndex.sync`
  compares each document's (mtime_ns, size, sha256)), so it can never serve a stale posting;
  its bodies are not stored but made from the text of the version it indexed
  (`mbank.search_state`), and a state whose texts cannot all be found is not used.

What a first route needs is decoded at once; the body postings (most of the file) are read in
place and a token's postings are made only when asked for, so a second session at 10,000
documents neither decodes nor holds them whole.

Writers write a temporary file beside the cache and rename it over the old one, so a reader
sees a whole file or the previous one; two processes starting together each build and the last
rename wins. Reads write nothing inside the project. `--no-cache` or `MBANK_NO_CACHE=1` turn it
off; `mbank stats` reports what happened.
"""

from __future__ import annotations

import datetime as dt
import gc
import hashlib
import os
import secrets
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

import msgspec

from mbank.model import Doc
from mbank.projection import Snapshot

if TYPE_CHECKING:
    from mbank.search import SearchIndex
    from mbank.snapshot import Bank

# Bumped whenever what is stored changes shape or meaning.
FORMAT = 4
MAGIC = b"MBANKPC\x03"
DIGEST_SIZE = 32
LENGTH_SIZE = 8
Part = bytes | memoryview
# the index state's parts: the encoded state, then the postings' ends, ids and counts
INDEX_PARTS = 4
NO_CACHE_ENV = "MBANK_NO_CACHE"
CACHE_ENV = "XDG_CACHE_HOME"

_switched_off = False


# What the file system says of one document file: (mtime_ns, size, ctime_ns, inode, device).
# Any change means "re-read it".
Facts = tuple[int, int, int, int, int]


class PersistedFile(msgspec.Struct, frozen=True, array_like=True):
    """One document as parsed from the file whose facts are `facts`."""

    path: str
    facts: Facts
    doc: Doc
    text: str


class FinishedSnapshot(msgspec.Struct, frozen=True, array_like=True):
    """What `build_snapshot` derives from the documents as a whole, kept beside them when the
    cache holds every document of the snapshot it was derived from (and each as the snapshot
    holds it, with its layer and registrations). A process whose every file still has the
    persisted facts, with none come or gone, serves the snapshot these make (`Bank.refresh`)
    instead of deriving them again: the same documents give the same maps."""

    # the snapshot without its documents and texts (those are the documents' part)
    derived: Snapshot
    # each directory's facts and subdirectories as last listed (`snapshot.DirectoryRecord`),
    # so that the check against the persisted facts lists only the directories that moved
    directories: dict[str, tuple[tuple[int, int, int, int], tuple[str, ...]]]


class _Header(msgspec.Struct, frozen=True, array_like=True):
    format: int
    version: str
    code: str
    real_root: str


# Frontmatter values msgpack would not give back as they were (a date comes back a string)
# travel as extension types.
_DATE, _DATETIME, _TIME = 1, 2, 3
_TEMPORAL: tuple[tuple[int, type], ...] = (
    (_DATETIME, dt.datetime),  # before date: a datetime is a date
    (_DATE, dt.date),
    (_TIME, dt.time),
)
_FROM_ISO: dict[int, Callable[[str], Any]] = {
    _DATE: dt.date.fromisoformat,
    _DATETIME: dt.datetime.fromisoformat,
    _TIME: dt.time.fromisoformat,
}
_NATIVE = (str, int, float, bool, bytes, type(None))
_INT_RANGE = (-(2**63), 2**64 - 1)


class _Unportable(Exception):
    """A frontmatter value the cache cannot give back exactly: the document is re-parsed."""


def _portable(value: Any) -> Any:
    """`value` with every date, datetime and time as an extension; raises `_Unportable` for
    anything else msgpack would change (a tuple, a set, a huge integer, a non-text key)."""
    if isinstance(value, _NATIVE):
        if isinstance(value, int) and not _INT_RANGE[0] <= value <= _INT_RANGE[1]:
            raise _Unportable
        return value
    if isinstance(value, list):
        return [_portable(item) for item in value]
    if isinstance(value, dict):
        return {_portable(key): _portable(item) for key, item in value.items()}
    for code, kind in _TEMPORAL:
        if type(value) is kind:
            temporal: Any = value
            iso: str = temporal.isoformat()
            return msgspec.msgpack.Ext(code, iso.encode())
    raise _Unportable


def _from_extension(code: int, data: memoryview) -> Any:
    read = _FROM_ISO.get(code)
    if read is None:
        raise ValueError(f"unknown extension {code}")
    return read(bytes(data).decode())


def portable_doc(doc: Doc) -> Doc | None:
    """The document as the cache keeps it, or None when its frontmatter cannot travel."""
    if not doc.data:
        return doc
    try:
        data = _portable(doc.data)
    except (_Unportable, RecursionError):
        return None
    if any(not isinstance(key, str) for key in data):
        return None
    return msgspec.structs.replace(doc, data=data)


def turn_off() -> None:
    """`--no-cache`: no projection cache for the rest of this process."""
    global _switched_off
    _switched_off = True


def switched_off(environ: Mapping[str, str] | None = None) -> bool:
    """Whether `--no-cache` was given or `MBANK_NO_CACHE` is set to anything but ``0``/empty."""
    env = os.environ if environ is None else environ
    return _switched_off or env.get(NO_CACHE_ENV, "") not in ("", "0")


def cache_directory(environ: Mapping[str, str] | None = None) -> str | None:
    """`$XDG_CACHE_HOME/mbank` (a relative value is ignored, as the XDG spec says), else
    `~/.cache/mbank`; None when there is no home to put it in."""
    env = os.environ if environ is None else environ
    base = env.get(CACHE_ENV, "")
    if not os.path.isabs(base):
        home = env.get("HOME") or os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "mbank")


def code_stamp() -> str:
    """A digest of the (mtime_ns, size) of mbank's own modules: a cache written by other code
    (a development checkout edited since, another install) is foreign even at one version."""
    package = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256(f"{sys.byteorder} {sys.version}\n".encode())  # packed arrays
    for folder in (package, os.path.join(package, "gates"), os.path.join(package, "reducers")):
        try:
            names = sorted(name for name in os.listdir(folder) if name.endswith(".py"))
        except OSError:
            continue
        for name in names:
            try:
                info = os.stat(os.path.join(folder, name))
            except OSError:
                continue
            digest.update(f"{folder}/{name}\0{info.st_mtime_ns}\0{info.st_size}\n".encode())
    return digest.hexdigest()[:32]


def _debug(message: str) -> None:
    if os.environ.get("MBANK_DEBUG"):
        print(f"mbank: projection cache: {message}", file=sys.stderr)


class ProjectionCache:
    """The persisted projection of one bank: loaded once, saved whole.

    `status` says what happened, for `mbank stats`: `missing`, `used`, `ignored (<why>)`,
    then `saved` or `not saved (<why>)` once written.
    """

    def __init__(self, real_root: str, version: str, directory: str) -> None:
        self.real_root = real_root
        self.version = version
        key = hashlib.sha256(f"{real_root}\0{version}".encode("utf-8", "surrogatepass"))
        self.path = os.path.join(directory, f"projection-{key.hexdigest()[:32]}.bin")
        self.status = "not read"
        self.reused = 0
        self._code: str | None = None
        self._files: dict[str, PersistedFile] | None = None
        self._finished: FinishedSnapshot | None = None
        self._index: list[bytes] | None = None
        self._prefetch: threading.Thread | None = None
        # what `_read` found: the checked file, or the status saying why there is none
        self._read_result: list[bytes] | bytes | str = b""

    @property
    def code(self) -> str:
        """The stamp of the code running now (computed once)."""
        if self._code is None:
            self._code = code_stamp()
        return self._code

    def _expected(self) -> _Header:
        return _Header(FORMAT, self.version, self.code, self.real_root)

    def files(self) -> dict[str, PersistedFile]:
        """Every persisted document by bank path; empty when there is no trustworthy file."""
        if self._files is None:
            self._files = {}
            self._load()
        return self._files

    def finished(self) -> FinishedSnapshot | None:
        """The persisted snapshot's derived maps, when the file was trustworthy and held every
        document of that snapshot."""
        self.files()
        return self._finished

    def index_state(self) -> list[bytes] | None:
        """The persisted search-index state, undecoded, when the file was trustworthy."""
        self.files()
        return self._index

    def prefetch(self) -> None:
        """Read the file and check its digest on a thread. Both release the GIL, so at
        process start they overlap the imports and the MCP handshake; decoding waits."""
        if self._prefetch is None and self._files is None:
            self._prefetch = threading.Thread(target=self._read, name="mbank-cache-read")
            self._prefetch.daemon = True
            self._prefetch.start()

    def _read(self) -> None:
        try:
            with open(self.path, "rb") as handle:
                self._read_result = _checked_parts(handle)
        except FileNotFoundError:
            self._read_result = "missing"
        except OSError as exc:
            self._read_result = f"ignored (unreadable: {exc.strerror})"

    def _load(self) -> None:
        if self._prefetch is None:
            self._read()
        else:
            self._prefetch.join()
            self._prefetch = None
        parts, self._read_result = self._read_result, b""
        if isinstance(parts, str):
            self.status = parts
            _debug(f"{self.path}: {parts}")
            return
        why = self._accept(parts) if isinstance(parts, list) else "not a cache of this format"
        if why is not None:
            self.status = f"ignored ({why})"
            _debug(f"{self.path}: {why}")

    def _accept(self, parts: list[bytes]) -> str | None:
        """Adopt the checked `parts` (a header, the documents, the finished snapshot's maps or
        nothing, the index state) when every
        check passes; else say why not (nothing is adopted). A foreign file costs no decoding
        and the index state is kept undecoded until it is asked for."""
        if len(parts) != 3 + INDEX_PARTS:
            return "not a cache of this format"
        try:
            if msgspec.msgpack.decode(parts[0], type=_Header) != self._expected():
                return "written by another version of mbank or for another bank"
            decoder = msgspec.msgpack.Decoder(list[PersistedFile], ext_hook=_from_extension)
            files = decoder.decode(parts[1])
            finished = msgspec.msgpack.decode(parts[2], type=FinishedSnapshot) if parts[2] else None
        except (msgspec.DecodeError, ValueError, RecursionError) as exc:
            return f"undecodable: {exc}"
        parts[1] = b""  # the documents' buffer goes now: peak memory is one part, not the file
        self._files = {entry.path: entry for entry in files}
        self._finished = finished
        self._index = parts[3:] if parts[3] else None
        self.status = "used"
        return None

    def release(self) -> None:
        """Drop what was loaded (the index takes the postings arrays it reads in place)."""
        self._files = {}
        self._finished = None
        self._index = None

    def encode(
        self,
        files: Mapping[str, PersistedFile],
        index: list[Part] | None,
        finished: FinishedSnapshot | None = None,
    ) -> Pending:
        """The cache's parts (taken while the bank is locked; everything in them is immutable
        or a copy, so `write` can run after the lock is released). `finished` only when
        `files` are every document of the snapshot it was taken from, as that snapshot holds
        them, and `index` was synced with that snapshot."""
        header = msgspec.msgpack.encode(self._expected())
        documents = DocumentsPart(list(files.values()))
        derived = b"" if finished is None else msgspec.msgpack.encode(finished)
        return [header, documents, derived, *(index if index is not None else [b""] * INDEX_PARTS)]

    def write(self, parts: Sequence[Part | DocumentsPart]) -> bool:
        """Write the cache whole (temporary file, then rename); False when it could not be."""
        directory = os.path.dirname(self.path)
        temporary = f"{self.path}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with os.fdopen(descriptor, "wb", closefd=True) as handle:
                    handle.write(MAGIC)
                    for part in parts:
                        _write_part(handle, part)
            except BaseException:
                os.unlink(temporary)
                raise
            os.replace(temporary, self.path)
        except OSError as exc:
            self.status = f"not saved ({exc.strerror})"
            _debug(f"cannot write {self.path}: {exc}")
            return False
        except (TypeError, ValueError, OverflowError, RecursionError) as exc:
            self.status = f"not saved ({exc})"
            return False
        self.status = "saved"
        return True


class DocumentsPart:
    """The documents' part, encoded a few hundred documents at a time as it is written: the
    whole part at once (55 MB at 10,000 documents) would lift a first session's peak memory
    above 0.1.0's."""

    BATCH = 500

    def __init__(self, files: list[PersistedFile]) -> None:
        self.files = files

    def chunks(self) -> Iterator[bytes | bytearray]:
        """The part's bytes: a msgpack array header, then every document, in batches."""
        yield b"\xdd" + len(self.files).to_bytes(4, "big")  # array 32
        encoder = msgspec.msgpack.Encoder()
        for start in range(0, len(self.files), self.BATCH):
            buffer = bytearray()
            for entry in self.files[start : start + self.BATCH]:
                encoder.encode_into(entry, buffer, -1)
            yield buffer


# What `encode` gives and `write` takes: the parts, in file order.
Pending = list[Part | DocumentsPart]


def _write_part(handle: BinaryIO, part: Part | DocumentsPart) -> None:
    """Write one part after its length and the sha256 of its length and bytes; a streamed
    part's head is written once its end is known."""
    chunks = part.chunks() if isinstance(part, DocumentsPart) else iter((part,))
    head_at = handle.tell()
    handle.write(bytes(LENGTH_SIZE + DIGEST_SIZE))
    length = 0
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
        handle.write(chunk)
        length += memoryview(chunk).nbytes
    end = handle.tell()
    size = length.to_bytes(LENGTH_SIZE, "big")
    whole = hashlib.sha256(size)
    whole.update(digest.digest())
    handle.seek(head_at)
    handle.write(size + whole.digest())
    handle.seek(end)


def _checked_parts(handle: BinaryIO) -> list[bytes] | str:
    """The parts of an open cache file, each read and checked against its digest in turn
    (never the whole file in memory at once beyond the parts themselves); or why not."""
    if handle.read(len(MAGIC)) != MAGIC:
        return "ignored (not a cache of this format)"
    parts: list[bytes] = []
    size = os.fstat(handle.fileno()).st_size
    while True:
        head = handle.read(LENGTH_SIZE + DIGEST_SIZE)
        if not head:
            return parts
        length = int.from_bytes(head[:LENGTH_SIZE], "big")
        if len(head) < LENGTH_SIZE + DIGEST_SIZE or length > size:
            return "ignored (damaged or truncated)"
        part = handle.read(length)
        digest = hashlib.sha256(head[:LENGTH_SIZE])
        digest.update(hashlib.sha256(part).digest())
        if len(part) != length or digest.digest() != head[LENGTH_SIZE:]:
            return "ignored (damaged or truncated)"
        parts.append(part)


# Caches whose reading began before the server's imports (`prefetch_for`), by real root.
_early: dict[str, ProjectionCache] = {}


def cache_for(real_root: str, environ: Mapping[str, str] | None = None) -> ProjectionCache | None:
    """The projection cache of the bank at `real_root`, or None when it is switched off or
    there is nowhere to keep it. Its file is read and checked on a thread from now on."""
    early = _early.pop(real_root, None)
    if early is not None and not switched_off(environ):
        return early
    if switched_off(environ):
        return None
    directory = cache_directory(environ)
    if directory is None:
        return None
    from mbank.journal import mbank_version

    cache = ProjectionCache(real_root, mbank_version(), directory)
    cache.prefetch()
    return cache


def prefetch_for(real_root: str) -> None:
    """Begin reading the bank's cache now (`mbank serve`, before it imports the MCP SDK): the
    read and the digests release the GIL, so they run beside the imports on another CPU.
    The next `cache_for(real_root)` takes it."""
    cache = cache_for(real_root)
    if cache is not None:
        _early[real_root] = cache


def warm_start(
    bank: Bank, index: SearchIndex, *, freeze: bool = False
) -> tuple[SearchIndex, Pending | None]:
    """Refresh `bank` and bring `index` up to date with it, from the projection cache where it
    can be (called with the bank locked).

    An index that holds nothing yet is replaced by the persisted one, which `sync` then
    reconciles with the snapshot; then the index is compacted (`search_state.compact`).
    Returns the index to keep and, when anything was parsed or indexed anew, the payload to
    write with `bank.cache.write` once the lock is released. `freeze` (a server's warm-up)
    moves everything built so far out of the cyclic collector's reach for good (`gc.freeze`).
    """
    from mbank.search_state import build_packed, compact, export_state, index_from_state

    # Millions of small objects are made here and all of them live on: the cyclic collector
    # would walk the growing heap again and again for nothing (half the time at 10,000
    # documents), so it waits until they are built.
    collecting = gc.isenabled()
    gc.disable()
    try:
        snapshot = bank.refresh()
        cache = bank.cache
        if cache is not None and not index.docs:
            state = cache.index_state()
            persisted = (
                None if state is None else index_from_state(state, bank.parsed, cache.files())
            )
            if persisted is not None:
                index = persisted
        if index.docs:
            touched = index.sync(snapshot)
        else:
            build_packed(index, snapshot)
            touched = len(snapshot.docs)
        # what a first route call would otherwise build (and the cache keeps)
        index.route_forms()
        index.route_stats()
        index.route_lengths()
        index.cyrillic_share()
        index.bilingual_pairs()
        compact(index, snapshot)
        if cache is not None:
            cache.release()
        if freeze:
            # A server keeps all of it for its life: a full collection would walk millions
            # of objects (a quarter of a second at 10,000 documents) to find nothing.
            gc.freeze()
    finally:
        if collecting:
            gc.enable()
    if cache is None or (
        cache.status == "used" and not bank.parsed_since_persisted and not touched
    ):
        return index, None
    bank.parsed_since_persisted = 0
    files = bank.persisted_files()
    return index, cache.encode(files, export_state(index), bank.finished(files))
