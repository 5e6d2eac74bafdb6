"""Active health checks: call `Backend.health()` on every member periodically and feed its breaker.

    checker = HealthChecker(members, interval=5.0, timeout=2.0)
    await checker.start()   # on app startup
    ...
    await checker.stop()    # on cleanup

A check that returns False, raises, or takes longer than `timeout` is a failed check; the breaker
ejects the member after `BreakerConfig.health_failures` in a row, and lets a health-ejected member
back to half-open on its first passing check (real traffic then confirms it through probes).
Checks of all members run concurrently, so one hanging member delays nobody else.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Sequence

from backends.balance import PoolMember

log = logging.getLogger(__name__)


class HealthChecker:
    def __init__(
        self,
        members: Sequence[PoolMember],
        *,
        interval: float = 5.0,
        timeout: float = 2.0,
        jitter: float = 0.1,
        rng: random.Random | None = None,
    ) -> None:
        if interval <= 0 or timeout <= 0 or not 0 <= jitter < 1:
            raise ValueError("interval and timeout must be positive, jitter in [0, 1)")
        self.members = list(members)
        """Replace on hot reload; the next round checks the new list."""
        self.interval = interval
        self.timeout = timeout
        self.jitter = jitter
        self._rng = rng or random.Random()
        self._task: asyncio.Task[None] | None = None

    async def check_member(self, member: PoolMember) -> bool:
        try:
            async with asyncio.timeout(self.timeout):
                ok = bool(await member.backend.health())
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a check that blows up is a failed check, never a crashed checker
            log.warning("health check of %s failed: %r", member.name, exc)
            ok = False
        member.breaker.record_health(ok)
        return ok

    async def check_once(self) -> dict[str, bool]:
        """One round over every member; returns name → passed."""
        members = list(self.members)
        results = await asyncio.gather(*(self.check_member(m) for m in members))
        return {m.name: ok for m, ok in zip(members, results)}

    async def _run(self) -> None:
        while True:
            await self.check_once()
            # Jitter keeps many gateway replicas from probing a backend in lock-step.
            await asyncio.sleep(self.interval * (1 + self._rng.uniform(-self.jitter, self.jitter)))

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        if not self.running:
            self._task = asyncio.create_task(self._run(), name="switchyard-health-checks")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
