"""Token-level pruning by a small causal LM's surprisal (after LLMLingua, Jiang et al. 2023).

Words a small LM predicts easily carry little information for a bigger one; dropping the least surprising
words first keeps the facts. We score whole words (the sum of their tokens' -log p), not sub-word tokens,
so what remains is still words, and keep line breaks so structure survives.

Optional: it needs a Hugging Face causal LM directory (the local engine's draft model by default). When
there is none, `SurprisalPruner.load` returns None and the compression step reports itself skipped.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from policies.tokens import BUNDLED

_WORDS = re.compile(r"\S+")
_WINDOW = 512  # tokens scored per forward pass; small models have short contexts


class SurprisalPruner:
    def __init__(self, model_dir: str | Path) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
        self.model = AutoModelForCausalLM.from_pretrained(str(model_dir), local_files_only=True,
                                                          dtype=torch.float32).eval()
        self.window = min(_WINDOW, getattr(self.model.config, "max_position_embeddings", _WINDOW) or _WINDOW)
        self._lock = threading.Lock()

    @staticmethod
    @functools.lru_cache(maxsize=4)
    def load(model_dir: str | None = None) -> SurprisalPruner | None:
        path = Path(model_dir) if model_dir else BUNDLED["bundled:draft"]
        if not (path / "config.json").exists():
            return None
        return SurprisalPruner(path)

    def word_surprisal(self, text: str) -> tuple[list[tuple[int, int]], np.ndarray, np.ndarray]:
        """Spans of the words of `text`, each word's surprisal in nats, and its number of LM tokens."""
        spans = [m.span() for m in _WORDS.finditer(text)]
        if not spans:
            return [], np.zeros(0), np.zeros(0)
        enc = self.tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)
        ids, offsets = enc["input_ids"], enc["offset_mapping"]
        token_s = np.zeros(len(ids))
        torch = self.torch
        with self._lock, torch.inference_mode():
            for start in range(0, len(ids), self.window - 1):
                # Each window starts one token back so every token but the very first has a predecessor.
                lo = max(0, start - 1)
                chunk = torch.tensor([ids[lo:start + self.window - 1]])
                logits = self.model(chunk).logits[0].float()
                logp = torch.log_softmax(logits[:-1], dim=-1)
                target = chunk[0, 1:]
                s = -logp.gather(1, target[:, None])[:, 0].numpy()
                token_s[lo + 1:lo + 1 + len(s)] = s
        if len(ids):
            token_s[0] = token_s[1:].max(initial=0.0)  # unscored first token: never the first to go
        word_s, word_n = np.zeros(len(spans)), np.zeros(len(spans))
        w = 0
        for (a, b), s in zip(offsets, token_s, strict=True):
            while w < len(spans) - 1 and a >= spans[w][1]:
                w += 1
            if b > a:
                word_s[w] += s
                word_n[w] += 1
        return spans, word_s, word_n

    def prune(self, texts: Sequence[str], fraction: float) -> list[str]:
        """Drop the least surprising words across `texts` until `fraction` of their tokens are gone.

        Measured in the LM's own tokens, so it holds whatever tokenizer the backend counts with."""
        scored = [self.word_surprisal(t) for t in texts]
        cands = sorted((s, i, j) for i, (_, ws, _) in enumerate(scored) for j, s in enumerate(ws))
        goal = fraction * sum(float(n.sum()) for _, _, n in scored)
        drop: list[set[int]] = [set() for _ in texts]
        removed = 0.0
        for _, i, j in cands:
            if removed >= goal:
                break
            drop[i].add(j)
            removed += scored[i][2][j]
        return [_rebuild(t, spans, d) for t, (spans, _, _), d in zip(texts, scored, drop, strict=True)]


def _rebuild(text: str, spans: list[tuple[int, int]], drop: set[int]) -> str:
    """Kept words joined by a space, or by the line breaks that stood between them."""
    parts: list[str] = []
    gap = ""
    for j, (a, b) in enumerate(spans):
        between = text[spans[j - 1][1]:a] if j else ""
        if "\n" in between:
            gap = "\n" * min(2, between.count("\n"))
        elif not gap:
            gap = " "
        if j in drop:
            continue
        if parts:
            parts.append(gap)
        parts.append(text[a:b])
        gap = ""
    return "".join(parts)
