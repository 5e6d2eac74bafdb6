"""Forward passes over one sequence with a KV cache that can be rolled back.

The only place that touches transformers' cache objects, so a change in their API (transformers 5
renamed `past_key_values` to `cache`; `Cache.crop` takes a negative count) is absorbed here.
"""

from __future__ import annotations

import torch

from backends.engine.loader import LoadedModel


class SequenceCache:
    """One sequence's KV cache for one model, with the number of tokens it holds."""

    __slots__ = ("cache", "length")

    def __init__(self, lm: LoadedModel) -> None:
        from transformers import DynamicCache

        self.cache = DynamicCache(config=lm.model.config)
        self.length = 0

    def rollback(self, n: int) -> None:
        """Forget the last `n` tokens (rejected draft tokens)."""
        if n <= 0:
            return
        if n > self.length:
            raise ValueError(f"cannot roll back {n} tokens from a cache of {self.length}")
        self.cache.crop(-n)
        self.length -= n
        got = self.cache.get_seq_length()
        if got != self.length:  # a transformers version with other crop semantics would land here
            raise RuntimeError(f"KV cache rollback left {got} tokens, expected {self.length}")


@torch.inference_mode()
def forward(lm: LoadedModel, seq: SequenceCache, ids: list[int], keep: int | None = None) -> torch.Tensor:
    """Feed `ids` after what `seq` holds; return fp32 logits for the last `keep` fed tokens (all
    when None), one row each. Prefill keeps 1 so a long prompt never materialises prompt x vocab."""
    x = torch.tensor([ids], dtype=torch.long, device=lm.device)
    kwargs = {lm.cache_arg: seq.cache}
    if keep is not None and lm.supports_logits_to_keep:
        kwargs["logits_to_keep"] = keep
    out = lm.model(x, use_cache=True, **kwargs)
    seq.length += len(ids)
    logits = out.logits[0]
    if keep is not None:
        logits = logits[-keep:]
    return logits.float()
