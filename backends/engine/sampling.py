"""Sampling parameters and the logits -> distribution transform shared by target and draft.

Speculative sampling is exact only if the draft's q and the target's p are both the distributions
the request asks for (after temperature, top-k and top-p), so both go through `probs()`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch


@dataclass(frozen=True, slots=True)
class SamplingParams:
    max_tokens: int
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    """0 (or -1 on the wire) disables top-k."""
    seed: int | None = None
    stop: tuple[str, ...] = ()
    ignore_eos: bool = False

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0


def make_generator(seed: int | None, device: torch.device) -> torch.Generator:
    """A request-private RNG: seeded requests replay exactly, and no request touches the global RNG."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int.from_bytes(os.urandom(8), "little") >> 1)
    return gen


def probs(logits: torch.Tensor, params: SamplingParams) -> torch.Tensor:
    """Rows of logits (n, V) -> rows of the sampling distribution (n, V), fp32."""
    x = logits.float() / params.temperature
    if params.top_k and params.top_k < x.shape[-1]:
        kth = torch.topk(x, params.top_k, dim=-1).values[..., -1:]
        x = x.masked_fill(x < kth, float("-inf"))
    p = torch.softmax(x, dim=-1)
    if params.top_p < 1.0:
        sorted_p, order = torch.sort(p, dim=-1, descending=True)
        # Drop a token when the mass before it already reaches top_p (so the first always stays).
        drop = (sorted_p.cumsum(-1) - sorted_p) >= params.top_p
        sorted_p = sorted_p.masked_fill(drop, 0.0)
        p = torch.zeros_like(p).scatter_(-1, order, sorted_p)
        p = p / p.sum(-1, keepdim=True)
    return p


def sample(p: torch.Tensor, gen: torch.Generator) -> int:
    """One token from a distribution row."""
    return int(torch.multinomial(p, 1, generator=gen).item())
