"""Gateway-side admission: a cap on outstanding tokens per backend member, and a fair queue in front of it.

Every request carries a `Ticket`: its tenant, the tenant's share, and its token estimate (prompt tokens
plus the most output it may produce — the same reservation the tokens/min limiter takes). A pool member
takes requests while the tokens in flight on it stay within its cap (`max_outstanding_tokens`); a
request larger than the cap is admitted alone, on an idle member, so it is never refused for its size.

When no member has room, the request waits in the pool's `AdmissionQueue`, which decides who goes next
whenever capacity frees:

* **fairness across tenants** — start-time fair queueing over tokens: each tenant has a virtual time
  that grows by `tokens / weight` for each request of it admitted from the queue; the tenant with the
  lowest virtual time goes first. A tenant that becomes active starts at the pool's virtual clock, so
  it cannot bank credit while idle, and one that floods the queue only moves its own virtual time on.
* **short first within a tenant, with aging** — a request's priority is its token estimate minus
  `aging_tokens_per_second` × its wait. The wait term grows equally for everyone, so the order is a
  static key, `tokens + aging × enqueued_at`, kept sorted.
* **work conserving** — when the request chosen first does not fit anywhere yet, the first one in the
  same order that does fit goes instead (a short request passes a long one).
* **a bound on bypass** — each time a request is admitted, every queued request that arrived before it
  counts one bypass. A request that has been bypassed `max_bypass` times goes next, strictly: nothing is
  admitted past it until it fits. (The oldest queued request always has the highest count, so the check
  is O(1).)

The fast path — a member has room and nobody is queued — is synchronous: no await, no allocation beyond
the member choice. Waiting requests time out (`queue_timeout`) or find the queue full (`max_queued`)
with a `BackendError` 503 and Retry-After; a waiter whose client leaves is removed from the queue.

The queue (`AdmissionQueue`) is a pure data structure, independent of asyncio; `PoolAdmission` binds it
to a pool's members, futures and timers; `backends.pool.Pool.send` drives it.
"""

from __future__ import annotations

import asyncio
import bisect
import random
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from backends.balance import PoolMember, choose_member
from backends.base import BackendError
from gateway import metrics
from policies.schema import Admission as AdmissionConfig

T = TypeVar("T")


@dataclass(eq=False, slots=True)
class Ticket:
    """One request's claim on a pool: who asks, with what share, for how many tokens. `queue_seconds`
    accumulates the time it spent waiting, over every pool and attempt it went through."""

    tenant: str = "-"
    tokens: int = 1
    weight: float = 1.0
    queue_seconds: float = 0.0


# --- the queue: ordering, fairness, aging, bypass bound --------------------------------------------


@dataclass(eq=False, slots=True)
class Entry:
    """A queued request. `key` orders it inside its tenant (lower first); `seq` is its arrival rank."""

    tenant: str
    tokens: int
    weight: float
    seq: int
    key: float
    enqueued_at: float
    payload: Any = None
    bypassed: int = 0

    def sort_key(self) -> tuple[float, int]:
        return (self.key, self.seq)


