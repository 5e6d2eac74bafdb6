"""Decoding with the real shipped models, driven in the test thread (no HTTP)."""

from __future__ import annotations

import pytest
import torch

from backends.engine.detok import IncrementalDetokenizer
from backends.engine.openai_api import InvalidRequest, parse_request, render_chat
from backends.engine.runner import SequenceCache, forward
from backends.engine.sampling import SamplingParams, probs
from backends.models.heldout import heldout_prompts
from tests.engine.stats import chi_square_pvalue


@pytest.fixture(scope="module")
def prompts(engine):
    return [ids for _, ids in heldout_prompts(engine.models["large"].target.tokenizer, 16, seed=7)]


def test_greedy_speculative_output_equals_target_only(run, prompts):
    compared = 0
    for ids in prompts:
        plain = run(ids, speculation="none", max_tokens=40)
        assert plain.seq.stats.proposed == 0
        assert plain.seq.stats.target_passes == len(plain.tokens) + (plain.finished.reason == "stop")
        for spec, k in (("draft", None), ("ngram", None)):
            other = run(ids, speculation=spec, k=k, max_tokens=40)
            assert other.tokens == plain.tokens, (spec, k)
            assert other.text == plain.text
            assert other.finished.reason == plain.finished.reason
        compared += 1
    assert compared == len(prompts)


@pytest.mark.parametrize("k", [1, 3, 8])
def test_greedy_equality_holds_for_fixed_k(run, prompts, k):
    for ids in prompts[:5]:
        plain = run(ids, speculation="none", max_tokens=40)
        spec = run(ids, speculation="draft", k=k, max_tokens=40)
        assert spec.tokens == plain.tokens
        assert spec.seq.stats.proposed > 0


def test_speculation_saves_target_passes_and_reports_metrics(run, prompts):
    passes = {"none": 0, "draft": 0}
    for ids in prompts[:6]:
        for spec in passes:
            r = run(ids, speculation=spec, max_tokens=48, ignore_eos=True)
            passes[spec] += r.seq.stats.target_passes
            stats = r.finished.spec
            if spec == "draft":
                assert stats["drafter"] == "draft"
                assert 0 <= stats["accepted_tokens"] <= stats["proposed_tokens"]
                assert stats["acceptance_rate"] == pytest.approx(stats["accepted_tokens"] / stats["proposed_tokens"], abs=1e-3)
    assert passes["draft"] < passes["none"]


def _target_dist(served, prompt_ids, params):
    lm = served.target
    cache = SequenceCache(lm)
    return probs(forward(lm, cache, prompt_ids, keep=1), params)[0]


@pytest.fixture(scope="module")
def sampling_case(engine):
    """A prompt with a spread-out next-token law, and the target's exact laws for tokens 1 and 2:
    p1 = p(x | prompt), p2 = sum_x p1(x) p(y | prompt, x)."""
    served = engine.models["large"]
    prompt = served.target.tokenizer.encode("import os\nimport sys\nimport", add_special_tokens=False)
    params = SamplingParams(max_tokens=3, temperature=1.3, top_k=12)
    p1 = _target_dist(served, prompt, params)
    p2 = torch.zeros_like(p1)
    for x in torch.nonzero(p1).flatten().tolist():
        p2 += p1[x] * _target_dist(served, prompt + [x], params)
    q1 = probs(forward(served.draft, SequenceCache(served.draft), prompt, keep=1)[:, : len(p1)], params)[0]
    # The draft's own law differs from the target's, so agreement below is earned.
    assert 0.5 * (p1 - q1).abs().sum() > 0.05
    return prompt, p1, p2, q1


@pytest.mark.parametrize("k", [1, 2])
def test_sampling_distribution_matches_the_target(run, sampling_case, k):
    """Chi-square on the first two generated tokens over many seeds, speculative against the
    target's exact laws. k=1 puts the all-accepted bonus token at position 2; k=2 puts the second
    draft's accept/resample there."""
    prompt, p1, p2, q1 = sampling_case
    n = 400
    c1, c2 = torch.zeros_like(p1), torch.zeros_like(p1)
    accepted = proposed = 0
    for seed in range(n):
        r = run(prompt, speculation="draft", k=k, max_tokens=3, temperature=1.3, top_k=12, seed=seed, ignore_eos=True)
        c1[r.tokens[0]] += 1
        c2[r.tokens[1]] += 1
        accepted += r.seq.stats.accepted
        proposed += r.seq.stats.proposed
    assert 0 < accepted < proposed  # both the accept and the resample branch were exercised
    assert chi_square_pvalue(c1, p1) > 1e-3
    assert chi_square_pvalue(c2, p2) > 1e-3
    assert chi_square_pvalue(c1, q1) < 1e-6  # and the test can tell the draft's law apart


