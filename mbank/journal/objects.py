"""`.mbank/objects/`: content-addressed pre-images for rollback and undo (spec 03 §14.3)."""

from __future__ import annotations

import base64
import os

from mbank.journal import durable
from mbank.journal.layout import object_path
from mbank.plan import sha256_hex


def store_object(root: str, content: bytes) -> str:
    """Store `content` under its sha256 in `objects/` (skipped when present); return the hash."""
    digest = sha256_hex(content)
    target = object_path(root, digest)
    if os.path.exists(target):
        return digest
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        os.makedirs(directory, exist_ok=True)
        # The new `objects/<2 hex>/` entry must be as durable as the object inside it.
        durable.fsync_dir(os.path.dirname(directory))
    temp = durable.write_temp(directory, content, 0o644)
    os.replace(temp, target)
    durable.fsync_dir(directory)
    return digest


def read_object(root: str, digest: str) -> bytes | None:
    """The object with this sha256, or None when it is missing (or does not match its name)."""
    try:
        with open(object_path(root, digest), "rb") as handle:
            content = handle.read()
    except OSError:
        return None
    return content if sha256_hex(content) == digest else None


def encode_preimage(content: bytes) -> str:
    """Base64 text of a pre-image, as a WAL entry carries it."""
    return base64.b64encode(content).decode("ascii")
