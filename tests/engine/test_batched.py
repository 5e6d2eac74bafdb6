"""The batched forward pass (runner.BatchedGPT2) and the batched worker step, on the shipped models."""

from __future__ import annotations

import random

import pytest
import torch

from backends.engine import runner
from backends.engine.request import Delta, GenerationRequest, Submission
from backends.engine.runner import Row, SequenceCache, forward, forward_batch
from backends.engine.sampling import SamplingParams
from backends.engine.worker import StepItem, Worker
from backends.models.heldout import heldout_prompts


@pytest.fixture(scope="module")
def lm(engine):
    return engine.models["large"].target


@pytest.fixture(scope="module")
def text_ids(lm):
    import inspect
    import json

    return lm.tokenizer.encode(inspect.getsource(json))[:480]


def hf_logits(lm, ids: list[int]) -> torch.Tensor:
    with torch.inference_mode():
        return lm.model(torch.tensor([ids])).logits[0].float()


def test_shipped_models_use_the_batched_runner(engine):
    assert isinstance(runner._batched(engine.models["large"].target), runner.BatchedGPT2)
    assert isinstance(runner._batched(engine.models["large"].draft), runner.BatchedGPT2)


def test_batched_rows_match_transformers_for_mixed_lengths(lm, text_ids):
    """Ragged rows (decode tokens, verify windows, prefill chunks of many sizes, at different cache
    lengths) in one pass give the logits transformers gives each sequence alone."""
    rnd = random.Random(0)
    for _trial in range(5):
        n = rnd.randint(2, 7)
        caches = [SequenceCache(lm) for _ in range(n)]
        held = [rnd.choice([0, 1, 17, 64, 150]) for _ in range(n)]
        for c, h in zip(caches, held, strict=True):
            if h:
                forward(lm, c, text_ids[:h], keep=1)
        rows = [Row(c, text_ids[h : h + rnd.choice([1, 1, 4, 13, 40, 200])], 0) for c, h in zip(caches, held, strict=True)]
        for r in rows:
            r.keep = len(r.ids)
        rnd.shuffle(rows)
        out = forward_batch(lm, rows)
        for r, o in zip(rows, out, strict=True):
            ref = hf_logits(lm, text_ids[: r.seq.length])[-r.keep :]
            assert o.shape == ref.shape
            assert torch.allclose(o, ref, atol=2e-4), (o - ref).abs().max()
            assert torch.equal(o.argmax(-1), ref.argmax(-1))
        for c in caches:
            c.close()


def test_rollback_in_a_batch_forgets_rejected_tokens(lm, text_ids):
    a, b = SequenceCache(lm), SequenceCache(lm)
    forward(lm, a, text_ids[:30], keep=1)
    forward(lm, b, text_ids[:50], keep=1)
    forward_batch(lm, [Row(a, [7, 8, 9, 10], 4), Row(b, text_ids[50:53], 3)])  # pretend drafts
    a.rollback(4)
    b.rollback(1)
    out = forward_batch(lm, [Row(a, text_ids[30:32], 2), Row(b, text_ids[52:53], 1)])
    assert torch.allclose(out[0], hf_logits(lm, text_ids[:32])[-2:], atol=2e-4)
    assert torch.allclose(out[1], hf_logits(lm, text_ids[:53])[-1:], atol=2e-4)


def test_kv_store_grows_and_reuses_slots(lm):
    store = runner._batched(lm).store
    held = [SequenceCache(lm) for _ in range(store.slots + 3)]  # more than it had: it doubles
    assert store.slots >= len(held) and len({c.slot for c in held}) == len(held)
    in_use = store.in_use
    slot = held[0].slot
    held[0].close()
    held[0].close()  # closing twice gives the slot back once
    assert store.in_use == in_use - 1
    again = SequenceCache(lm)
    assert again.slot == min(slot, again.slot) and store.in_use == in_use
    for c in [*held[1:], again]:
        c.close()


def test_growing_the_kv_store_keeps_what_the_slots_hold(lm, text_ids):
    """Reserving (or doubling) copies the store: a sequence cached before the growth decodes after it
    exactly as transformers does."""
    cache = SequenceCache(lm)
    forward(lm, cache, text_ids[:40], keep=1)
    store = runner._batched(lm).store
    store.reserve(store.slots + 5)
    after = forward(lm, cache, text_ids[40:41])
    assert torch.allclose(after, hf_logits(lm, text_ids[:41])[-1:], atol=2e-4)
    cache.close()


