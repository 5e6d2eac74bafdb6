"""Drafters propose the next few tokens cheaply; the target verifies them in one pass.

Two kinds, chosen per request:
- `ModelDrafter`: a small causal LM sharing the target's vocabulary, with its own KV cache.
- `PromptLookupDrafter`: no model; copies the continuation of the most recent earlier occurrence of
  the last few tokens (prompt-lookup / n-gram drafting). Free to run, strong on repetitive text.
"""

from __future__ import annotations

from typing import Protocol

import torch

from backends.engine.loader import LoadedModel
from backends.engine.runner import Row, SequenceCache, forward_batch
from backends.engine.sampling import SamplingParams, probs, sample


class Drafter(Protocol):
    name: str
    cost: float
    """Cost of one proposal step relative to one target forward pass (feeds AdaptiveK)."""

    def propose(
        self, ids: list[int], k: int, params: SamplingParams, gen: torch.Generator
    ) -> tuple[list[int], torch.Tensor | None]:
        """Up to k tokens to follow `ids`, and the (n, V) distributions they were drawn from
        (None: deterministic proposals, i.e. one-hot q)."""

    def commit(self, ids: list[int]) -> None:
        """The sequence after verification; forget whatever no longer matches it."""


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class ModelDrafter:
    name = "draft"

    def __init__(self, draft: LoadedModel, target_vocab: int, cost: float) -> None:
        self.lm = draft
        self.cache = SequenceCache(draft)
        self.tokens: list[int] = []  # exactly what self.cache holds
        self.target_vocab = target_vocab
        self.cost = cost

    def _dist(self, logits: torch.Tensor, params: SamplingParams) -> torch.Tensor:
        """The draft's distribution over the *target's* vocabulary (ids the target cannot take are
        dropped; ids only the target has get zero draft mass)."""
        v = self.target_vocab
        if logits.shape[-1] > v:
            logits = logits[..., :v]
        q = probs(logits, params)
        if q.shape[-1] < v:
            q = torch.nn.functional.pad(q, (0, v - q.shape[-1]))
        return q

    def propose(self, ids, k, params, gen):
        return propose_batch([(self, ids, k, params, gen)])[0]

    def commit(self, ids):
        # Always leave the last token unfed, so the next proposal has something to feed.
        keep = min(_common_prefix(self.tokens, ids), len(ids) - 1)
        self.cache.rollback(len(self.tokens) - keep)
        del self.tokens[keep:]


class PromptLookupDrafter:
    """Index of every n-gram (n in [min_n, max_n]) -> where its most recent continuation starts.

    Updated incrementally as the sequence grows, so a proposal is a dict lookup, not a scan.
    """

    name = "ngram"
    cost = 0.0

    def __init__(self, min_n: int = 2, max_n: int = 4) -> None:
        self.min_n, self.max_n = min_n, max_n
        self.index: dict[tuple[int, ...], int] = {}
        self.indexed = 0  # n-grams ending before this position are indexed

    def _extend(self, ids: list[int]) -> None:
        # Index n-grams ending at e <= len-2, so every indexed continuation has at least one token.
        for end in range(max(self.indexed, 0), len(ids) - 1):
            for n in range(self.min_n, self.max_n + 1):
                if end - n + 1 >= 0:
                    self.index[tuple(ids[end - n + 1 : end + 1])] = end + 1
        self.indexed = max(self.indexed, len(ids) - 1)

    def propose(self, ids, k, params, gen):
        self._extend(ids)
        for n in range(self.max_n, self.min_n - 1, -1):
            if len(ids) < n:
                continue
            start = self.index.get(tuple(ids[-n:]))
            if start is not None:
                return ids[start : start + k], None
        return [], None

    def commit(self, ids):
        if len(ids) - 1 < self.indexed:  # never happens in the engine (ids only grow); be safe
            self.index.clear()
            self.indexed = 0


def propose_batch(work: list[tuple[ModelDrafter, list[int], int, SamplingParams, torch.Generator]]) -> list[tuple[list[int], torch.Tensor | None]]:
    """`ModelDrafter.propose` for many sequences at once: each draft step is one batched forward
    pass of the draft model over every row still drafting (rows may share one draft model only;
    a row's drafter must not appear twice). Same proposals as proposing row by row."""
    out: list[tuple[list[int], torch.Tensor | None]] = [([], None)] * len(work)
    by_lm: dict[int, list[int]] = {}
    ks = []
    for i, (d, ids, k, _, _) in enumerate(work):
        k = min(k, d.lm.context_length - len(ids))
        ks.append(k)
        if k > 0:
            by_lm.setdefault(id(d.lm), []).append(i)
    for rows in by_lm.values():
        lm = work[rows[0]][0].lm
        toks: dict[int, list[int]] = {i: [] for i in rows}
        qs: dict[int, list[torch.Tensor]] = {i: [] for i in rows}
        feeds = {i: work[i][1][len(work[i][0].tokens):] for i in rows}
        active = list(rows)
        with lm.lock:
            while active:
                logits = forward_batch(lm, [Row(work[i][0].cache, feeds[i], 1) for i in active])
                nxt = []
                for i, lg in zip(active, logits, strict=True):
                    d, _, _, params, gen = work[i]
                    d.tokens.extend(feeds[i])
                    lg = lg[-1]
                    if params.greedy:
                        x = int(lg[: d.target_vocab].argmax())
                    else:
                        q = d._dist(lg, params)
                        x = sample(q, gen)
                        qs[i].append(q)
                    toks[i].append(x)
                    if len(toks[i]) < ks[i]:  # the last draft is never fed: the target checks it
                        feeds[i] = [x]
                        nxt.append(i)
                active = nxt
        for i in rows:
            out[i] = (toks[i], torch.stack(qs[i]) if qs[i] else None)
    return out
