"""Real shipped models; the engine's loop is driven tick by tick in the test thread so tests assert
on the scheduler's recorded plans (tick indices), never on the wall clock."""

from __future__ import annotations

import itertools

import pytest
import torch

from backends.engine import Engine, GenerationRequest, SamplingParams, Submission, build_engine
from backends.engine.request import Delta, Finished, Started
from backends.models import bundled_models

torch.set_num_threads(1)
_ids = itertools.count()


@pytest.fixture(scope="session")
def models():
    shipped = bundled_models()
    return build_engine(shipped["target"], shipped["draft"], name="large", device="cpu").models


@pytest.fixture(scope="session")
def tok(models):
    return models["large"].target.tokenizer


class Req:
    """One request and what it emitted."""

    def __init__(self, prompt_ids: list[int], max_tokens: int = 8, speculation: str | None = None, name: str = "") -> None:
        self.events: list = []
        rid = name or f"r{next(_ids)}"
        params = SamplingParams(max_tokens=max_tokens, temperature=0.0, ignore_eos=True)
        self.sub = Submission(GenerationRequest(rid, "large", list(prompt_ids), params, speculation=speculation), emit=self.events.append)

    @property
    def id(self) -> str:
        return self.sub.request.request_id

    @property
    def tokens(self) -> list[int]:
        return [t for e in self.events if isinstance(e, Delta) for t in e.token_ids]

    @property
    def done(self) -> bool:
        return any(isinstance(e, Finished) for e in self.events)

    @property
    def started(self) -> bool:
        return any(isinstance(e, Started) for e in self.events)


def drive(models, scheduler, arrivals: dict[int, list[Req]], max_ticks: int = 5000, spec_max_batch=None,
          engines: list[Engine] | None = None) -> Engine:
    """Run the engine's loop by hand: requests in `arrivals[t]` are added just before tick t; each
    tick is one batched worker step (`Engine.run_step`), as in the engine thread. The engine is
    appended to `engines` before the first tick (for hooks that submit mid-step)."""
    from backends.engine import runner

    engine = Engine(models, scheduler, spec_max_batch=spec_max_batch)
    if engines is not None:
        engines.append(engine)
    engine.target_passes = []  # target forward passes per tick (one batched pass expected)
    target = runner._batched(models["large"].target)
    real = runner.BatchedGPT2.forward

    def counting(self, *a, **kw):
        if self is target:
            engine.target_passes[-1] += 1
        return real(self, *a, **kw)

    runner.BatchedGPT2.forward = counting
    try:
        return _drive(engine, scheduler, arrivals, max_ticks)
    finally:
        runner.BatchedGPT2.forward = real


def _drive(engine, scheduler, arrivals, max_ticks):
    pending = dict(arrivals)
    reqs = [r for rs in arrivals.values() for r in rs]
    for _ in range(max_ticks):
        for r in pending.pop(scheduler.tick, []):
            scheduler.add(r.sub)
        engine._take_inbox()  # submitted mid-step and not joined: queued as the engine loop does
        plan = scheduler.schedule()
        if not plan:
            if not pending and all(r.done for r in reqs):
                return engine
            if pending:  # idle ticks: advance the arrival clock by skipping to the next arrival
                nxt = min(pending)
                for r in pending.pop(nxt):
                    scheduler.add(r.sub)
            continue
        engine.target_passes.append(0)
        engine.run_step(plan)
    raise AssertionError("requests did not finish")


def single(models, prompt_ids, max_tokens, speculation=None) -> list[int]:
    seq = Engine(models).worker.run(Req(prompt_ids, max_tokens, speculation).sub)
    return seq.completion


def prompt(tok, n: int, seed: int = 0) -> list[int]:
    """A prompt of exactly n tokens from real text."""
    import inspect
    import json

    text = inspect.getsource(json) * 4
    ids = tok.encode(text)
    start = (seed * 997) % (len(ids) - n - 1)
    return ids[start : start + n]