def test_engine_start_reserves_kv_slots_for_max_running():
    """A started engine holds KV slots for `max_running` sequences in every model it serves, so a full
    batch never grows the store inside a step (growth copies the whole store: a latency spike)."""
    import asyncio

    from backends.engine import build_engine
    from backends.models import bundled_models

    shipped = bundled_models()
    eng = build_engine(shipped["target"], shipped["draft"], name="large", device="cpu", max_running=20)
    stores = [runner._batched(eng.models["large"].target).store, runner._batched(eng.models["large"].draft).store]
    assert all(st.slots < 20 for st in stores)  # nothing reserved before start

    async def full_batch():
        eng.start()
        try:
            sizes = [st.slots for st in stores]
            assert all(n >= 20 for n in sizes)
            params = SamplingParams(max_tokens=6, temperature=0.0, ignore_eos=True)
            handles = [eng.submit(GenerationRequest(f"r{i}", "large", [5 + i, 9, 11], params)) for i in range(20)]
            for h in handles:
                async for _ in h:
                    pass
            assert [st.slots for st in stores] == sizes  # 20 at once fit: no growth
        finally:
            eng.shutdown()

    asyncio.run(full_batch())


def _sub(ids, max_tokens, speculation=None, temperature=0.0, seed=None, name="r"):
    events: list = []
    params = SamplingParams(max_tokens=max_tokens, temperature=temperature, seed=seed, ignore_eos=True)
    return Submission(GenerationRequest(name, "large", list(ids), params, speculation=speculation), emit=events.append), events


def _run_batched(engine, subs, spec_max_batch=None, chunk=None, spec_k_under_load=0):
    """Step every submission together until all finish (prefill chunks of `chunk`, first round in
    the step that completes the prefill), counting target forward passes per step."""
    worker = Worker(engine.models, spec_max_batch=spec_max_batch, spec_k_under_load=spec_k_under_load)
    seqs = [worker.prepare(s) for s in subs]
    live = list(seqs)
    calls = []
    target = engine.models["large"].target
    real = runner.BatchedGPT2.forward

    def counting(self, *a, **kw):
        calls[-1] += self is runner._batched(target)
        return real(self, *a, **kw)

    runner.BatchedGPT2.forward = counting
    try:
        while live:
            calls.append(0)
            done = worker.step_batch([StepItem(s, chunk, True) for s in live])
            live = [s for s, d in zip(live, done, strict=True) if not d]
    finally:
        runner.BatchedGPT2.forward = real
    for s in seqs:
        s.close()
    return seqs, calls, worker


@pytest.mark.parametrize("speculation", ["none", "draft", "ngram"])
def test_batched_step_equals_single_request_greedy(engine, run, speculation):
    prompts = [ids for _, ids in heldout_prompts(engine.models["large"].target.tokenizer, 6, seed=3)]
    lengths = [5, 24, 9, 40, 16, 31]
    alone = [run(p, speculation=speculation, max_tokens=n, ignore_eos=True).tokens for p, n in zip(prompts, lengths, strict=True)]
    subs = [_sub(p, n, speculation, name=f"b{i}")[0] for i, (p, n) in enumerate(zip(prompts, lengths, strict=True))]
    seqs, calls, _ = _run_batched(engine, subs, chunk=7)
    assert [s.completion for s in seqs] == alone
    assert all(c == 1 for c in calls)  # every step: one target forward pass for the whole batch


