"""Scheduling modes on the real shipped models: greedy outputs, chunked prefill, head-of-line
blocking and starvation, asserted on the scheduler's recorded ticks."""

from __future__ import annotations

import math

import pytest

from backends.engine.scheduler import (
    ContinuousScheduler,
    StaticBatchScheduler,
    TokenBudgetScheduler,
    make_scheduler,
)
from backends.engine.worker import SequenceState
from tests.scheduling.conftest import Req, drive, prompt, single


def make(mode: str, budget: int = 64, max_running: int = 4):
    if mode == "token":
        return TokenBudgetScheduler(max_running, step_token_budget=budget, max_wait=0.0)
    if mode == "continuous":
        return ContinuousScheduler(max_running, step_token_budget=budget)
    return StaticBatchScheduler(max_running)


def first_decode_tick(sched, rid: str) -> int:
    return next(t for t, steps in sched.steps for s in steps if s.request_id == rid and s.kind != "prefill")


@pytest.mark.parametrize("chunk", [1, 17, 64])
@pytest.mark.parametrize("speculation", ["none", "draft"])
def test_chunked_prefill_gives_identical_greedy_output(models, tok, chunk, speculation):
    ids = prompt(tok, 150 if chunk > 1 else 40, seed=chunk)
    whole = single(models, ids, 24, speculation)
    seq = SequenceState(Req(ids, 24, speculation).sub, models["large"])
    fed = []
    while not seq.prefilled:
        fed.append(seq.prefill(chunk))
    assert max(fed) <= chunk and sum(fed) == len(ids) - 1 and seq.cache.length == len(ids) - 1
    from backends.engine.worker import Worker

    w = Worker(models)
    while not w.step(seq):
        pass
    assert seq.completion == whole


@pytest.mark.parametrize("spec_max_batch", [None, 1])
@pytest.mark.parametrize("mode", ["fifo", "token", "continuous"])
def test_every_mode_equals_single_request_greedy(models, tok, mode, spec_max_batch):
    """Mixed lengths, chunked prefills and speculation (draft model, prompt lookup, none) in
    batched steps; with spec_max_batch=1 speculation is also switched off and on as the batch
    changes. Every tick is one batched forward pass of the target."""
    specs = [(12, 10, None), (300, 6, "none"), (40, 16, "ngram"), (8, 20, None), (90, 5, None), (25, 12, "none")]
    reqs = [Req(prompt(tok, n, seed=i), m, s) for i, (n, m, s) in enumerate(specs)]
    expect = [single(models, r.sub.request.prompt_ids, m, s) for r, (_, m, s) in zip(reqs, specs, strict=True)]
    sched = make(mode, budget=64, max_running=3)
    engine = drive(models, sched, {0: reqs[:2], 2: reqs[2:4], 5: reqs[4:]}, spec_max_batch=spec_max_batch)
    assert [r.tokens for r in reqs] == expect
    assert engine.target_passes and all(n == 1 for n in engine.target_passes)
    assert max(len(steps) for _, steps in sched.steps) >= 2  # sequences really shared passes
    if spec_max_batch == 1:
        assert engine.worker.spec_off_steps > 0
    if mode != "fifo":  # every tick stayed within the step token budget
        assert all(sum(s.tokens for s in steps) <= 64 for _, steps in sched.steps)
        assert max(s.tokens for _, steps in sched.steps for s in steps if s.kind != "decode") < 299


@pytest.mark.parametrize("mode", ["token", "continuous"])
def test_long_request_never_delays_short_one_by_more_than_one_step_budget(models, tok, mode):
    budget = 64
    long = Req(prompt(tok, 400, seed=3), 40, name="long")
    short = Req(prompt(tok, 12, seed=4), 4, name="short")
    sched = make(mode, budget=budget)
    drive(models, sched, {0: [long], 3: [short]})
    arrived, first = sched.arrivals["short"], first_decode_tick(sched, "short")
    # the short one prefills and decodes its first token in the tick it arrives at
    assert first == arrived
    others = sum(s.tokens for t, steps in sched.steps if arrived <= t <= first for s in steps if s.request_id != "short")
    assert others <= budget
    # the long prompt was split into chunks no larger than the budget
    chunks = [s.tokens for _, steps in sched.steps for s in steps if s.request_id == "long" and s.kind != "decode"]
    assert len(chunks) >= math.ceil(399 / budget) and max(chunks) <= budget
    assert long.tokens == single(models, long.sub.request.prompt_ids, 40)
    assert short.tokens == single(models, short.sub.request.prompt_ids, 4)


def test_fifo_baseline_shows_head_of_line_blocking(models, tok):
    long = Req(prompt(tok, 400, seed=3), 40, name="long")
    short = Req(prompt(tok, 12, seed=4), 4, name="short")
    sched = make("fifo")
    drive(models, sched, {0: [long], 1: [short]})
    long_ticks = max(t for t, steps in sched.steps for s in steps if s.request_id == "long")
    assert first_decode_tick(sched, "short") > long_ticks  # waited for the whole batch


