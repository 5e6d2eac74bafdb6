"""The engine core: a loop in one worker thread that asks the scheduler what to run and has the
worker run it, one batched step per scheduler tick. The asyncio side only submits requests and reads their events; model work never
touches the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator

from backends.engine import metrics
from backends.engine.request import Event, Failed, Finished, GenerationRequest, Submission
from backends.engine.runner import reserve
from backends.engine.scheduler import Scheduler, make_scheduler
from backends.engine.worker import SequenceState, ServedModel, StepItem, Worker

log = logging.getLogger("switchyard.engine")


class RequestHandle:
    """The asyncio side of one request: an async iterator of its events, and `cancel()`."""

    def __init__(self, engine: Engine, request: GenerationRequest, loop: asyncio.AbstractEventLoop) -> None:
        self.request = request
        self._engine = engine
        self._loop = loop
        self._queue: asyncio.Queue[Event] = asyncio.Queue()
        self.submission = Submission(request=request, emit=self._emit_threadsafe)
        self.done = False

    def _emit_threadsafe(self, event: Event) -> None:
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, event)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            self.submission.cancelled.set()

    async def next_event(self) -> Event:
        event = await self._queue.get()
        if isinstance(event, (Finished, Failed)):
            self.done = True
        return event

    async def __aiter__(self) -> AsyncIterator[Event]:
        while not self.done:
            yield await self.next_event()

    def cancel(self) -> None:
        """Stop generating (client gone). Safe to call twice or after the end."""
        if not self.done:
            self.submission.cancelled.set()
            self._engine.wake()


class Engine:
    def __init__(self, models: dict[str, ServedModel], scheduler: Scheduler | None = None,
                 spec_max_batch: int | None = None, spec_k_under_load: int = 0) -> None:
        self.models = models
        self.worker = Worker(models, spec_max_batch=spec_max_batch, spec_k_under_load=spec_k_under_load)
        self.scheduler = scheduler or make_scheduler("continuous")
        self._inbox: list[Submission] = []
        self._cv = threading.Condition()
        self._stop = False
        self._thread: threading.Thread | None = None
        self._submitted_at: dict[int, float] = {}
        self._reported = (0, 0)  # (waiting, running) last added to the process-wide gauges

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self.reserve_kv()
        with self._cv:
            if self._thread is None or not self._thread.is_alive():
                self._stop = False
                self._thread = threading.Thread(target=self._loop, name="switchyard-engine", daemon=True)
                self._thread.start()

    def reserve_kv(self) -> None:
        """Size every served model's KV store for the scheduler's `max_running` sequences now, so a
        store never grows (a copy of the whole store) inside a step someone is waiting on. One slot
        per running sequence per model suffices: a sequence uses each model at most once."""
        slots = getattr(self.scheduler, "max_running", 0)
        for lm in {id(m): m for s in self.models.values() for m in (s.target, s.draft) if m is not None}.values():
            reserved = reserve(lm, slots)
            if reserved is None:
                continue
            store, grew = reserved
            metrics.KV_SLOTS.labels(lm.path.name).set(store.slots)
            if grew:  # start() runs on every acquire: log only the growth
                log.info("KV store for %s: %d slots, %.0f MiB", lm.path.name, store.slots, store.bytes / 2**20)

    def shutdown(self, timeout: float = 10.0) -> None:
        with self._cv:
            self._stop = True
            self._cv.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self._report(0, 0)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ------------------------------------------------------------ asyncio side

    def submit(self, request: GenerationRequest) -> RequestHandle:
        if request.model not in self.models:
            raise KeyError(request.model)
        if not self.alive:
            raise RuntimeError("engine is not running")
        handle = RequestHandle(self, request, asyncio.get_running_loop())
        with self._cv:
            self._submitted_at[id(handle.submission)] = time.perf_counter()
            self._inbox.append(handle.submission)
            self._cv.notify_all()
        return handle

    def wake(self) -> None:
        with self._cv:
            self._cv.notify_all()

    @property
    def waiting(self) -> int:
        return self.scheduler.waiting + len(self._inbox)

    @property
    def running(self) -> int:
        return self.scheduler.running

    def outstanding(self) -> int:
        return self.waiting + self.running

    # ------------------------------------------------------------ worker thread

    def _loop(self) -> None:
        # schedule() is asked once per tick: schedulers may count ticks and record their plans.
        while True:
            with self._cv:
                self._take_inbox()
                if self._stop:
                    break
            for sub in self.scheduler.drop_cancelled():
                self._close(sub, None, "cancelled")
            plan = self.scheduler.schedule()
            if not plan:
                self._report(self.scheduler.waiting, self.scheduler.running)
                timeout = getattr(self.scheduler, "wait_timeout", None)
                with self._cv:
                    if not self._inbox and not self._stop:
                        self._cv.wait(timeout() if timeout is not None else None)
                continue
            self.run_step(plan)
            self._report(self.scheduler.waiting, self.scheduler.running)
        self._abort_all()

    def _take_inbox(self) -> None:
        """Hand what the event loop submitted to the scheduler (caller holds `_cv`)."""
        for sub in self._inbox:
            self.scheduler.add(sub)
        self._inbox.clear()

    def run_step(self, plan: list[Submission | SequenceState]) -> None:
        """Run one scheduler tick: every planned item in one batched worker step (plus whatever the
        scheduler lets join it while it drafts)."""
        items = self._step_items(plan)
        if not items:
            return
        before = [(len(it.seq.completion), not it.seq.prefilled) for it in items]
        kind = "prefill" if any(prefill for _, prefill in before) else "decode"
        join = self._late_join if hasattr(self.scheduler, "late_join") else None
        started = time.perf_counter()
        try:
            dones = self.worker.step_batch(items, join)
        except Exception as e:  # noqa: BLE001 - a failed step fails its sequences, not the engine
            log.exception("engine step failed for requests %s", [it.seq.sub.request.request_id for it in items])
            for it in items:
                it.seq.sub.emit(Failed(message=f"generation failed: {type(e).__name__}"))
                self._close(it.seq, it.seq, "error", emit=False)
            return
        if len(items) > len(before):  # joined while drafting: fresh sequences
            kind = "prefill"
            before += [(0, True)] * (len(items) - len(before))
        metrics.STEP_SECONDS.labels(kind).observe(time.perf_counter() - started)
        metrics.STEP_ROWS.observe(len(items))
        for it, (n_before, was_prefill), done in zip(items, before, dones, strict=True):
            seq, sub = it.seq, it.seq.sub
            model = self._label(sub)
            if was_prefill and seq.prefilled:
                metrics.PROMPT_TOKENS.labels(model).inc(seq.prompt_len)
            new = len(seq.completion) - n_before
            if new:
                metrics.GENERATION_TOKENS.labels(model).inc(new)
                started = self._submitted_at.pop(id(sub), None)
                if started is not None:
                    metrics.TTFT.labels(model).observe(time.perf_counter() - started)
            if done:
                self._close(seq, seq, seq.finished or "stop", emit=False)

    def _step_items(self, plan: list[Submission | SequenceState]) -> list[StepItem]:
        """Planned items -> worker step items: new requests are prepared (a failure fails that
        request only), cancelled ones closed."""
        items: list[StepItem] = []
        chunk = getattr(self.scheduler, "prefill_chunk", None)
        after = getattr(self.scheduler, "decode_after_prefill", None)
        for item in plan:
            sub = item if isinstance(item, Submission) else item.sub
            seq = item if isinstance(item, SequenceState) else None
            if sub.cancelled.is_set():
                self._close(item, seq, "cancelled")
                continue
            if seq is None:
                try:
                    seq = self.worker.prepare(sub)
                except Exception as e:  # noqa: BLE001 - one bad request must not kill the engine
                    log.exception("engine could not start request %s", sub.request.request_id)
                    sub.emit(Failed(message=f"generation failed: {type(e).__name__}"))
                    self._close(item, None, "error", emit=False)
                    continue
                self.scheduler.started(sub, seq)
            items.append(StepItem(seq, chunk(sub) if chunk is not None else None,
                                  bool(after(sub)) if after is not None else False))
        return items

    def _late_join(self) -> list[StepItem]:
        """Called by the worker once a step's drafting is done: requests that arrived meanwhile and
        that the scheduler lets join the step in flight (continuous mode)."""
        with self._cv:
            self._take_inbox()
        items = self._step_items(self.scheduler.late_join())
        metrics.LATE_JOINS.inc(len(items))
        return items

    def _close(self, item, seq: SequenceState | None, reason: str, emit: bool = True) -> None:
        sub = item if isinstance(item, Submission) else item.sub
        self.scheduler.finish(item)
        self._submitted_at.pop(id(sub), None)
        model = self._label(sub)
        metrics.REQUESTS.labels(model, reason).inc()
        if seq is not None:
            seq.close()
            stats = seq.stats
            metrics.TARGET_PASSES.labels(model).inc(stats.target_passes)
            if stats.proposed:
                metrics.SPEC_PROPOSED.labels(model, stats.drafter).inc(stats.proposed)
                metrics.SPEC_ACCEPTED.labels(model, stats.drafter).inc(stats.accepted)
                metrics.ACCEPTANCE.labels(model, stats.drafter).set(stats.acceptance_rate or 0.0)
            elapsed = time.perf_counter() - seq.decode_started if seq.decode_started else 0.0
            if elapsed > 0 and seq.completion:
                metrics.TOKENS_PER_SECOND.labels(model).set(len(seq.completion) / elapsed)
        if emit:
            if seq is not None:
                sub.emit(Worker.finished_event(seq, reason))
            else:
                n_prompt = len(sub.request.prompt_ids)
                sub.emit(Finished(reason, n_prompt, 0, {}, 0.0))  # type: ignore[arg-type]

    def _label(self, sub: Submission) -> str:
        served = self.models.get(sub.request.model)
        return served.label if served is not None else sub.request.model

    def _abort_all(self) -> None:
        for item in [*self._inbox, *self.scheduler.drain()]:
            sub = item if isinstance(item, Submission) else item.sub
            sub.emit(Failed(message="engine shut down"))
        self._inbox.clear()

    def _report(self, waiting: int, running: int) -> None:
        """Move the process-wide gauges by this engine's change (several engines may share them)."""
        last_w, last_r = self._reported
        metrics.QUEUE_DEPTH.inc(waiting - last_w)
        metrics.RUNNING.inc(running - last_r)
        self._reported = (waiting, running)
