"""`python -m mbank.memo`: the same as `mbank memo`."""

from __future__ import annotations

import sys

from mbank.memo.server import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
