"""The scheduler decides which sequences get the next step; it runs no model code.

Shaped after vLLM v1's scheduler/worker split so batching policies (token-budget micro-batching,
continuous batching) can replace `FifoScheduler` without touching the worker. This one admits
requests in arrival order, up to `max_running` at once, and gives each running sequence one step
per tick in turn: a long generation cannot starve a short one, and nothing is batched yet.
"""

from __future__ import annotations

from collections import deque
from typing import Protocol

from backends.engine.request import Submission
from backends.engine.worker import SequenceState


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
        gone = [s for s in self._waiting if s.cancelled.is_set()]
        for s in gone:
            self._waiting.remove(s)
        return gone

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