class AdmissionQueue(Generic[T]):
    """Which waiting request goes next (see the module doc). `pick(fit)` scans candidates in priority
    order and admits the first that `fit` places (fit returns where, or None); O(n) in the queue length,
    only ever run when something is queued."""

    def __init__(self, *, aging_tokens_per_second: float = 0.0, max_bypass: int = 32) -> None:
        self.aging = aging_tokens_per_second
        self.max_bypass = max_bypass
        self._seq = 0
        self._arrivals: dict[int, Entry] = {}
        """Queued entries by seq, in arrival order (dicts keep insertion order)."""
        self._tenants: dict[str, list[Entry]] = {}
        """Active tenants → their entries sorted by (key, seq)."""
        self._vtime: dict[str, float] = {}
        self._vclock = 0.0
        self.tokens = 0
        """Tokens of all queued entries."""

    def __len__(self) -> int:
        return len(self._arrivals)

    def __bool__(self) -> bool:
        return bool(self._arrivals)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._arrivals.values())

    def push(self, tenant: str, tokens: int, *, weight: float = 1.0, now: float = 0.0, payload: Any = None) -> Entry:
        self._seq += 1
        entry = Entry(tenant, tokens, weight, self._seq, tokens + self.aging * now, now, payload)
        self._arrivals[entry.seq] = entry
        queue = self._tenants.get(tenant)
        if queue is None:
            queue = self._tenants[tenant] = []
            # A tenant that (re)activates starts at the virtual clock: no credit banked while idle.
            self._vtime[tenant] = max(self._vtime.get(tenant, 0.0), self._vclock)
        bisect.insort(queue, entry, key=Entry.sort_key)
        self.tokens += tokens
        return entry

    def remove(self, entry: Entry) -> bool:
        """Take a waiting entry out (timeout, client gone). False when it is no longer queued."""
        if self._arrivals.pop(entry.seq, None) is None:
            return False
        self._drop(entry)
        return True

    def _drop(self, entry: Entry) -> None:
        queue = self._tenants[entry.tenant]
        i = bisect.bisect_left(queue, entry.sort_key(), key=Entry.sort_key)
        del queue[i]
        if not queue:
            del self._tenants[entry.tenant]
        self.tokens -= entry.tokens
        if not self._arrivals:
            # Nobody waits: fairness history ends here (it only matters among requests that compete).
            self._vtime.clear()
            self._vclock = 0.0

    def blocked_by(self) -> Entry | None:
        """The entry that has used up its bypasses and must go next, if any (always the oldest)."""
        for entry in self._arrivals.values():
            return entry if entry.bypassed >= self.max_bypass else None
        return None

    def order(self) -> Iterator[Entry]:
        """Candidates in priority order: tenants by virtual time, each tenant's entries by key."""
        tenants = sorted(self._tenants, key=lambda t: (self._vtime[t], self._tenants[t][0].seq))
        for t in tenants:
            yield from self._tenants[t]

    def pick(self, fit: Callable[[Entry], T | None]) -> tuple[Entry, T] | None:
        """Admit the next entry that `fit` places: removed from the queue, with where it was placed."""
        if not self._arrivals:
            return None
        blocker = self.blocked_by()
        if blocker is not None:
            where = fit(blocker)
            return None if where is None else (self._admit(blocker), where)
        for entry in self.order():
            where = fit(entry)
            if where is not None:
                return self._admit(entry), where
        return None

    def _admit(self, entry: Entry) -> Entry:
        # Every request still waiting that arrived earlier has now been passed once.
        for older in self._arrivals.values():
            if older.seq >= entry.seq:
                break
            older.bypassed += 1
        del self._arrivals[entry.seq]
        vt = self._vtime[entry.tenant]
        if vt > self._vclock:
            self._vclock = vt
        self._vtime[entry.tenant] = vt + entry.tokens / entry.weight
        self._drop(entry)
        return entry


# --- a pool's members, their loads and the waiters ----------------------------------------------------


@dataclass(eq=False, slots=True)
class MemberLoad:
    cap: int
    tokens: int = 0
    requests: int = 0

    def room_for(self, tokens: int) -> bool:
        # An idle member takes anything, so a request above the cap runs alone instead of never.
        return self.tokens + tokens <= self.cap or self.tokens == 0


def queue_error(code: str, message: str, retry_after: float, *, retryable: bool) -> BackendError:
    return BackendError(503, message, type="server_overloaded", code=code, retryable=retryable,
                        retry_after=retry_after)


