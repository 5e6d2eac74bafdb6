"""Verification of drafted tokens, and the adaptive choice of how many to draft.

Pure functions of tensors: the worker feeds the target [last token, d1..dk] in one pass, gets k+1
rows of logits, and asks these functions how many drafts survive and what token comes next.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from backends.engine.sampling import sample


def verify_greedy(target_logits: torch.Tensor, drafts: list[int]) -> tuple[int, int]:
    """Accept the longest prefix of `drafts` equal to the target's argmax; the next token is the
    target's argmax after it. Output is therefore token-for-token the target's greedy output."""
    choices = target_logits.argmax(-1).tolist()
    n = 0
    while n < len(drafts) and drafts[n] == choices[n]:
        n += 1
    return n, choices[n]


def verify_sampling(
    p: torch.Tensor, q: torch.Tensor | None, drafts: list[int], gen: torch.Generator
) -> tuple[int, int]:
    """Speculative sampling (Leviathan et al. 2023; Chen et al. 2023).

    p: (k+1, V) target distributions; q: (k, V) draft distributions the drafts were sampled from,
    or None for a deterministic drafter (prompt lookup), whose q is one-hot on its proposal.
    Draft i is accepted with probability min(1, p_i(x)/q_i(x)); at the first rejection the next
    token is drawn from norm(max(0, p_i - q_i)); if all k are accepted, from p_{k+1}. The result is
    distributed exactly as sampling from the target alone.
    """
    k = len(drafts)
    if k:
        idx = torch.tensor(drafts, device=p.device)
        rows = torch.arange(k, device=p.device)
        p_x = p[rows, idx]
        q_x = q[rows, idx] if q is not None else torch.ones_like(p_x)
        u = torch.rand(k, generator=gen, device=p.device)
        rejected = (u * q_x >= p_x).tolist()  # u < p/q  <=>  accept (q_x > 0: x was drawn from q)
        for i, rej in enumerate(rejected):
            if rej:
                if q is not None:
                    residual = (p[i] - q[i]).clamp_(min=0.0)
                else:
                    residual = p[i].clone()
                    residual[drafts[i]] = 0.0
                total = residual.sum()
                # p == q up to rounding leaves no residual mass; then p itself is the right law.
                return i, sample(residual / total if total > 0 else p[i], gen)
    return k, sample(p[k], gen)


@dataclass(slots=True)
class AdaptiveK:
    """Pick k to maximise expected tokens per unit of time from the recent acceptance rate.

    With per-token acceptance a, one round yields (1 - a^(k+1)) / (1 - a) tokens for the cost of
    k draft passes (each `draft_cost` of a target pass) and one target pass over k+1 tokens
    (`verify_cost` extra per token). Only acceptance history drives k, so a seeded request replays
    identically; the costs are fixed per model pair.
    """

    draft_cost: float
    verify_cost: float = 0.03
    k_min: int = 1
    k_max: int = 8
    fixed: int | None = None
    alpha: float = 0.7  # prior before the first round
    smoothing: float = 0.6

    def update(self, proposed: int, accepted: int) -> None:
        if proposed:
            self.alpha += self.smoothing * (accepted / proposed - self.alpha)

    def next_k(self) -> int:
        if self.fixed is not None:
            return self.fixed
        a = min(max(self.alpha, 0.0), 0.99)
        best_k, best = self.k_min, -1.0
        for k in range(self.k_min, self.k_max + 1):
            rate = (1 - a ** (k + 1)) / (1 - a) / (1 + (self.draft_cost + self.verify_cost) * k)
            if rate > best:
                best_k, best = k, rate
        return best_k


@dataclass(slots=True)
class SpecStats:
    """Per-request speculative decoding counters, reported with the response."""

    drafter: str = "none"
    proposed: int = 0
    accepted: int = 0
    target_passes: int = 0
    rounds_with_drafts: int = 0

    @property
    def acceptance_rate(self) -> float | None:
        return self.accepted / self.proposed if self.proposed else None

    @property
    def mean_accepted_length(self) -> float | None:
        """Tokens produced per target pass that had drafts (accepted drafts + the bonus token)."""
        if not self.rounds_with_drafts:
            return None
        return (self.accepted + self.rounds_with_drafts) / self.rounds_with_drafts

    def as_dict(self) -> dict:
        rate = self.acceptance_rate
        return {
            "drafter": self.drafter,
            "proposed_tokens": self.proposed,
            "accepted_tokens": self.accepted,
            "acceptance_rate": round(rate, 4) if rate is not None else None,
            "target_forward_passes": self.target_passes,
        }
