"""Pearson's chi-square goodness-of-fit test, without scipy.

The p-value is the chi-square survival function, i.e. the regularised upper incomplete gamma
function Q(df/2, x/2), which torch provides as `torch.special.gammaincc`.
"""

from __future__ import annotations

import torch


def chi_square_pvalue(counts: list[int] | torch.Tensor, probs: list[float] | torch.Tensor, min_expected: float = 5.0) -> float:
    """p-value that `counts` were drawn from `probs`. Categories expected fewer than `min_expected`
    times are pooled into one bin (the usual validity condition for the chi-square approximation)."""
    counts = torch.as_tensor(counts, dtype=torch.float64)
    probs = torch.as_tensor(probs, dtype=torch.float64)
    probs = probs / probs.sum()
    n = counts.sum()
    expected = probs * n
    big = expected >= min_expected
    obs = torch.cat([counts[big], counts[~big].sum().reshape(1)])
    exp = torch.cat([expected[big], expected[~big].sum().reshape(1)])
    if exp[-1] < 1e-12:  # nothing pooled
        if obs[-1] > 0:
            return 0.0  # observed something the law says is impossible
        obs, exp = obs[:-1], exp[:-1]
    stat = ((obs - exp) ** 2 / exp).sum()
    df = len(obs) - 1
    if df < 1:
        return 1.0
    return float(torch.special.gammaincc(torch.tensor(df / 2, dtype=torch.float64), stat / 2))
