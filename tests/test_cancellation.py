"""Background loops (the cache's Redis sync and housekeeping, the encoder's micro-batcher, health checks)
are stopped by cancelling them, so a stop must never be lost (cache/stopping.py).

On Python 3.11, `asyncio.wait_for` swallows a cancellation that lands just as the awaited call returns:
the caller gets the result and runs on. A `while True` loop cancelled at that moment never ends and
whoever awaits it on shutdown hangs (a CI run hung 300 s in a cache test's teardown this way). Our code
uses `asyncio.timeout`, which keeps the cancellation (the first two tests place it in that window
deterministically); a library may still swallow one (redis-py uses `wait_for`), so the service's stop
must end its loops all the same (the third). All three failed on the code before; each fails, rather
than hangs, should the bug come back.
"""

from __future__ import annotations

import asyncio
import pathlib

import numpy as np
import pytest

from cache.batcher import MicroBatcher
from cache.guard import Verdict
from cache.service import CacheService
from cache.stopping import stop_task
from cache.stores.redis import RedisStore

ROOT = pathlib.Path(__file__).resolve().parents[1]
PRODUCT = ("gateway", "cache", "backends", "classifiers", "policies", "bench")


def cancel_after_the_result_is_delivered(task: asyncio.Task) -> None:
    """Cancel `task` two loop turns from now: after an awaited call that was just given its result has
    returned (turn one), before the task that awaits it resumes. That is the window `wait_for` loses."""
    loop = asyncio.get_running_loop()
    loop.call_soon(loop.call_soon, task.cancel)


async def test_a_loop_of_redis_calls_stops_when_the_cancel_lands_as_a_call_returns(redis_server):
    svc = CacheService(RedisStore(redis_server.url, op_timeout=5.0), None, verifier=lambda q, c: Verdict(True))
    await svc.start()
    try:
        loop = asyncio.get_running_loop()
        answers: list[asyncio.Future] = []

        async def redis_call():
            answers.append(loop.create_future())
            return await answers[-1]

        async def sync_loop():  # the shape of the housekeeper and the Redis supervisor
            while True:
                await svc.storage._run("get", redis_call(), None)

        looping = asyncio.create_task(sync_loop())
        for _ in range(5):
            await asyncio.sleep(0)
        assert len(answers) == 1
        answers[0].set_result(b"value")
        cancel_after_the_result_is_delivered(looping)
        await asyncio.wait({looping}, timeout=5)
        assert looping.done() and looping.cancelled()
    finally:
        await stop_task(looping)  # should the bug come back: the loop must not outlive the test
        async with asyncio.timeout(30):
            await svc.aclose()


async def test_the_micro_batcher_stops_when_cancelled_while_gathering_a_batch():
    batcher = MicroBatcher(lambda texts: np.zeros((len(texts), 384), np.float32), max_wait_s=30.0)
    await asyncio.gather(batcher.submit("a"), batcher.submit("b"))  # a batch of two: the next one lingers
    first = asyncio.create_task(batcher.submit("c"))
    for _ in range(5):  # the worker takes "c" and waits up to 30 s for company
        await asyncio.sleep(0)
    assert not first.done()
    worker = batcher._worker
    assert worker is not None
    late = asyncio.get_running_loop().create_future()
    batcher._queue.put_nowait(("d", late))  # the company arrives...
    cancel_after_the_result_is_delivered(worker)  # ...and the stop lands as the worker receives it
    await asyncio.wait({worker}, timeout=5)
    assert worker.done() and worker.cancelled()
    async with asyncio.timeout(5):
        with pytest.raises(RuntimeError, match="stopped"):  # nobody is left waiting for ever
            await first
        with pytest.raises(RuntimeError, match="stopped"):
            await late
    await batcher.aclose()


async def test_the_cache_stops_even_when_a_library_swallows_the_cancellation(redis_server):
    svc = CacheService(RedisStore(redis_server.url, op_timeout=5.0), None, verifier=lambda q, c: Verdict(True),
                       sweep_interval=0.0)
    sweeping, swallowing = asyncio.Event(), [True]

    async def sweep_that_swallows_a_cancel():  # what redis-py's wait_for does when the reply is in
        sweeping.set()
        try:
            await asyncio.sleep(0.2)
        except asyncio.CancelledError:
            if not swallowing[0]:
                raise

    svc.sweep_expired = sweep_that_swallows_a_cancel
    await svc.start()
    async with asyncio.timeout(10):
        await sweeping.wait()  # the housekeeper is inside a sweep
    closing = asyncio.create_task(svc.aclose())
    try:
        await asyncio.wait({closing}, timeout=10)
        assert closing.done() and svc._housekeeper.done()
    finally:  # should the bug come back: nothing may outlive the test
        swallowing[0] = False
        await stop_task(svc._housekeeper)
        await closing


def test_no_product_code_uses_asyncio_wait_for():
    """`asyncio.wait_for` loses cancellations on Python 3.11 (see above); use `asyncio.timeout`."""
    offenders = [f"{path.relative_to(ROOT)}:{n}" for folder in PRODUCT for path in (ROOT / folder).rglob("*.py")
                 for n, line in enumerate(path.read_text().splitlines(), 1) if "asyncio.wait_for(" in line]
    assert offenders == []
