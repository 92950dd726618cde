"""Text → vector behind one protocol (06 §5): the hashing embedder, and an optional dense one."""

from __future__ import annotations

import math
import re
import unicodedata
from hashlib import blake2b
from itertools import pairwise, repeat
from operator import mul
from typing import Any, Protocol

STOP_WORDS_EN = frozenset(
    """about above after again against all also am an and any are as at be because been
before being below between both but by can could did do does doing down during each few for
from further had has have having he her here hers him his how if in into is it its itself just
me more most my no nor not now of off on once only or other our out over own same she should so
some such than that the their them then there these they this those through to too under until
up very was we were what when where which while who whom why will with would you your""".split()  # noqa: SIM905
)
STOP_WORDS_ES = frozenset(
    """al algo algunos ante antes como con contra cual cuando de del desde donde durante el
ella ellas ellos en entre era es esa ese eso esta estaba estar este esto estos fue ha hay hasta
la las le les lo los mas me mi mis muy nada ni no nos otra otro para pero poco por porque que
quien se sea ser si sin sobre son su sus tambien te tiene todo todos tu un una uno unos ya""".split()  # noqa: SIM905, E501
)
STOP_WORDS = STOP_WORDS_EN | STOP_WORDS_ES

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"\w+")
_FEATURE_CACHE_MAX = 200_000


class Embedder(Protocol):
    """What the memory needs from an embedder (06 §5.1)."""

    signature: str
    dim: int
    sparse: bool
    autolink_threshold: float
    seed_floor: float

    def embed(self, text: str) -> dict[int, float]:
        """An L2-normalised vector ({} for text without features)."""
        ...


def fold_text(text: str) -> str:
    """camelCase split, NFKD, combining marks dropped, case-folded (06 §5.2 steps 1–2)."""
    text = _CAMEL.sub(" ", text)
    if not text.isascii():
        text = "".join(
            c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)
        )
    return text.casefold()


def tokenize(text: str) -> list[str]:
    """The tokens the hashing embedder sees (06 §5.2 steps 1–4)."""
    return [t for t in _WORD.findall(fold_text(text)) if len(t) > 1 and t not in STOP_WORDS]


def cosine(a: dict[int, float], b: dict[int, float]) -> float:
    """Dot product of two unit vectors, iterating the shorter one."""
    if len(a) > len(b):
        a, b = b, a
    # All in C: the other vector's weight for each of `a`'s dimensions (0.0 when absent).
    total: float = sum(map(mul, a.values(), map(b.get, a, repeat(0.0))))
    return total


class HashingEmbedder:
    """Feature hashing of unigrams and bigrams into `dim` buckets, sublinear TF, L2 (06 §5.2)."""

    sparse = True
    autolink_threshold = 0.15
    seed_floor = 0.05

    def __init__(self, dim: int = 4096, ngrams: tuple[int, ...] = (1, 2)) -> None:
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 64:
            raise ValueError(f"dim must be an integer >= 64, got {dim!r}")
        if not ngrams or any(
            not isinstance(n, int) or isinstance(n, bool) or n < 1 for n in ngrams
        ):
            raise ValueError(f"ngrams must be integers >= 1, got {ngrams!r}")
        self.dim = dim
        self.ngrams = tuple(sorted(set(ngrams)))
        span = (
            str(self.ngrams[0])
            if len(self.ngrams) == 1
            else f"{self.ngrams[0]}-{self.ngrams[-1]}"
            if self.ngrams == tuple(range(self.ngrams[0], self.ngrams[-1] + 1))
            else ",".join(map(str, self.ngrams))
        )
        self.signature = f"hashing-v2/dim={dim}/ngrams={span}/fold=nfkd"
        self._dims: dict[str, int] = {}

    def bucket(self, feature: str) -> int:
        """The stable bucket of a feature: blake2b, never Python's `hash()`."""
        dim = self._dims.get(feature)
        if dim is None:
            digest = blake2b(feature.encode("utf-8"), digest_size=8).digest()
            dim = int.from_bytes(digest, "big") % self.dim
            if len(self._dims) >= _FEATURE_CACHE_MAX:
                self._dims.clear()
            self._dims[feature] = dim
        return dim

    def embed(self, text: str) -> dict[int, float]:
        """Hash the n-gram features of `text` into a unit sparse vector."""
        tokens = tokenize(text)
        acc: dict[int, float] = {}
        get = acc.get
        known = self._dims.get
        bucket = self.bucket
        for n in self.ngrams:
            weight = 1.0 / n
            if n == 1:
                features = tokens
            elif n == 2:
                features = [f"{a} {b}" for a, b in pairwise(tokens)]
            else:
                features = [" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
            for feature in features:
                d = known(feature)
                if d is None:
                    d = bucket(feature)
                acc[d] = get(d, 0.0) + weight
        if not acc:
            return {}
        log = math.log
        vec = {d: 1.0 + log(w) for d, w in acc.items()}
        norm = math.sqrt(sum(v * v for v in vec.values()))
        if norm == 0.0:
            return {}
        return {d: v / norm for d, v in vec.items()}


class SentenceTransformerEmbedder:
    """A dense MiniLM embedder (extra `mbank[semantic]`), imported lazily (06 §5.3)."""

    sparse = False
    autolink_threshold = 0.35
    seed_floor = 0.20

    def __init__(self, model_name: str = "sentence-transformers/all-MiniLM-L6-v2") -> None:
        try:
            from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]
        except ImportError as exc:  # pragma: no cover - depends on the optional extra
            raise RuntimeError(
                "the minilm embedder needs the extra: pip install 'mbank[semantic]'"
            ) from exc
        self._model: Any = SentenceTransformer(model_name)  # pragma: no cover
        self.dim = int(self._model.get_sentence_embedding_dimension())  # pragma: no cover
        self.signature = f"minilm/{model_name}/dim={self.dim}"  # pragma: no cover

    def embed(self, text: str) -> dict[int, float]:  # pragma: no cover - needs model weights
        """A normalised dense vector, as a dict over every dimension."""
        if not text.strip():
            return {}
        values = self._model.encode(text, normalize_embeddings=True)
        return {i: float(v) for i, v in enumerate(values)}