@pytest.mark.parametrize("mode", ["token", "continuous"])
def test_no_request_starves_under_sustained_load(models, tok, mode):
    budget = 32
    long = Req(prompt(tok, 200, seed=5), 3, name="long")
    shorts = [Req(prompt(tok, 20, seed=10 + i), 2, name=f"s{i}") for i in range(40)]
    arrivals = {0: [shorts[0], long]}
    for i, r in enumerate(shorts[1:], start=1):
        arrivals[i] = [r]  # one new short request every tick, for 40 ticks
    sched = make(mode, budget=budget, max_running=3)
    drive(models, sched, arrivals)
    assert long.done and all(r.done for r in shorts)
    # the oldest prefill always gets a quarter of the budget: bounded progress
    assert first_decode_tick(sched, "long") <= math.ceil(199 / (budget // 4)) + 2
    # admission is in arrival order: first scheduled tick is non-decreasing in arrival order
    first_seen = {}
    for t, steps in sched.steps:
        for s in steps:
            first_seen.setdefault(s.request_id, t)
    order = ["s0", "long"] + [f"s{i}" for i in range(1, 40)]
    ticks = [first_seen[r] for r in order]
    assert ticks == sorted(ticks)


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_token_mode_emits_micro_batches_by_threshold_wait_and_isolates_big_prompts(tok):
    clock = _Clock()
    sched = TokenBudgetScheduler(8, step_token_budget=128, batch_threshold=100, max_wait=0.05, clock=clock)
    a, b, c = (Req(list(range(1, 31)), 10, name=n) for n in "abc")  # 40-token estimates each
    for r in (a, b):
        sched.add(r.sub)
    assert sched.schedule() == [] and sched.wait_timeout() == pytest.approx(0.05)  # 80 < 100: pooling
    sched.add(c.sub)
    assert len(sched.schedule()) == 3 and sched.batches == [["a", "b", "c"]]  # 120 >= 100
    d = Req(list(range(1, 11)), 5, name="d")
    sched.add(d.sub)
    sched.schedule()
    assert sched.batches[-1] == ["a", "b", "c"]
    clock.now = 0.06  # max wait expired
    sched.schedule()
    assert sched.batches[-1] == ["d"]
    big, e = Req(list(range(1, 301)), 5, name="big"), Req(list(range(1, 201)), 5, name="e")
    sched.add(big.sub)
    sched.add(e.sub)
    sched.schedule()
    assert ["big"] in sched.batches and ["e"] in sched.batches  # each over the step budget: alone


def test_make_scheduler_modes():
    assert isinstance(make_scheduler("fifo"), StaticBatchScheduler)
    assert isinstance(make_scheduler("token"), TokenBudgetScheduler)
    assert isinstance(make_scheduler("continuous", step_token_budget=64), ContinuousScheduler)
    with pytest.raises(ValueError):
        make_scheduler("lifo")


@pytest.mark.parametrize("room", ["fits", "over_budget", "no_slot"])
def test_request_arriving_while_a_step_drafts_joins_that_step(models, tok, monkeypatch, room):
    """A request that arrives during the draft passes rides in the same step's target pass (its
    first token one step sooner) when a slot is free and its prompt fits what the plan left of
    the budget; otherwise it waits for the next tick. Outputs stay the single-request greedy ones."""
    from backends.engine import metrics
    from backends.engine import worker as worker_mod

    budget = 64 if room != "over_budget" else 16  # over budget: 1 decode + 20 > 16
    long = Req(prompt(tok, 30, seed=6), 24, speculation="draft", name="long")
    late = Req(prompt(tok, 20, seed=7), 5, name="late")
    sched = make("continuous", budget=budget, max_running=1 if room == "no_slot" else 4)
    real = worker_mod.propose_batch
    arrived_at, engines = [], []

    def drafting(work):
        if not arrived_at and sched.tick >= 3:  # arrives while tick 2 drafts
            arrived_at.append(sched.tick - 1)
            engines[0]._inbox.append(late.sub)  # what Engine.submit does from the event loop
        return real(work)

    monkeypatch.setattr(worker_mod, "propose_batch", drafting)
    joins = metrics.LATE_JOINS._value.get()
    engine = drive(models, sched, {0: [long]}, engines=engines)
    assert arrived_at, "no step drafted"
    tick = arrived_at[0]
    in_tick = {s.request_id: s for s in dict(sched.steps)[tick]}
    if room == "fits":
        assert in_tick["late"].kind == "prefill+decode" and in_tick["late"].tokens == 20  # 19 + first round
        assert in_tick["long"].kind == "decode"  # the step it joined was a drafting decode step
        assert sched.arrivals["late"] == tick == first_decode_tick(sched, "late")
        assert metrics.LATE_JOINS._value.get() == joins + 1
        assert engine.target_passes[tick] == 1  # still one target pass for the step
    else:
        assert "late" not in in_tick and first_decode_tick(sched, "late") > tick
        assert metrics.LATE_JOINS._value.get() == joins
    assert long.tokens == single(models, long.sub.request.prompt_ids, 24, "draft")
    assert late.tokens == single(models, late.sub.request.prompt_ids, 5)
