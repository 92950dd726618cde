"""`.mbank/objects/`: content-addressed pre-images for rollback and undo (spec 03 §14.3).

Opened like all of `.mbank/`: relative to directory descriptors, no link followed. An object
name read from a record must be a sha256 (64 hex digits) before it names a file.
"""

from __future__ import annotations

import base64
import os
import stat
from contextlib import ExitStack

from mbank.journal import durable
from mbank.journal.confine import is_sha256
from mbank.journal.layout import MBANK_DIR, OBJECTS_DIR, object_path
from mbank.journal.tree import open_directory, open_mbank, read_mbank_file
from mbank.plan import sha256_hex

__all__ = ["encode_preimage", "object_path", "read_object", "store_object"]


def store_object(root: str, content: bytes) -> str:
    """Store `content` under its sha256 in `objects/` (skipped when present); return the hash.

    Anything but a regular file already under that name (a link, say) is replaced, never
    followed. Raises `BadEntry` when `.mbank` or `objects` is not a real directory.
    """
    digest = sha256_hex(content)
    shown = f"{MBANK_DIR}/{OBJECTS_DIR}"
    with ExitStack() as stack:
        base = open_mbank(root)
        stack.callback(os.close, base)
        objects = open_directory(base, OBJECTS_DIR, shown)
        stack.callback(os.close, objects)
        try:
            os.stat(digest[:2], dir_fd=objects, follow_symlinks=False)
            fresh = False
        except FileNotFoundError:
            fresh = True
        bucket = open_directory(objects, digest[:2], f"{shown}/{digest[:2]}", create=fresh)
        stack.callback(os.close, bucket)
        if fresh:
            # The new `objects/<2 hex>/` entry must be as durable as the object inside it.
            os.fsync(objects)
        name = digest[2:]
        try:
            if stat.S_ISREG(os.stat(name, dir_fd=bucket, follow_symlinks=False).st_mode):
                return digest
        except FileNotFoundError:
            pass
        temp = durable.write_temp_at(bucket, content, 0o644)
        os.replace(temp, name, src_dir_fd=bucket, dst_dir_fd=bucket)
        os.fsync(bucket)
    return digest


def read_object(root: str, digest: str) -> bytes | None:
    """The object with this sha256, or None when it is missing (or does not match its name)."""
    if not is_sha256(digest):
        return None
    content = read_mbank_file(root, OBJECTS_DIR, digest[:2], digest[2:])
    return content if content is not None and sha256_hex(content) == digest else None


def encode_preimage(content: bytes) -> str:
    """Base64 text of a pre-image, as a WAL entry carries it."""
    return base64.b64encode(content).decode("ascii")
