"""Load-aware choice of a pool member, and failover between members before the first byte.

`choose_member`: weighted power-of-two-choices over outstanding requests.

Two members are drawn at random in proportion to their weights (with replacement) and the one with
fewer requests in flight wins; ties go to the first draw. At equal load this sends each member its
weight's share of traffic, which is what gradual shifts (canary at weight 1 beside 9) need; under
load the less busy of the pair wins, which is what keeps tail latency down. A member whose breaker
is open (ejected) or whose weight is 0 (drained) is never chosen.

`send_with_failover`: chooses, sends, keeps the breakers' books, and on a retryable failure before the
first byte tries the next choice — what a pool's `send` needs.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from backends.base import Backend, BackendError, BackendRequest, BackendResponse
from backends.breaker import CircuitBreaker, is_member_failure


class Candidate(Protocol):
    backend: Backend
    weight: float
    breaker: CircuitBreaker


@dataclass(eq=False)
class PoolMember:
    """One member of a pool as the chooser and the health checker see it (compared by identity)."""

    name: str
    backend: Backend
    weight: float = 1.0
    breaker: CircuitBreaker = field(default_factory=CircuitBreaker)


M = TypeVar("M", bound=Candidate)


def choose_member(members: Sequence[M], rng: random.Random, *, exclude: Collection[M] = ()) -> M | None:
    """Pick the member for the next attempt and reserve it on its breaker (a half-open member's probe
    slot), or None when no member can take a request. `exclude`: members this request already tried.
    The caller then reports exactly one `record_success`, `record_failure` or `release` to
    `member.breaker`."""
    eligible = [m for m in members if m.weight > 0 and m not in exclude and m.breaker.available()]
    if not eligible:
        return None
    if len(eligible) == 1:
        pick = eligible[0]
    else:
        a, b = rng.choices(eligible, weights=[m.weight for m in eligible], k=2)
        pick = b if b.backend.outstanding() < a.backend.outstanding() else a
    pick.breaker.acquire()
    return pick


async def send_with_failover(
    members: Sequence[PoolMember], request: BackendRequest, rng: random.Random, *, max_attempts: int,
    pick: Callable[[list[PoolMember]], Awaitable[PoolMember | None]] | None = None,
    give_back: Callable[[PoolMember], None] | None = None,
) -> BackendResponse:
    """Send to the chosen member; on a retryable failure before the first byte, the next choice.

    Keeps each breaker's books: a member failure (`is_member_failure`) counts against it, any other
    answer — including a client error such as 400 — counts as the member being alive. Raises the last
    `BackendError`, or a retryable 503 when no member can take the request (all ejected or drained),
    so the caller can escalate to the next pool. A stream that dies after it started is the caller's
    to report with `member.breaker.record_failure()`.

    `pick(tried)` replaces the plain choice (admission: a member with room, perhaps after a wait; None
    when none can ever take it), and `give_back(member)` runs once per attempt when it ends: at once
    for a failed one, when the response is closed for the one that answered.
    """
    tried: list[PoolMember] = []
    last: BackendError | None = None
    while len(tried) < max_attempts:
        member = await pick(tried) if pick is not None else choose_member(members, rng, exclude=tried)
        if member is None:
            break
        tried.append(member)
        try:
            response = await member.backend.send(request)
        except BackendError as exc:
            _give_back(give_back, member)
            (member.breaker.record_failure if is_member_failure(exc.status) else member.breaker.record_success)()
            if not exc.retryable:
                raise
            last = exc
            continue
        except asyncio.CancelledError:
            _give_back(give_back, member)
            member.breaker.release()  # the client left: no verdict on the member
            raise
        except Exception:
            _give_back(give_back, member)
            member.breaker.record_failure()
            raise
        member.breaker.record_success()
        response.member = response.member or member.name
        if give_back is not None:
            response.release = _then(response.release, lambda m=member: give_back(m))
        return response
    if last is not None:
        raise last
    raise BackendError(503, "no pool member is available", type="service_unavailable",
                       code="pool_unavailable", retryable=True)


def _give_back(give_back: Callable[[PoolMember], None] | None, member: PoolMember) -> None:
    if give_back is not None:
        give_back(member)


def _then(first: Callable[[], None] | None, then: Callable[[], None]) -> Callable[[], None]:
    """The response's own release, then `then` (once: `aclose` calls a response's release once)."""
    def done() -> None:
        try:
            if first is not None:
                first()
        finally:
            then()
    return done