def test_seeded_sampling_replays(run, prompts):
    a = run(prompts[0], temperature=0.9, top_p=0.95, seed=1234, max_tokens=24)
    b = run(prompts[0], temperature=0.9, top_p=0.95, seed=1234, max_tokens=24)
    assert a.tokens == b.tokens


def test_max_tokens_ends_with_length(run, prompts):
    for spec in ("none", "draft", "ngram"):
        r = run(prompts[1], speculation=spec, max_tokens=7, ignore_eos=True)
        assert len(r.tokens) == 7
        assert r.finished.reason == "length"
        assert r.finished.completion_tokens == 7


def test_stop_sequence_cuts_the_text(run, prompts):
    for ids in prompts[:6]:
        full = run(ids, speculation="none", max_tokens=60, ignore_eos=True).text
        if len(full) < 30:
            continue
        stop = full[20:23]
        cut = full.index(stop)
        for spec in ("none", "draft"):
            r = run(ids, speculation=spec, max_tokens=60, ignore_eos=True, stop=(stop, "never-in-output-xyz"))
            assert r.text == full[:cut]
            assert r.finished.reason == "stop"
        return
    pytest.fail("no prompt produced 30 characters")


def test_eos_ends_chat_answers_with_stop(engine, run):
    tok = engine.models["large"].target.tokenizer
    ids = render_chat(tok, [{"role": "user", "content": "Return the number of items in the queue."}])
    r = run(ids, speculation="draft", max_tokens=300)
    assert r.finished.reason == "stop"
    assert "<|end|>" not in r.text
    assert r.text.strip()


def test_incremental_detokenizer_handles_multibyte_characters(engine):
    tok = engine.models["large"].target.tokenizer
    text = "naïve → 世界 🚀 done"
    ids = tok.encode(text, add_special_tokens=False)
    d = IncrementalDetokenizer(tok, [])
    assert "".join(d.push(i) for i in ids) == text


def test_context_and_parameter_limits_are_400s(engine):
    served = engine.models["large"]
    ctx = served.target.context_length
    long_prompt = "x = 1\n" * ctx
    cases = [
        ({"prompt": long_prompt}, "context_length_exceeded", "prompt"),
        ({"prompt": "def f():", "max_tokens": ctx}, "context_length_exceeded", "max_tokens"),
        ({"prompt": "def f():", "n": 2}, "unsupported_parameter", "n"),
        ({"prompt": "def f():", "stop": 5}, "invalid_stop", "stop"),
        ({"prompt": "def f():", "stop": ["a", "b", "c", "d", "e"]}, "invalid_stop", "stop"),
        ({"prompt": "def f():", "temperature": 3}, "invalid_value", "temperature"),
    ]
    for body, code, param in cases:
        with pytest.raises(InvalidRequest) as e:
            parse_request("completions", {"model": "large", **body}, served, "r")
        assert (e.value.code, e.value.param, e.value.status) == (code, param, 400)
    ok = parse_request("completions", {"model": "large", "prompt": "def f():", "max_tokens": 8}, served, "r")
    assert ok.generation.params.max_tokens == 8


def test_a_cap_the_gateway_wrote_fits_the_room_the_prompt_leaves(engine):
    served = engine.models["large"]
    ctx = served.target.context_length
    body = {"model": "large", "prompt": "def f():", "max_tokens": ctx}  # a budget cap as large as the context
    prompt = len(parse_request("completions", {**body, "max_tokens": 1}, served, "r").generation.prompt_ids)
    fitted = parse_request("completions", body, served, "r", fit_max_tokens=True)
    assert fitted.generation.params.max_tokens == ctx - prompt
    small = parse_request("completions", {**body, "max_tokens": 8}, served, "r", fit_max_tokens=True)
    assert small.generation.params.max_tokens == 8  # a cap with room to spare stays as written
    with pytest.raises(InvalidRequest):  # the prompt alone still has to leave room for one token
        parse_request("completions", {**body, "prompt": "x = 1\n" * ctx}, served, "r", fit_max_tokens=True)


def test_plain_chat_fallback_without_a_template(engine):
    import copy

    tok = copy.deepcopy(engine.models["large"].target.tokenizer)
    tok.chat_template = None
    ids = render_chat(tok, [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}])
    assert tok.decode(ids) == "system: Be brief.\nuser: hi\nassistant:"
    with_template = render_chat(engine.models["large"].target.tokenizer, [{"role": "user", "content": "hi"}])
    assert engine.models["large"].target.tokenizer.decode(with_template) == "<|user|>\nhi<|end|>\n<|assistant|>\n"
