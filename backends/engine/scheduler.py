"""The scheduler decides which sequences get the next step; it runs no model code.

Shaped after vLLM v1's scheduler/worker split. `FifoScheduler` (kept for callers that build an
`Engine` with it; the engines use `make_scheduler`) admits requests in arrival order, up to `max_running` at once, and gives each running sequence one
step per tick in turn. The scheduling modes below (`make_scheduler`: `fifo`, `token`,
`continuous`; docs/scheduling.md) add static batches, token-budget micro-batches, step token
budgets and chunked prefill, and record every planned step for tests and tools.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Protocol

from backends.engine.request import Submission
from backends.engine.worker import SequenceState


def _take_cancelled(waiting: deque[Submission]) -> list[Submission]:
    """Remove and return the waiting submissions whose client has gone away."""
    gone = [s for s in waiting if s.cancelled.is_set()]
    for s in gone:
        waiting.remove(s)
    return gone


class Scheduler(Protocol):
    def add(self, sub: Submission) -> None: ...

    def schedule(self) -> list[Submission | SequenceState]:
        """What to step next: a Submission not yet started (the engine prepares it) or a running
        sequence. Empty when there is nothing to do."""

    def started(self, sub: Submission, seq: SequenceState) -> None: ...

    def finish(self, item: Submission | SequenceState) -> None: ...

    def drop_cancelled(self) -> list[Submission]: ...

    def drain(self) -> list[Submission | SequenceState]:
        """Everything still held, removed (engine shutdown)."""

    @property
    def waiting(self) -> int: ...

    @property
    def running(self) -> int: ...


class FifoScheduler:
    def __init__(self, max_running: int = 4) -> None:
        self.max_running = max_running
        self._waiting: deque[Submission] = deque()
        self._running: list[SequenceState] = []
        self._admitted: list[Submission] = []  # admitted, first step (prepare + prefill) pending

    def add(self, sub: Submission) -> None:
        self._waiting.append(sub)

    def schedule(self) -> list[Submission | SequenceState]:
        while self._waiting and len(self._running) + len(self._admitted) < self.max_running:
            self._admitted.append(self._waiting.popleft())
        return [*self._admitted, *self._running]

    def started(self, sub: Submission, seq: SequenceState) -> None:
        self._admitted.remove(sub)
        self._running.append(seq)

    def finish(self, item: Submission | SequenceState) -> None:
        for pool in (self._running, self._admitted, self._waiting):
            if item in pool:
                pool.remove(item)
                return

    def drop_cancelled(self) -> list[Submission]:
        """Waiting requests whose client went away never start."""
        return _take_cancelled(self._waiting)

    def drain(self) -> list[Submission | SequenceState]:
        items = [*self._running, *self._admitted, *self._waiting]
        self._running, self._admitted = [], []
        self._waiting.clear()
        return items

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    @property
    def running(self) -> int:
        return len(self._running) + len(self._admitted)


# ---------------------------------------------------------------------------------------------
# Scheduling modes: fifo (static batches), token (token-budget micro-batches), continuous.
#
# One tick = one batched engine step: every planned sequence advances once, all of them in ONE
# forward pass of the target (Worker.step_batch, runner.BatchedGPT2). What the modes change is *who*
# runs in a tick and *how many prompt tokens* a prefilling sequence may feed in it, which decides
# head-of-line blocking and how full each batched pass is.

SCHEDULE_MODES = ("fifo", "token", "continuous")


@dataclass(slots=True)
class PlannedStep:
    request_id: str
    kind: str  # "prefill", "prefill+decode" (last chunk, then the first round) or "decode"
    tokens: int  # prompt tokens fed, plus 1 for a decode round (whatever it accepts)


class _ModeScheduler:
    """Shared bookkeeping: waiting queue, running set, per-tick plan and a record of past plans
    (tick index, what ran) that tests and tools read instead of the wall clock."""

    mode = ""

    def __init__(self, max_running: int, step_token_budget: int | None, history: int = 100_000) -> None:
        if max_running < 1:
            raise ValueError("max_running must be >= 1")
        if step_token_budget is not None and step_token_budget < 4:
            raise ValueError("step_token_budget must be >= 4")
        self.max_running = max_running
        self.step_token_budget = step_token_budget
        self.tick = 0
        self.steps: deque[tuple[int, list[PlannedStep]]] = deque(maxlen=history)
        self.arrivals: dict[str, int] = {}
        self._waiting: deque[Submission] = deque()
        self._running: list[Submission] = []  # admission order
        self._seq: dict[Submission, SequenceState] = {}
        self._chunks: dict[Submission, int | None] = {}
        self._kinds: dict[Submission, str] = {}

    # -- protocol
    def add(self, sub: Submission) -> None:
        self._waiting.append(sub)
        self.arrivals[sub.request.request_id] = self.tick

    def started(self, sub: Submission, seq: SequenceState) -> None:
        self._seq[sub] = seq

    def finish(self, item: Submission | SequenceState) -> None:
        sub = item if isinstance(item, Submission) else item.sub
        if sub in self._running:
            self._running.remove(sub)
        elif sub in self._waiting:
            self._waiting.remove(sub)
        self._seq.pop(sub, None)
        self._chunks.pop(sub, None)
        self._kinds.pop(sub, None)
        self._on_finish(sub)

    def _on_finish(self, sub: Submission) -> None:
        pass

    def drop_cancelled(self) -> list[Submission]:
        """Waiting requests whose client went away never start."""
        return _take_cancelled(self._waiting)

    def drain(self) -> list[Submission | SequenceState]:
        items = [self._seq.get(s, s) for s in self._running] + list(self._waiting)
        self._running, self._seq, self._chunks, self._kinds = [], {}, {}, {}
        self._waiting.clear()
        return items

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    @property
    def running(self) -> int:
        return len(self._running)

    @property
    def budget(self) -> int:
        """Tokens one step may process (the step token budget; 256 when the mode sets none)."""
        return self.step_token_budget or 256

    def prefill_chunk(self, sub: Submission) -> int | None:
        """Prompt tokens `sub` may feed in the current tick (None: all of them)."""
        return self._chunks.get(sub)

    def decode_after_prefill(self, sub: Submission) -> bool:
        """Whether `sub`'s first decode round runs in the step that finishes its prefill (one tick
        less to the first token; planned, and counted in the budget, as "prefill+decode")."""
        return self._kinds.get(sub) == "prefill+decode"

    # -- helpers
    def remaining_prefill(self, sub: Submission) -> int:
        seq = self._seq.get(sub)
        if seq is not None:
            return seq.prefill_remaining
        return max(0, len(sub.request.prompt_ids) - 1)

    def _item(self, sub: Submission) -> Submission | SequenceState:
        return self._seq.get(sub, sub)

    def _admit(self) -> None:
        raise NotImplementedError

    def _plan(self) -> list[tuple[Submission, str, int | None]]:
        raise NotImplementedError

    def schedule(self) -> list[Submission | SequenceState]:
        self._admit()
        plan = self._plan()
        if not plan:
            return []
        self._chunks = {sub: chunk for sub, _, chunk in plan}
        self._kinds = {sub: kind for sub, kind, _ in plan}
        record = []
        for sub, kind, chunk in plan:
            n = self.remaining_prefill(sub) if chunk is None else chunk
            n = {"prefill": n, "prefill+decode": n + 1}.get(kind, 1)
            record.append(PlannedStep(sub.request.request_id, kind, n))
        self.steps.append((self.tick, record))
        self.tick += 1
        return [self._item(sub) for sub, _, _ in plan]

    def _budgeted_plan(self) -> list[tuple[Submission, str, int | None]]:
        """Decodes are counted first (one token of budget each), prefill chunks fill what is left:
        shortest remaining prompt first so short requests finish prefill in one tick, while the
        oldest prefilling sequence always gets a quarter of the budget so it cannot starve."""
        budget = self.budget
        decodes = [s for s in self._running if s in self._seq and self._seq[s].prefilled]
        prefills = [s for s in self._running if s not in decodes]
        plan: list[tuple[Submission, str, int | None]] = []
        left = max(0, budget - len(decodes))
        reserved: dict[Submission, int] = {}
        if prefills:
            oldest = prefills[0]
            reserved[oldest] = min(self.remaining_prefill(oldest), max(1, budget // 4))
            left -= reserved[oldest]
        for s in sorted(prefills, key=self.remaining_prefill):
            need = self.remaining_prefill(s)
            if s in reserved:
                extra = min(need - reserved[s], max(0, left))
                chunk = reserved[s] + extra
            else:
                extra = chunk = min(need, max(0, left))
                if chunk == 0 and need > 0:
                    continue  # budget spent; next tick
            left -= extra
            if chunk >= need and left > 0:  # prefill completes: its first round fits too
                left -= 1
                plan.append((s, "prefill+decode", chunk))
            else:
                plan.append((s, "prefill", chunk))
        # prefills run first in the step: a new request's first token does not wait for every
        # running sequence's decode round (its cost to the decodes is one chunk, within budget)
        return plan + [(s, "decode", None) for s in decodes]


class StaticBatchScheduler(_ModeScheduler):
    """`fifo`: take up to `max_running` requests in arrival order as one batch and run that batch
    to completion (each member prefills whole, then one decode round per tick) before the next
    batch starts. The static-batching baseline: a long member holds everyone behind it."""

    mode = "fifo"

    def __init__(self, max_running: int = 4) -> None:
        super().__init__(max_running, None)

    def _admit(self) -> None:
        if not self._running:
            while self._waiting and len(self._running) < self.max_running:
                self._running.append(self._waiting.popleft())

    def _plan(self):
        return [(s, "decode" if s in self._seq and self._seq[s].prefilled else "prefill+decode", None) for s in self._running]


class ContinuousScheduler(_ModeScheduler):
    """`continuous`: iteration-level scheduling. A request joins the running set at the next tick
    (arrival order, up to `max_running`), leaves as soon as it finishes; each tick runs every
    decoding sequence once and fills the rest of `step_token_budget` with prefill chunks."""

    mode = "continuous"

    def __init__(self, max_running: int = 8, step_token_budget: int = 256) -> None:
        super().__init__(max_running, step_token_budget)

    def _admit(self) -> None:
        while self._waiting and len(self._running) < self.max_running:
            self._running.append(self._waiting.popleft())

    def _plan(self):
        return self._budgeted_plan()

    def late_join(self) -> list[Submission]:
        """Requests that may join the tick in flight (asked once its drafting is done): in arrival
        order, while a slot is free and the whole prompt plus the first round fits in what the
        tick's plan left of the step budget. Each is recorded in that tick as "prefill+decode",
        with the tick as its arrival (it arrived while the tick ran)."""
        if not self.steps:
            return []
        tick, record = self.steps[-1]
        left = self.budget - sum(p.tokens for p in record)
        joined: list[Submission] = []
        while self._waiting and len(self._running) < self.max_running:
            sub = self._waiting[0]
            if sub.cancelled.is_set():
                break  # the engine's next tick drops it
            need = self.remaining_prefill(sub)
            if need + 1 > left:
                break  # arrival order: nobody passes the head
            left -= need + 1
            self._running.append(self._waiting.popleft())
            self._chunks[sub], self._kinds[sub] = need, "prefill+decode"
            self.arrivals[sub.request.request_id] = tick
            record.append(PlannedStep(sub.request.request_id, "prefill+decode", need + 1))
            joined.append(sub)
        return joined


def token_estimate(sub: Submission, expected_output: int) -> int:
    """Prompt tokens plus the output we expect (max_tokens, capped at `expected_output`)."""
    return len(sub.request.prompt_ids) + min(sub.request.params.max_tokens, expected_output)


class TokenBudgetScheduler(_ModeScheduler):
    """`token`: token-budget micro-batching. Waiting requests pool their token estimates; a
    micro-batch is emitted when the pool reaches `batch_threshold` tokens or its oldest request has
    waited `max_wait` seconds. Emitted micro-batches run interleaved under `step_token_budget` per
    tick. A request whose prompt exceeds the step budget is emitted alone (isolated) and its
    prefill is split into chunks across ticks so it never fills a tick beyond the budget."""

    mode = "token"

    def __init__(
        self,
        max_running: int = 8,
        step_token_budget: int = 256,
        batch_threshold: int = 256,
        max_wait: float = 0.02,
        expected_output: int = 64,
        clock=time.monotonic,
    ) -> None:
        super().__init__(max_running, step_token_budget)
        self.batch_threshold = batch_threshold
        self.max_wait = max_wait
        self.expected_output = expected_output
        self.clock = clock
        self._added_at: dict[Submission, float] = {}
        self.batches: list[list[str]] = []  # request ids of every emitted micro-batch, in order

    def add(self, sub: Submission) -> None:
        super().add(sub)
        self._added_at[sub] = self.clock()

    def _on_finish(self, sub: Submission) -> None:
        self._added_at.pop(sub, None)

    def drop_cancelled(self) -> list[Submission]:
        gone = super().drop_cancelled()
        for s in gone:
            self._added_at.pop(s, None)
        return gone

    def wait_timeout(self) -> float | None:
        """Seconds until the oldest waiting request's max wait expires (engine idles that long)."""
        if not self._waiting:
            return None
        return max(0.0, self._added_at[self._waiting[0]] + self.max_wait - self.clock())

    def _admit(self) -> None:
        budget = self.budget
        while self._waiting:
            room = self.max_running - len(self._running)
            if room <= 0:
                return
            head = self._waiting[0]
            if len(head.request.prompt_ids) > budget:
                batch = [head]  # isolated; prefill chunked by the budgeted plan
            else:
                batch, pooled = [], 0
                for s in self._waiting:
                    if len(s.request.prompt_ids) > budget or len(batch) >= room:
                        break
                    batch.append(s)
                    pooled += token_estimate(s, self.expected_output)
                    if pooled >= self.batch_threshold:
                        break
                expired = self.clock() - self._added_at[head] >= self.max_wait
                if pooled < self.batch_threshold and not expired and len(batch) < room:
                    return  # keep pooling
            for s in batch:
                self._waiting.popleft()
                self._added_at.pop(s, None)
                self._running.append(s)
            self.batches.append([s.request.request_id for s in batch])

    def _plan(self):
        return self._budgeted_plan()


DEFAULT_MAX_RUNNING = {"fifo": 4, "token": 32, "continuous": 32}
"""Sequences generating at once when not set. fifo's is its static batch size; for the budgeted modes
the step token budget, not the slot count, bounds a step, and a request that finds every slot taken
waits for a whole sequence to finish (measured: with 8 slots that wait set continuous's TTFT p99 on
the benchmark trace)."""


def make_scheduler(
    mode: str = "continuous",
    *,
    max_running: int | None = None,
    step_token_budget: int = 256,
    batch_threshold: int = 256,
    max_wait: float = 0.02,
) -> Scheduler:
    """The scheduler for `--schedule MODE`."""
    if mode == "fifo":
        return StaticBatchScheduler(max_running or DEFAULT_MAX_RUNNING["fifo"])
    if mode == "token":
        return TokenBudgetScheduler(max_running or DEFAULT_MAX_RUNNING["token"], step_token_budget, batch_threshold, max_wait)
    if mode == "continuous":
        return ContinuousScheduler(max_running or DEFAULT_MAX_RUNNING["continuous"], step_token_budget)
    raise ValueError(f"unknown schedule mode {mode!r} (expected one of {', '.join(SCHEDULE_MODES)})")
