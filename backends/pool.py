"""A backend pool: several interchangeable members behind one name, with failover before the first byte.

Members carry a circuit breaker each (`backends.breaker`): passive ejection on failures, active health
checks (`backends.health`) while the pool runs, half-open probes on the way back. `send` chooses by
weighted power-of-two-choices over outstanding requests and fails over to the next member while the
failure is retryable and nothing has reached the client (`Backend.send` only returns once the response
has started, so any `BackendError` it raises is by definition before the first byte).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from backends.balance import PoolMember, send_with_failover
from backends.base import Backend, BackendRequest, BackendResponse
from backends.breaker import CircuitBreaker
from backends.health import HealthChecker


class Pool:
    def __init__(self, name: str, members: Sequence[Backend], weights: Sequence[float], max_attempts: int,
                 *, health_interval: float | None = 5.0) -> None:
        if not members:
            raise ValueError(f"pool {name!r} has no members")
        self.name = name
        self.members = [PoolMember(m.name, m, w, CircuitBreaker()) for m, w in zip(members, weights, strict=True)]
        self.max_attempts = max_attempts
        self._rng = random.Random()
        self._health = HealthChecker(self.members, interval=health_interval) if health_interval else None

    async def start(self) -> None:
        for m in self.members:
            await m.backend.start()
        if self._health is not None:
            await self._health.start()

    async def aclose(self) -> None:
        if self._health is not None:
            await self._health.stop()
        for m in self.members:
            await m.backend.aclose()

    def outstanding(self) -> int:
        return sum(m.backend.outstanding() for m in self.members)

    def available(self) -> bool:
        """Whether any member can take a request now (routing skips a pool that cannot)."""
        return any(m.weight > 0 and m.breaker.available() for m in self.members)

    async def send(self, request: BackendRequest) -> BackendResponse:
        return await send_with_failover(self.members, request, self._rng, max_attempts=self.max_attempts)
