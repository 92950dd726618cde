"""The one time style: ISO-8601 UTC with `Z` (06 §11.1)."""

from __future__ import annotations

import time


def iso_seconds(at: float) -> str:
    """Node fields: whole seconds, e.g. `2026-09-14T12:00:00Z`."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def iso_millis(at: float) -> str:
    """Envelope timestamps: milliseconds, e.g. `2026-09-14T12:00:00.123Z`."""
    whole = int(at // 1)
    millis = round((at - whole) * 1000)
    if millis == 1000:
        whole, millis = whole + 1, 0
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{millis:03d}Z"
