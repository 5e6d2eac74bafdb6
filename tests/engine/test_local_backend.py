"""LocalEngineBackend: the in-process backend the gateway's embedded default uses."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from backends.base import BackendError, BackendRequest
from backends.engine import metrics
from backends.local import bundled_backends


@pytest.fixture(scope="module")
async def backends():
    b = bundled_backends(device="cpu")
    for backend in b.values():
        await backend.start()
    yield b
    for backend in b.values():
        await backend.aclose()


def chat(content: str, **kw) -> dict:
    return {"model": "large", "messages": [{"role": "user", "content": content}], **kw}


def cancelled_count() -> float:
    return sum(
        s.value
        for m in metrics.REQUESTS.collect()
        for s in m.samples
        if s.name.endswith("_total") and s.labels.get("finish_reason") == "cancelled"
    )


async def wait_idle(engine, rounds: int = 400) -> None:
    for _ in range(rounds):
        if engine.running == 0 and engine.waiting == 0:
            return
        await asyncio.sleep(0.025)
    raise AssertionError("engine still busy")


async def test_non_streaming_chat(backends):
    resp = await backends["large"].send(BackendRequest("chat", chat("Return the sum of a and b.", max_tokens=24), False, "r1"))
    body = orjson.loads(resp.body)
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"]["role"] == "assistant"
    assert isinstance(body["choices"][0]["message"]["content"], str)
    assert body["choices"][0]["finish_reason"] in ("stop", "length")
    assert resp.usage == body["usage"] and body["usage"]["completion_tokens"] <= 24
    assert body["speculative"]["drafter"] == "draft"


async def test_streaming_completion_with_usage(backends):
    req = BackendRequest("completions", {"model": "small", "prompt": "def main():\n", "max_tokens": 12, "ignore_eos": True}, True, "r2")
    resp = await backends["small"].send(req)
    chunks = [orjson.loads(c) async for c in resp.events]
    assert all(c["object"] == "text_completion" for c in chunks)
    assert chunks[-2]["choices"][0]["finish_reason"] == "length"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 12
    text = "".join(c["choices"][0]["text"] for c in chunks[:-1])
    assert text


async def test_streaming_chat_shape(backends):
    resp = await backends["large"].send(BackendRequest("chat", chat("Close the file.", max_tokens=10), True, "r3", want_usage=False))
    chunks = [orjson.loads(c) async for c in resp.events]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chunks[-1]["choices"][0]["finish_reason"] in ("stop", "length")
    assert all("usage" not in c for c in chunks)


async def test_bad_input_is_backend_error_400(backends):
    for body in (chat("hi", n=3), chat("x = 1\n" * 2000), chat("hi", stop={"a": 1})):
        with pytest.raises(BackendError) as e:
            await backends["large"].send(BackendRequest("chat", body, False, "r4"))
        assert e.value.status == 400 and e.value.type == "invalid_request_error"


async def test_aclose_stops_generation(backends):
    engine = backends["large"].engine
    before = cancelled_count()
    resp = await backends["large"].send(BackendRequest("chat", chat("Parse the header.", max_tokens=400, ignore_eos=True), True, "r5"))
    first = [await resp.events.__anext__() for _ in range(3)]
    assert first
    await resp.aclose()
    await wait_idle(engine)
    assert cancelled_count() == before + 1


async def test_cancelling_the_consumer_task_stops_generation(backends):
    engine = backends["large"].engine
    before = cancelled_count()
    resp = await backends["large"].send(BackendRequest("chat", chat("Read the data.", max_tokens=400, ignore_eos=True), True, "r6"))
    got_one = asyncio.Event()
    seen = []

    async def consume():
        async for chunk in resp.events:
            seen.append(chunk)
            got_one.set()

    task = asyncio.create_task(consume())
    await got_one.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_idle(engine)
    assert cancelled_count() == before + 1
    assert len(seen) < 400


def test_in_process_engine_schedules_like_engine_serve():
    from backends.engine.scheduler import (
        DEFAULT_MAX_RUNNING,
        ContinuousScheduler,
        StaticBatchScheduler,
        TokenBudgetScheduler,
    )
    from backends.engine.worker import DEFAULT_SPEC_K_UNDER_LOAD, DEFAULT_SPEC_MAX_BATCH
    from backends.local import EngineHost, EngineOptions

    default = EngineHost(EngineOptions.from_env({}))
    assert isinstance(default.engine.scheduler, ContinuousScheduler)
    assert default.engine.scheduler.step_token_budget == 256 and default.engine.scheduler.max_running == DEFAULT_MAX_RUNNING["continuous"] == 32
    assert default.engine.worker.spec_max_batch == DEFAULT_SPEC_MAX_BATCH
    assert default.engine.worker.spec_k_under_load == DEFAULT_SPEC_K_UNDER_LOAD
    fifo = EngineHost(EngineOptions.from_env({"SWITCHYARD_ENGINE_SCHEDULE": "fifo", "SWITCHYARD_ENGINE_MAX_RUNNING": "3",
                                              "SWITCHYARD_ENGINE_SPEC_MAX_BATCH": "-1", "SWITCHYARD_ENGINE_SPEC_K_UNDER_LOAD": "0"}))
    assert isinstance(fifo.engine.scheduler, StaticBatchScheduler) and fifo.engine.scheduler.max_running == 3
    assert fifo.engine.worker.spec_max_batch is None and fifo.engine.worker.spec_k_under_load == 0
    token = EngineHost(EngineOptions(schedule="token", step_token_budget=64, batch_threshold=128))
    assert isinstance(token.engine.scheduler, TokenBudgetScheduler)
    assert (token.engine.scheduler.step_token_budget, token.engine.scheduler.batch_threshold) == (64, 128)
    with pytest.raises(ValueError):
        EngineHost(EngineOptions(schedule="lifo"))


def test_policy_engine_settings_win_over_the_environment():
    from policies.schema import LocalEngine
    from backends.local import EngineOptions

    env = {"SWITCHYARD_ENGINE_SCHEDULE": "fifo", "SWITCHYARD_ENGINE_MAX_RUNNING": "3",
           "SWITCHYARD_ENGINE_STEP_TOKEN_BUDGET": "64"}
    options = EngineOptions.from_env(env, settings=LocalEngine(schedule="token", max_running=16, spec_max_batch=-1))
    # set in the policy: the policy; unset there: the environment; unset in both: the default
    assert (options.schedule, options.max_running, options.spec_max_batch) == ("token", 16, None)
    assert options.step_token_budget == 64 and options.batch_threshold == 256
    with pytest.raises(ValueError, match="SWITCHYARD_ENGINE_MAX_RUNNING"):
        EngineOptions.from_env({"SWITCHYARD_ENGINE_MAX_RUNNING": "many"})


async def test_running_backend_uses_continuous_batching(backends):
    from backends.engine.scheduler import ContinuousScheduler

    engine = backends["large"].engine
    assert isinstance(engine.scheduler, ContinuousScheduler)
    bodies = [chat(f"Tell me about topic {i}.", max_tokens=24, temperature=0, ignore_eos=True) for i in range(4)]
    ticks_before = engine.scheduler.tick
    out = await asyncio.gather(*(backends["large"].send(BackendRequest("chat", b, False, f"cb{i}")) for i, b in enumerate(bodies)))
    assert all(r.body for r in out)
    assert all(r.usage["completion_tokens"] == 24 for r in out)
    shared = [steps for t, steps in engine.scheduler.steps if t >= ticks_before and len(steps) > 1]
    assert shared  # 4 requests of 24+ steps each overlapped: they shared steps (one batched pass each)
