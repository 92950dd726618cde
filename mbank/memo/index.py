"""Candidate generation with exact cosines (06 §6): an inverted index without a fan-out cap.

Rarest query dimensions *admit* nodes into the accumulator; common ones only *complete* the
scores of nodes already admitted. No dimension is ignored, so every candidate's score is its
exact cosine, and the node that holds every query feature is always a candidate.
"""

from __future__ import annotations

import math
from typing import Protocol

from mbank.memo.model import ADMIT_MIN


class VectorIndex(Protocol):
    """What retrieval and autolinking need from an index."""

    def add(self, node_id: str, vector: dict[int, float]) -> None:
        """Index a node's vector."""
        ...

    def remove(self, node_id: str, vector: dict[int, float]) -> None:
        """Drop a node's entries."""
        ...

    def candidates(self, query: dict[int, float]) -> dict[str, float]:
        """Candidate node ids with their exact cosine to `query`."""
        ...

    def canonical(self) -> object:
        """A plain value for equality checks against a rebuilt index."""
        ...

    def clone(self) -> VectorIndex:
        """An independent copy."""
        ...


def common_df(live_nodes: int) -> int:
    """`COMMON_DF = max(32, ceil(0.05 × N))` (06 §6)."""
    return max(32, math.ceil(0.05 * live_nodes))


class InvertedIndex:
    """`postings: dim → {node_id: weight}` for sparse embedders."""

    def __init__(self) -> None:
        self.postings: dict[int, dict[str, float]] = {}
        self.size = 0

    def add(self, node_id: str, vector: dict[int, float]) -> None:
        """Index a node's non-zero components."""
        postings = self.postings
        for d, w in vector.items():
            bucket = postings.get(d)
            if bucket is None:
                postings[d] = {node_id: w}
            else:
                bucket[node_id] = w
        self.size += 1

    def remove(self, node_id: str, vector: dict[int, float]) -> None:
        """Drop a node from every posting list it is in."""
        postings = self.postings
        for d in vector:
            bucket = postings.get(d)
            if bucket is not None:
                bucket.pop(node_id, None)
                if not bucket:
                    del postings[d]
        self.size -= 1

    def candidates(self, query: dict[int, float]) -> dict[str, float]:
        """Term-at-a-time, rarest dimension first; admit rare, complete common (06 §6)."""
        postings = self.postings
        present = [(len(postings[d]), d) for d in query if d in postings]
        if not present:
            return {}
        present.sort()
        threshold = common_df(self.size)
        acc: dict[str, float] = {}
        get = acc.get
        first = True
        for df, d in present:
            q = query[d]
            bucket = postings[d]
            if first or df <= threshold or len(acc) < ADMIT_MIN:
                first = False
                for n, w in bucket.items():
                    acc[n] = get(n, 0.0) + q * w
            elif df <= 2 * len(acc):
                # Walking the postings with a membership test is cheapest up to about twice
                # the accumulator's size (measured on the benchmark corpus) …
                for n, w in bucket.items():
                    if n in acc:
                        acc[n] += q * w
            else:
                # … beyond that, a C-level intersection of the key sets, then only the hits.
                for n in bucket.keys() & acc.keys():
                    acc[n] += q * bucket[n]
        return acc

    def canonical(self) -> object:
        """Postings as sorted plain data."""
        return sorted((d, sorted(b.items())) for d, b in self.postings.items())

    def clone(self) -> InvertedIndex:
        """An independent copy."""
        twin = InvertedIndex()
        twin.postings = {d: dict(b) for d, b in self.postings.items()}
        twin.size = self.size
        return twin


class DenseIndex:
    """Exhaustive cosine over every live node: dense vectors are never inverted (06 §5.3)."""

    def __init__(self) -> None:
        self.vectors: dict[str, dict[int, float]] = {}

    def add(self, node_id: str, vector: dict[int, float]) -> None:
        """Keep the node's vector."""
        self.vectors[node_id] = vector

    def remove(self, node_id: str, vector: dict[int, float]) -> None:
        """Forget the node's vector."""
        self.vectors.pop(node_id, None)

    def candidates(self, query: dict[int, float]) -> dict[str, float]:
        """Every live node with a non-empty vector, scored by exact cosine."""
        if not query:
            return {}
        items = list(query.items())
        out: dict[str, float] = {}
        for n, vec in self.vectors.items():
            if vec:
                get = vec.get
                out[n] = sum(w * get(d, 0.0) for d, w in items)
        return out

    def canonical(self) -> object:
        """Vectors as sorted plain data."""
        return sorted((n, sorted(v.items())) for n, v in self.vectors.items())

    def clone(self) -> DenseIndex:
        """An independent copy (vectors are never mutated in place)."""
        twin = DenseIndex()
        return twin
