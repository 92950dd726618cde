"""Merging a bank's registries and journal the way git merges files: three versions in, one out.

Parallel branches each append an entry to the same section index and a record to the same
journal, so git's line merge conflicts on every second branch. `index_merge` merges an index by
its entries and `journal_merge` unions journals by record id; both are pure functions of the
three texts, and answer None when they cannot read one, so that the shell (`driver`) falls
back to git's ordinary merge with markers instead of guessing.
"""

# What `mbank merge-driver KIND` merges: a registry (index) or the journal.
INDEX = "index"
JOURNAL = "journal"
KINDS = (INDEX, JOURNAL)
