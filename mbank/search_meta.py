"""What `bank_search` needs of every document of one snapshot, gathered once per bank state.

Split out of `mbank.search` (which kept growing past 900 lines with issue 16's literal tier);
a pure function of the snapshot, kept in the search index's memo.
"""

from __future__ import annotations

import bisect

from mbank.model import INBOX_LAYER, TEMPLATE_FUNCTION
from mbank.snapshot import Snapshot


class SearchMeta:
    """What search needs of every document of one snapshot, gathered once per bank state.

    Lower-cased titles and purposes are joined into one string per field, so "which titles
    contain this text" is one scan in C rather than a loop over thousands of documents.
    """

    SEPARATOR = "\x00"

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.paths = list(snapshot.docs)
        self.searchable = {
            path
            for path, doc in snapshot.docs.items()
            if doc.doc_function != TEMPLATE_FUNCTION and doc.layer != INBOX_LAYER
        }
        self.archived = {path for path, doc in snapshot.docs.items() if doc.status == "archived"}
        self._fields: dict[str, tuple[str, list[int]]] = {}
        self._containing: dict[tuple[str, str], frozenset[str]] = {}
        self._allowed: dict[tuple[str | None, str | None, str | None], set[str]] = {}

    def allowed(self, kind: str | None, layer: str | None, status: str | None) -> set[str]:
        """The searchable documents passing the exact `docKind`/`layer`/`status` filters."""
        key = (kind, layer, status)
        found = self._allowed.get(key)
        if found is None:
            if key == (None, None, None):
                found = self.searchable
            else:
                docs = self.snapshot.docs
                found = {
                    path
                    for path in self.searchable
                    if (kind is None or docs[path].doc_kind == kind)
                    and (layer is None or docs[path].layer == layer)
                    and (status is None or docs[path].status == status)
                }
            self._allowed[key] = found
        return found

    def _field(self, name: str) -> tuple[str, list[int]]:
        found = self._fields.get(name)
        if found is None:
            texts = [getattr(doc, name).lower() for doc in self.snapshot.docs.values()]
            starts: list[int] = []
            position = 0
            for text in texts:
                starts.append(position)
                position += len(text) + 1
            found = (self.SEPARATOR.join(texts), starts)
            self._fields[name] = found
        return found

    def containing(self, name: str, text: str) -> frozenset[str]:
        """The documents whose lower-cased `title` or `purpose` contains `text`."""
        key = (name, text)
        found = self._containing.get(key)
        if found is None:
            if not text:
                found = frozenset(self.paths)
            elif self.SEPARATOR in text:
                docs = self.snapshot.docs
                found = frozenset(p for p in self.paths if text in getattr(docs[p], name).lower())
            else:
                blob, starts = self._field(name)
                hits: set[str] = set()
                position = blob.find(text)
                while position != -1:
                    hits.add(self.paths[bisect.bisect_right(starts, position) - 1])
                    position = blob.find(text, position + 1)
                found = frozenset(hits)
            self._containing[key] = found
        return found
