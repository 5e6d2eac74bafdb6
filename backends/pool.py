"""A backend pool: several interchangeable members behind one name, with failover before the first byte.

`send` orders the members (load-aware, weighted) and tries them in turn while the failure is retryable
and nothing has reached the client: `Backend.send` only returns once the response has started, so any
`BackendError` it raises is by definition before the first byte.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from backends.base import Backend, BackendError, BackendRequest, BackendResponse


class Pool:
    def __init__(self, name: str, members: Sequence[Backend], weights: Sequence[float], max_attempts: int) -> None:
        if not members:
            raise ValueError(f"pool {name!r} has no members")
        self.name = name
        self.members = list(members)
        self.weights = list(weights)
        self.max_attempts = max_attempts
        self._rng = random.Random()

    async def start(self) -> None:
        for m in self.members:
            await m.start()

    async def aclose(self) -> None:
        for m in self.members:
            await m.aclose()

    def outstanding(self) -> int:
        return sum(m.outstanding() for m in self.members)

    def order(self) -> list[Backend]:
        """Members in the order to try them: power of two choices on outstanding load, scaled by weight,
        for the first; the rest follow by the same measure so a failover goes to the least loaded."""
        members = [(m, w) for m, w in zip(self.members, self.weights, strict=True) if w > 0]
        if len(members) == 1:
            return [members[0][0]]
        first_pair = self._rng.choices(members, weights=[w for _, w in members], k=2)
        first = min(first_pair, key=lambda mw: (mw[0].outstanding() + 1) / mw[1])[0]
        rest = sorted((m for m, _ in members if m is not first), key=lambda m: m.outstanding())
        return [first, *rest]

    async def send(self, request: BackendRequest) -> BackendResponse:
        last: BackendError | None = None
        for attempt, member in enumerate(self.order()):
            if attempt >= self.max_attempts:
                break
            try:
                return await member.send(request)
            except BackendError as exc:
                last = exc
                if not exc.retryable:
                    raise
        assert last is not None
        raise last
