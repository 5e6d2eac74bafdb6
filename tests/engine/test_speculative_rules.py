"""The verification rules, adaptive k, drafters and text handling, on synthetic inputs."""

from __future__ import annotations

import torch

from backends.engine.detok import StopMatcher
from backends.engine.drafters import PromptLookupDrafter
from backends.engine.sampling import SamplingParams, probs
from backends.engine.speculative import AdaptiveK, verify_greedy, verify_sampling
from tests.engine.stats import chi_square_pvalue

V = 6
P = torch.tensor([[0.40, 0.25, 0.15, 0.10, 0.07, 0.03], [0.05, 0.05, 0.6, 0.1, 0.1, 0.1]])
Q = torch.tensor([[0.10, 0.50, 0.05, 0.05, 0.20, 0.10]])


def _first_tokens(p, q, n, seed, deterministic_draft=None):
    gen = torch.Generator().manual_seed(seed)
    counts = torch.zeros(V, dtype=torch.long)
    for _ in range(n):
        if deterministic_draft is None:
            x = int(torch.multinomial(q[0], 1, generator=gen))
            accepted, nxt = verify_sampling(p, q, [x], gen)
        else:
            x = deterministic_draft
            accepted, nxt = verify_sampling(p, None, [x], gen)
        counts[x if accepted else nxt] += 1
    return counts


def test_rejection_sampling_reproduces_the_target_distribution():
    counts = _first_tokens(P, Q, 6000, seed=1)
    assert chi_square_pvalue(counts, P[0]) > 0.001
    # The test has power: the same counts are wildly inconsistent with the draft's law.
    assert chi_square_pvalue(counts, Q[0]) < 1e-9


def test_deterministic_drafts_also_reproduce_the_target_distribution():
    counts = _first_tokens(P, None, 6000, seed=2, deterministic_draft=1)
    assert chi_square_pvalue(counts, P[0]) > 0.001


def test_all_accepted_draws_the_bonus_token_from_the_last_row():
    p = torch.tensor([[0.0, 1.0, 0, 0, 0, 0], [0, 0, 0, 1.0, 0, 0]])
    q = torch.tensor([[0.0, 1.0, 0, 0, 0, 0]])
    assert verify_sampling(p, q, [1], torch.Generator().manual_seed(0)) == (1, 3)


def test_zero_target_mass_is_always_rejected():
    p = torch.tensor([[0.0, 0.0, 1.0, 0, 0, 0], [1.0, 0, 0, 0, 0, 0]])
    q = torch.tensor([[0.5, 0.5, 0, 0, 0, 0]])
    for seed in range(20):
        assert verify_sampling(p, q, [0], torch.Generator().manual_seed(seed)) == (0, 2)


def test_greedy_accepts_the_matching_prefix_then_corrects():
    logits = torch.tensor([[0, 5.0, 0], [0, 0, 5.0], [5.0, 0, 0], [0, 5.0, 0]])
    assert verify_greedy(logits, [1, 2, 1]) == (2, 0)  # third draft wrong: target says 0
    assert verify_greedy(logits, [1, 2, 0]) == (3, 1)  # all right: bonus from the last row
    assert verify_greedy(logits[:1], []) == (0, 1)


def test_top_k_and_top_p_shape_the_distribution():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    p = probs(logits, SamplingParams(max_tokens=1, temperature=1.0, top_k=2))
    assert torch.allclose(p, torch.tensor([[0.625, 0.375, 0, 0]]))
    p = probs(logits, SamplingParams(max_tokens=1, temperature=1.0, top_p=0.7))
    assert torch.allclose(p, torch.tensor([[0.625, 0.375, 0, 0]]))
    p = probs(logits, SamplingParams(max_tokens=1, temperature=1.0, top_p=0.81))
    assert torch.allclose(p, torch.tensor([[0.5, 0.3, 0.15, 0]]) / 0.95)


def test_adaptive_k_grows_with_acceptance_and_shrinks_without():
    k = AdaptiveK(draft_cost=0.1)
    for _ in range(10):
        k.update(4, 4)
    high = k.next_k()
    for _ in range(10):
        k.update(4, 0)
    low = k.next_k()
    assert high >= 6 and low == 1
    assert AdaptiveK(draft_cost=0.1, fixed=3).next_k() == 3


def test_prompt_lookup_copies_the_most_recent_continuation():
    d = PromptLookupDrafter(min_n=2, max_n=3)
    params = SamplingParams(max_tokens=10, temperature=0.0)
    ids = [1, 2, 3, 4, 5, 9, 1, 2, 3, 7, 8, 1, 2, 3]
    tokens, q = d.propose(ids, 3, params, torch.Generator())
    assert tokens == [7, 8, 1] and q is None  # the later [1, 2, 3] wins
    assert d.propose([1, 2, 3, 4], 3, params, torch.Generator())[0] == []


def test_stop_sequences_are_held_back_and_cut_across_deltas():
    m = StopMatcher(("STOP", "\n\n"))
    assert m.push("abc ST") == ("abc ", False)  # "ST" might start "STOP"
    assert m.push("x") == ("STx", False)
    assert m.push(" end S") == (" end ", False)
    assert m.push("TOP and more") == ("", True)
    m = StopMatcher(("\n\n",))
    assert m.push("line\n") == ("line", False)
    assert m.push("\nnext") == ("", True)
    m = StopMatcher(("zz",))
    assert m.push("a z") == ("a ", False)
    assert m.flush() == "z"