def test_speculation_is_turned_down_above_spec_max_batch_and_output_is_unchanged(engine, run):
    prompts = [ids for _, ids in heldout_prompts(engine.models["large"].target.tokenizer, 4, seed=5)]
    alone = [run(p, speculation="draft", max_tokens=20, ignore_eos=True).tokens for p in prompts]
    subs = [_sub(p, 20, "draft", name=f"s{i}")[0] for i, p in enumerate(prompts)]
    seqs, _, worker = _run_batched(engine, subs, spec_max_batch=3)
    assert [s.completion for s in seqs] == alone
    # 4 decode together in every step (they finish together): never a draft, one pass per token
    assert all(s.stats.proposed == 0 for s in seqs) and worker.spec_off_steps > 0
    assert all(s.stats.target_passes == 20 for s in seqs)
    subs = [_sub(p, 20, "draft", name=f"t{i}")[0] for i, p in enumerate(prompts)]
    seqs, _, worker = _run_batched(engine, subs, spec_max_batch=4)
    assert [s.completion for s in seqs] == alone
    assert all(s.stats.proposed > 0 for s in seqs) and worker.spec_off_steps == 0
    # turned down, not off: at most 2 drafts per sequence and step above the threshold
    subs = [_sub(p, 20, "draft", name=f"u{i}")[0] for i, p in enumerate(prompts)]
    seqs, _, worker = _run_batched(engine, subs, spec_max_batch=3, spec_k_under_load=2)
    assert [s.completion for s in seqs] == alone
    assert worker.spec_off_steps > 0
    assert all(0 < s.stats.proposed <= 2 * s.stats.rounds_with_drafts for s in seqs)


def test_a_step_carrying_prefill_does_not_draft_and_output_is_unchanged(engine, run):
    """Requests joining mid-stream: their prefill steps run without drafts for anyone (time to first
    token is not held back by drafting); the greedy output is still the single-request output."""
    prompts = [ids for _, ids in heldout_prompts(engine.models["large"].target.tokenizer, 3, seed=9)]
    alone = [run(p, speculation="draft", max_tokens=24, ignore_eos=True).tokens for p in prompts]
    subs = [_sub(p, 24, "draft", name=f"p{i}")[0] for i, p in enumerate(prompts)]
    seqs, _, worker = _run_batched(engine, subs, chunk=5, spec_max_batch=4)
    assert [s.completion for s in seqs] == alone
    assert worker.prefill_capped_steps > 0 and worker.spec_off_steps == 0
    assert all(s.stats.proposed > 0 for s in seqs)  # speculation resumes once nobody is prefilling
    seqs, _, worker = _run_batched(engine, [_sub(p, 24, "draft", name=f"q{i}")[0] for i, p in enumerate(prompts)],
                                   chunk=5, spec_max_batch=None)
    assert [s.completion for s in seqs] == alone and worker.prefill_capped_steps == 0


def test_batched_speculative_sampling_replays_per_seed(engine):
    """Sampled rows in one batch: a seeded request gives the same output whether it runs alone or
    next to others (per-request RNG, per-row rollback)."""
    prompts = [ids for _, ids in heldout_prompts(engine.models["large"].target.tokenizer, 3, seed=9)]
    alone = []
    for i, p in enumerate(prompts):
        sub, _ = _sub(p, 24, "draft", temperature=0.8, seed=100 + i)
        alone.append(_run_batched(engine, [sub])[0][0].completion)
    subs = [_sub(p, 24, "draft", temperature=0.8, seed=100 + i)[0] for i, p in enumerate(prompts)]
    together = [s.completion for s in _run_batched(engine, subs)[0]]
    assert together == alone


def test_step_batch_emits_text_per_row(engine):
    tok = engine.models["large"].target.tokenizer
    subs = [_sub(tok.encode(t), 8, name=t[:3]) for t in ("Hello there, how are", "The weather today is")]
    _run_batched(engine, [s for s, _ in subs])
    for _, events in subs:
        assert sum(len(e.token_ids) for e in events if isinstance(e, Delta)) == 8


def test_transformers_fallback_for_other_architectures_gives_the_same_output(engine, run):
    """Models without a batched runner go through DynamicCache row by row; same greedy output."""
    from backends.engine import ServedModel, load_model
    from backends.models import bundled_models

    lm = load_model(bundled_models()["target"], device="cpu")
    lm.runner = False  # as for a non-GPT-2 architecture
    fallback = Worker({"large": ServedModel("large", lm)})
    prompts = [ids for _, ids in heldout_prompts(lm.tokenizer, 3, seed=4)]
    subs = [_sub(p, 12, "ngram", name=f"f{i}")[0] for i, p in enumerate(prompts)]
    seqs = [fallback.prepare(s) for s in subs]
    assert all(s.cache.cache is not None for s in seqs)
    live = list(seqs)
    while live:
        done = fallback.step_batch([StepItem(s, 5, True) for s in live])
        live = [s for s, d in zip(live, done, strict=True) if not d]
    assert [s.completion for s in seqs] == [run(p, speculation="ngram", max_tokens=12, ignore_eos=True).tokens for p in prompts]
