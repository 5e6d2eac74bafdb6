"""A backend pool: several interchangeable members behind one name, with failover before the first byte.

Members carry a circuit breaker each (`backends.breaker`): passive ejection on failures, active health
checks (`backends.health`) while the pool runs, half-open probes on the way back. `send` chooses by
weighted power-of-two-choices over outstanding requests and fails over to the next member while the
failure is retryable and nothing has reached the client (`Backend.send` only returns once the response
has started, so any `BackendError` it raises is by definition before the first byte).

With an `admission` (gateway/admission.py: a cap on outstanding tokens per member and a fair queue in
front of them), a member is only chosen among those with room for the request's tokens; when none has
room the request waits for one. The tokens are held until the response is closed (`aclose`), however it
ends, and given back at once when an attempt fails over to another member.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from backends.balance import PoolMember, send_with_failover
from backends.base import Backend, BackendRequest, BackendResponse
from backends.breaker import CircuitBreaker
from backends.health import HealthChecker

if TYPE_CHECKING:
    from gateway.admission import PoolAdmission, Ticket


class Pool:
    def __init__(self, name: str, members: Sequence[Backend], weights: Sequence[float], max_attempts: int,
                 *, health_interval: float | None = 5.0, admission: PoolAdmission | None = None) -> None:
        if not members:
            raise ValueError(f"pool {name!r} has no members")
        self.name = name
        self.members = [PoolMember(m.name, m, w, CircuitBreaker()) for m, w in zip(members, weights, strict=True)]
        self.max_attempts = max_attempts
        self._rng = random.Random()
        self._health = HealthChecker(self.members, interval=health_interval) if health_interval else None
        self.admission = admission
        if admission is not None:
            admission.bind(self.members)

    async def start(self) -> None:
        for m in self.members:
            await m.backend.start()
        if self._health is not None:
            await self._health.start()

    async def aclose(self) -> None:
        if self._health is not None:
            await self._health.stop()
        if self.admission is not None:
            self.admission.close()
        for m in self.members:
            await m.backend.aclose()

    def outstanding(self) -> int:
        """Requests in flight, and those waiting for admission (a pool retired by a reload waits for both)."""
        queued = len(self.admission.queue) if self.admission is not None else 0
        return queued + sum(m.backend.outstanding() for m in self.members)

    def available(self) -> bool:
        """Whether any member can take a request now (routing skips a pool that cannot)."""
        return any(m.weight > 0 and m.breaker.available() for m in self.members)

    async def send(self, request: BackendRequest, ticket: Ticket | None = None) -> BackendResponse:
        """Send to a member, failing over before the first byte. With admission, `ticket` says who asks and
        for how many tokens (none: one token for tenant '-'); its `queue_seconds` grows by any wait."""
        if self.admission is None:
            return await send_with_failover(self.members, request, self._rng, max_attempts=self.max_attempts)
        return await self._send_admitted(request, ticket)

    async def _send_admitted(self, request: BackendRequest, ticket: Ticket | None) -> BackendResponse:
        """`send_with_failover` choosing only among members with room for the ticket's tokens (waiting
        for one when none has room); the tokens go back when an attempt fails or its response closes."""
        admission = self.admission
        assert admission is not None
        if ticket is None:
            from gateway.admission import Ticket

            ticket = Ticket()
        tokens = ticket.tokens

        async def pick(tried: list[PoolMember]) -> PoolMember | None:
            member = admission.try_acquire(tokens, tried)  # the fast path: no wait
            if member is None and admission.could_serve(tried):
                member = await admission.wait(ticket, tried)
            return member

        return await send_with_failover(self.members, request, self._rng, max_attempts=self.max_attempts,
                                        pick=pick, give_back=lambda member: admission.release(member, tokens))
