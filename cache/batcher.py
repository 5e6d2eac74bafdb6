"""Micro-batching: many concurrent `await submit(text)` calls become few batched model calls.

The model runs in one dedicated executor thread, never on the event loop. An isolated request is
dispatched at once (no added latency at low load); requests that arrive while a batch is running queue
up and go together in the next batch. When the previous batch held more than one request (there is
concurrency), the next batch lingers up to `max_wait_s` for company before it starts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from cache.stopping import stop_task

BatchFn = Callable[[Sequence[str]], np.ndarray]


class MicroBatcher:
    def __init__(self, fn: BatchFn, *, max_batch: int = 32, max_wait_s: float = 0.002,
                 executor: ThreadPoolExecutor | None = None) -> None:
        self._fn = fn
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self._executor = executor or ThreadPoolExecutor(max_workers=1, thread_name_prefix="encoder")
        self._own_executor = executor is None
        self._queue: asyncio.Queue[tuple[str, asyncio.Future]] | None = None
        self._worker: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._last_batch_size = 0
        self._running = False  # a batch is with the executor
        self._waiting = 0  # callers of submit not answered yet
        self.batches = 0  # model calls made, for tests and metrics
        self.items = 0

    @property
    def idle(self) -> bool:
        """No batch running and none waiting: a call made now would start at once, alone."""
        return not self._running and not self._waiting

    async def run_alone(self, text: str, fn: BatchFn) -> np.ndarray:
        """Encode `text` with `fn` on the batcher's thread, as a batch of one that skips the queue (see
        `Encoder.embed`); a batch started meanwhile waits for it on the one thread."""
        self._waiting += 1
        try:
            vectors = await asyncio.get_running_loop().run_in_executor(self._executor, fn, [text])
        finally:
            self._waiting -= 1
        if len(vectors) != 1:
            raise RuntimeError(f"the encoder returned {len(vectors)} vectors for 1 text")
        self.batches += 1
        self.items += 1
        return vectors[0].copy()

    async def submit(self, text: str) -> np.ndarray:
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._worker is None or self._worker.done():
            self._start(loop)
        future: asyncio.Future = loop.create_future()
        assert self._queue is not None
        self._queue.put_nowait((text, future))
        self._waiting += 1
        try:
            return await future
        finally:
            self._waiting -= 1

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        # A batcher is bound to the loop of its first caller; a new loop (tests) gets a new worker.
        self._loop = loop
        self._queue = asyncio.Queue()
        self._worker = loop.create_task(self._run(), name="encoder-microbatcher")

    async def _run(self) -> None:
        assert self._queue is not None
        queue = self._queue
        loop = asyncio.get_running_loop()
        batch: list[tuple[str, asyncio.Future]] = []  # being gathered
        live: list[tuple[str, asyncio.Future]] = []  # being encoded
        try:
            while True:
                batch = [await queue.get()]
                if self._last_batch_size > 1 and self.max_wait_s > 0:
                    deadline = loop.time() + self.max_wait_s
                    while len(batch) < self.max_batch:
                        remaining = deadline - loop.time()
                        if remaining <= 0:
                            break
                        try:
                            async with asyncio.timeout(remaining):
                                batch.append(await queue.get())
                        except TimeoutError:
                            break
                while len(batch) < self.max_batch and not queue.empty():
                    batch.append(queue.get_nowait())
                live = [(text, fut) for text, fut in batch if not fut.cancelled()]
                self._last_batch_size = len(live)
                if not live:
                    continue
                self._running = True
                try:
                    vectors = await loop.run_in_executor(self._executor, self._fn, [text for text, _ in live])
                    if len(vectors) != len(live):
                        raise RuntimeError(f"the encoder returned {len(vectors)} vectors for {len(live)} texts")
                except Exception as exc:  # the model failed: every waiter gets the error, the worker lives on
                    _fail(live, exc)
                    live = []
                    continue
                finally:
                    self._running = False
                self.batches += 1
                self.items += len(live)
                for row, (_, fut) in enumerate(live):
                    if not fut.done():
                        fut.set_result(vectors[row].copy())  # not a view: it would keep the whole batch alive
                live = []
        finally:  # stopped (aclose) or broken: no caller may wait for ever
            stopped = RuntimeError("the encoder's batcher stopped")
            _fail(batch, stopped)  # _fail skips the waiters already answered
            _fail(live, stopped)
            while not queue.empty():
                _fail([queue.get_nowait()], stopped)

    async def aclose(self) -> None:
        if self._worker is not None:
            if self._loop is asyncio.get_running_loop():
                await stop_task(self._worker)
            else:  # a worker of a loop that is gone (tests): nothing can await it here
                self._worker.cancel()
            self._worker = None
        if self._own_executor:
            self._executor.shutdown(wait=False)


def _fail(waiters: Sequence[tuple[str, asyncio.Future]], exc: BaseException) -> None:
    for _, fut in waiters:
        if not fut.done():
            fut.set_exception(exc)