@dataclass(eq=False)
class PoolAdmission:
    """Admission for one pool: per-member token caps, and one queue that any member's free capacity
    serves. `bind` attaches the pool's members (`caps[i]` for `members[i]`)."""

    pool: str
    config: AdmissionConfig
    caps: Sequence[int]
    rng: random.Random = field(default_factory=random.Random)

    def __post_init__(self) -> None:
        self.members: list[PoolMember] = []
        self.loads: dict[PoolMember, MemberLoad] = {}
        self._slots: list[tuple[PoolMember, MemberLoad]] = []
        self.immediate = 0
        """Requests admitted without waiting (exported as a counter at scrape time: free on the fast path)."""
        self.queue: AdmissionQueue[PoolMember] = AdmissionQueue(
            aging_tokens_per_second=self.config.aging_tokens_per_second, max_bypass=self.config.max_bypass)
        self._queue_seconds = metrics.ADMISSION_QUEUE_SECONDS.labels(self.pool)
        self._rejected = {r: metrics.ADMISSION_REJECTED.labels(self.pool, r)
                          for r in ("admission_queue_full", "admission_queue_timeout")}
        self._wake: asyncio.TimerHandle | None = None

    def bind(self, members: Sequence[PoolMember]) -> None:
        self.members = list(members)
        self.loads = {m: MemberLoad(cap) for m, cap in zip(self.members, self.caps, strict=True)}
        self._slots = list(self.loads.items())
        metrics.ADMISSION_SOURCES.add(self)

    def close(self) -> None:
        metrics.ADMISSION_SOURCES.discard(self)
        if self._wake is not None:
            self._wake.cancel()
            self._wake = None

    # the fast path

    def try_acquire(self, tokens: int, exclude: Collection[PoolMember] = ()) -> PoolMember | None:
        """A member with room, reserved (tokens and breaker), when nobody waits ahead; else None.
        `balance.choose_member`'s rule (weighted power-of-two over requests in flight) among the members
        with room, in one pass: this runs for every request."""
        if self.queue:
            return None
        roomy = [(m, load) for m, load in self._slots
                 if (load.tokens + tokens <= load.cap or load.tokens == 0)
                 and m.weight > 0 and m not in exclude and m.breaker.available()]
        if not roomy:
            return None
        if len(roomy) == 1:
            member, load = roomy[0]
        else:
            a, b = self.rng.choices(roomy, weights=[m.weight for m, _ in roomy], k=2)
            member, load = b if b[0].backend.outstanding() < a[0].backend.outstanding() else a
        member.breaker.acquire()
        load.tokens += tokens
        load.requests += 1
        self.immediate += 1
        return member

    def release(self, member: PoolMember, tokens: int) -> None:
        load = self.loads[member]
        load.tokens -= tokens
        load.requests -= 1
        if self.queue:
            self._dispatch()

    def could_serve(self, exclude: Collection[PoolMember] = ()) -> bool:
        """Whether some member would take a request once it has room (not ejected, drained or tried)."""
        return any(m.weight > 0 and m not in exclude and m.breaker.available() for m in self.members)

    # the slow path

    async def wait(self, ticket: Ticket, exclude: Collection[PoolMember] = ()) -> PoolMember:
        """Queue until a member has room; returns it reserved. Raises a 503 `BackendError` when the queue
        is full (retryable: the next pool may have room) or the wait times out (not retryable)."""
        cfg = self.config
        if len(self.queue) >= cfg.max_queued:
            self._rejected["admission_queue_full"].inc()
            raise queue_error("admission_queue_full",
                              f"The '{self.pool}' backends are at capacity and their queue is full; retry later.",
                              cfg.retry_after, retryable=True)
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[PoolMember] = loop.create_future()
        started = time.monotonic()
        entry = self.queue.push(ticket.tenant, ticket.tokens, weight=ticket.weight, now=started,
                                payload=(fut, tuple(exclude)))
        timer = loop.call_later(cfg.queue_timeout, self._expire, entry)
        self._dispatch()
        try:
            return await fut
        except asyncio.CancelledError:
            # The client left (or the task was cancelled): give the place, or the grant, back.
            if self.queue.remove(entry):
                self._dispatch()
            elif fut.done() and not fut.cancelled() and fut.exception() is None:
                member = fut.result()
                member.breaker.release()
                self.release(member, entry.tokens)
            raise
        finally:
            timer.cancel()
            waited = time.monotonic() - started
            ticket.queue_seconds += waited
            self._queue_seconds.observe(waited)

    def _expire(self, entry: Entry) -> None:
        if not self.queue.remove(entry):
            return
        self._rejected["admission_queue_timeout"].inc()
        fut = entry.payload[0]
        if not fut.done():
            fut.set_exception(queue_error(
                "admission_queue_timeout",
                f"The request waited {self.config.queue_timeout:g}s for capacity on '{self.pool}' and was not "
                "admitted; retry later.", self.config.retry_after, retryable=False))
        self._dispatch()  # it may have been the request everyone else waited behind

    def _dispatch(self) -> None:
        loads = self.loads
        while self.queue:
            live = [m for m in self.members if m.weight > 0 and m.breaker.available()]
            if not live:
                self._wake_when_a_member_returns()
                return
            room = max(loads[m].cap - loads[m].tokens for m in live)
            idle = any(loads[m].tokens == 0 for m in live)

            def fit(entry: Entry) -> PoolMember | None:
                if entry.tokens > room and not idle:
                    return None
                fut, exclude = entry.payload
                if fut.done():  # cancelled; its own handler takes it out of the queue
                    return None
                roomy = [m for m in live if loads[m].room_for(entry.tokens)]
                return choose_member(roomy, self.rng, exclude=exclude) if roomy else None

            got = self.queue.pick(fit)
            if got is None:
                return
            entry, member = got
            load = loads[member]
            load.tokens += entry.tokens
            load.requests += 1
            entry.payload[0].set_result(member)

    def _wake_when_a_member_returns(self) -> None:
        """Every member is ejected while requests wait. Nothing else would look at the queue again
        (no request is in flight to release capacity), so look when the first cool-down ends: the
        head of the queue then goes to that member as its half-open probe."""
        if self._wake is not None:
            return
        delays = [d for d in (m.breaker.retry_in() for m in self.members if m.weight > 0) if d > 0]
        if not delays:
            return  # half-open with its probes out: their release dispatches
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._wake = loop.call_later(min(delays) + 0.001, self._woken)

    def _woken(self) -> None:
        self._wake = None
        if self.queue:
            self._dispatch()

    # observability

    def snapshot(self) -> dict[str, Any]:
        return {"pool": self.pool, "queued_requests": len(self.queue), "queued_tokens": self.queue.tokens,
                "immediate": self.immediate,
                "members": [{"member": m.name, "cap": self.loads[m].cap, "tokens": self.loads[m].tokens,
                             "requests": self.loads[m].requests} for m in self.members]}


def pool_admission(pool: str, config: AdmissionConfig, member_caps: Sequence[int | None]) -> PoolAdmission:
    """The admission object for a pool; `member_caps[i]` overrides the pool's cap for member i."""
    caps = [c if c is not None else config.max_outstanding_tokens for c in member_caps]
    return PoolAdmission(pool, config, caps)
