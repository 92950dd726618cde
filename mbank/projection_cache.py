"""The persisted projection: what parsing and indexing produced, kept between processes.

Every MCP session starts a fresh server, and on a large bank parsing every document and
tokenising every body is most of its first answer. This keeps, outside the project (the user
cache directory, `$XDG_CACHE_HOME/mbank/`, default `~/.cache/mbank/`, one file per bank keyed
by the bank's real path and the mbank version), each document as it was parsed with the facts
of the file it came from, and the search index built over them.

It is trusted only where it can be proved fresh (issue 17):

- the whole file is checked before any of it is used: magic, format, length, a sha256 of the
  payload, the mbank version and a stamp of the code that wrote it, the bank's real path. A
  truncated, damaged, foreign or half-written file is ignored (and rebuilt), never an error;
- a document is reused only when its file's (mtime_ns, size) — what the in-memory refresh
  trusts — and its ctime_ns, inode and device are all unchanged; anything else is re-read;
- a document whose ctime was too close to the moment it was read is never written here
  ("racy", as git calls it): a later edit in the same clock tick could leave every stat fact
  unchanged. `mbank.snapshot` re-reads such files instead of trusting them;
- the index part is reconciled document by document against the snapshot (`SearchIndex.sync`
  compares each document's (mtime_ns, size, sha256)), so it can never serve a stale posting.

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
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from mbank.model import Doc

if TYPE_CHECKING:
    from mbank.search import SearchIndex
    from mbank.snapshot import Bank

# Bumped whenever what is stored changes shape or meaning.
FORMAT = 1
MAGIC = b"MBANKPC\x01"
DIGEST_SIZE = 32
LENGTH_SIZE = 8
Part = bytes | memoryview
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
        self._index: msgspec.Raw | None = None
        self._prefetch: threading.Thread | None = None
        # what `_read` found: the checked file, or the status saying why there is none
        self._read_result: bytes | str = b""

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

    def index_state(self) -> msgspec.Raw | None:
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
                data = handle.read()
        except FileNotFoundError:
            self._read_result = "missing"
            return
        except OSError as exc:
            self._read_result = f"ignored (unreadable: {exc.strerror})"
            return
        head = len(MAGIC) + DIGEST_SIZE
        if len(data) < head or data[: len(MAGIC)] != MAGIC:
            self._read_result = "ignored (not a cache of this format)"
        elif hashlib.sha256(memoryview(data)[head:]).digest() != data[len(MAGIC) : head]:
            self._read_result = "ignored (damaged or truncated)"
        else:
            self._read_result = data

    def _load(self) -> None:
        if self._prefetch is None:
            self._read()
        else:
            self._prefetch.join()
            self._prefetch = None
        data, self._read_result = self._read_result, b""
        if isinstance(data, str):
            self.status = data
            _debug(f"{self.path}: {data}")
            return
        why = self._accept(data)
        if why is not None:
            self.status = f"ignored ({why})"
            _debug(f"{self.path}: {why}")

    def _accept(self, data: bytes) -> str | None:
        """Adopt `data` (its magic and digest checked by `_read`) when every check passes;
        else say why not (nothing is adopted).

        The file: MAGIC, the sha256 of the rest, then three parts each after its length (a
        header, the documents, the index state), so a foreign file costs no decoding and the
        index state is kept undecoded until it is asked for.
        """
        view = memoryview(data)[len(MAGIC) + DIGEST_SIZE :]
        parts: list[memoryview] = []
        while view:
            size = int.from_bytes(view[:LENGTH_SIZE], "big")
            parts.append(view[LENGTH_SIZE : LENGTH_SIZE + size])
            view = view[LENGTH_SIZE + size :]
        if len(parts) != 3:
            return "not a cache of this format"
        try:
            if msgspec.msgpack.decode(parts[0], type=_Header) != self._expected():
                return "written by another version of mbank or for another bank"
            decoder = msgspec.msgpack.Decoder(list[PersistedFile], ext_hook=_from_extension)
            files = decoder.decode(parts[1])
        except (msgspec.DecodeError, ValueError, RecursionError) as exc:
            return f"undecodable: {exc}"
        self._files = {entry.path: entry for entry in files}
        self._index = msgspec.Raw(parts[2]) if parts[2] else None
        self.status = "used"
        return None

    def release(self) -> None:
        """Drop what was loaded (the index state holds the whole file's buffer)."""
        self._files = {}
        self._index = None

    def encode(
        self, files: Mapping[str, PersistedFile], index: msgspec.Raw | None
    ) -> list[Part] | None:
        """The cache's parts (done while the bank is locked: `files` and `index` must hold
        still), or None when something in it cannot be encoded."""
        try:
            header = msgspec.msgpack.encode(self._expected())
            documents = msgspec.msgpack.encode(list(files.values()))
        except (TypeError, ValueError, OverflowError, RecursionError) as exc:
            self.status = f"not saved ({exc})"
            return None
        return [header, documents, memoryview(index) if index is not None else b""]

    def save(self, files: Mapping[str, PersistedFile], index: msgspec.Raw | None) -> bool:
        """Encode and write the cache; False when it could not be."""
        parts = self.encode(files, index)
        return parts is not None and self.write(parts)

    def write(self, parts: list[Part]) -> bool:
        """Write the cache whole (temporary file, then rename); False when it could not be."""
        digest = hashlib.sha256()
        for part in parts:
            digest.update(len(part).to_bytes(LENGTH_SIZE, "big"))
            digest.update(part)
        directory = os.path.dirname(self.path)
        temporary = f"{self.path}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with os.fdopen(descriptor, "wb", closefd=True) as handle:
                    handle.write(MAGIC)
                    handle.write(digest.digest())
                    for part in parts:
                        handle.write(len(part).to_bytes(LENGTH_SIZE, "big"))
                        handle.write(part)
            except BaseException:
                os.unlink(temporary)
                raise
            os.replace(temporary, self.path)
        except OSError as exc:
            self.status = f"not saved ({exc.strerror})"
            _debug(f"cannot write {self.path}: {exc}")
            return False
        self.status = "saved"
        return True


def cache_for(real_root: str, environ: Mapping[str, str] | None = None) -> ProjectionCache | None:
    """The projection cache of the bank at `real_root`, or None when it is switched off or
    there is nowhere to keep it."""
    if switched_off(environ):
        return None
    directory = cache_directory(environ)
    if directory is None:
        return None
    from mbank.journal import mbank_version

    cache = ProjectionCache(real_root, mbank_version(), directory)
    cache.prefetch()
    return cache


def warm_start(bank: Bank, index: SearchIndex) -> tuple[SearchIndex, list[Part] | None]:
    """Refresh `bank` and bring `index` up to date with it, from the projection cache where it
    can be (called with the bank locked).

    An index that holds nothing yet is replaced by the persisted one, which `sync` then
    reconciles with the snapshot. Returns the index to keep and, when anything was parsed or
    indexed anew, the payload to write with `bank.cache.write` once the lock is released.
    """
    from mbank.search_state import export_state, index_from_state

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
            persisted = None if state is None else index_from_state(state)
            if persisted is not None:
                index = persisted
        touched = index.sync(snapshot)
        index.route_forms()  # what a first route call would otherwise build (kept in the cache)
        if cache is not None:
            cache.release()
    finally:
        if collecting:
            gc.enable()
    if cache is None or (
        cache.status == "used" and not bank.parsed_since_persisted and not touched
    ):
        return index, None
    bank.parsed_since_persisted = 0
    return index, cache.encode(bank.persisted_files(), export_state(index))
