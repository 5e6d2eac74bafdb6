"""The admission queue on its own: ordering, fairness, aging, the bypass bound (gateway/admission.py).

`AdmissionQueue` is pure (no clock, no asyncio), so its invariants are checked against random
workloads with hypothesis; `PoolAdmission` (futures, timers, cancellation) is checked with real
pool members whose backends are never called.
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings, strategies as st

from backends.balance import PoolMember
from backends.base import Backend, BackendError
from gateway.admission import AdmissionQueue, MemberLoad, Ticket, pool_admission
from policies.schema import Admission


def drain(q: AdmissionQueue) -> list:
    """Admit everything with unlimited capacity: the queue's pure priority order."""
    out = []
    while (got := q.pick(lambda e: True)) is not None:
        out.append(got[0])
    return out


# --- ordering -----------------------------------------------------------------------------------------


@settings(deadline=None)
@given(st.lists(st.integers(1, 10_000), min_size=1, max_size=60))
def test_one_tenant_without_aging_goes_shortest_first(sizes):
    q = AdmissionQueue(aging_tokens_per_second=0.0, max_bypass=10**9)
    entries = [q.push("a", n) for n in sizes]
    order = drain(q)
    assert [e.tokens for e in order] == sorted(sizes)
    # equal sizes keep arrival order
    assert order == sorted(entries, key=lambda e: (e.tokens, e.seq))
    assert len(q) == 0 and q.tokens == 0


def test_aging_lets_a_long_wait_overtake_newer_short_requests():
    q = AdmissionQueue(aging_tokens_per_second=100.0, max_bypass=10**9)
    long_ = q.push("a", 1000, now=0.0)
    early_short = q.push("a", 100, now=5.0)   # key 600 < 1000: still ahead of the long one
    late_short = q.push("a", 100, now=20.0)   # key 2100: the long one has waited long enough
    assert drain(q) == [early_short, long_, late_short]


@settings(deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5000), st.floats(0, 100)), min_size=1, max_size=40),
       st.floats(0, 1000))
def test_order_is_size_minus_aging_credit(items, aging):
    """Priority = tokens − aging × time waited, at any common 'now': i.e. tokens + aging × arrival."""
    q = AdmissionQueue(aging_tokens_per_second=aging, max_bypass=10**9)
    items = sorted(items, key=lambda x: x[1])  # arrivals in time order
    for tokens, at in items:
        q.push("a", tokens, now=at)
    now = max(at for _, at in items)
    prio = [e.tokens - aging * (now - e.enqueued_at) for e in drain(q)]
    assert all(a <= b + 1e-6 * max(1.0, abs(a), abs(b)) for a, b in zip(prio, prio[1:]))


def test_short_request_passes_a_long_one_that_does_not_fit():
    q = AdmissionQueue(aging_tokens_per_second=0.0, max_bypass=10**9)
    long_ = q.push("a", 900)
    short = q.push("a", 50)
    room = 100
    got = q.pick(lambda e: e.tokens <= room or None)
    assert got is not None and got[0] is short
    assert long_.bypassed == 1 and len(q) == 1


# --- fairness across tenants -------------------------------------------------------------------------


def test_a_flooding_tenant_does_not_starve_another():
    q = AdmissionQueue(aging_tokens_per_second=0.0, max_bypass=10**9)
    for _ in range(20):
        q.push("flood", 100)
    b = [q.push("quiet", 100) for _ in range(3)]
    order = drain(q)
    positions = [order.index(e) for e in b]
    # Equal shares, equal sizes: the two tenants alternate while both wait.
    assert positions == [1, 3, 5]


def test_weights_split_admissions_by_share():
    q = AdmissionQueue(aging_tokens_per_second=0.0, max_bypass=10**9)
    for _ in range(40):
        q.push("heavy", 100, weight=3.0)
        q.push("light", 100, weight=1.0)
    first = [e.tenant for e in drain(q)[:20]]
    assert first.count("heavy") == 15 and first.count("light") == 5


def test_fairness_is_by_tokens_not_requests():
    q = AdmissionQueue(aging_tokens_per_second=0.0, max_bypass=10**9)
    for _ in range(10):
        q.push("big", 1000)
    for _ in range(30):
        q.push("small", 100)
    # one big request is worth ten small ones
    assert [e.tenant for e in drain(q)[:12]] == ["big"] + ["small"] * 10 + ["big"]


def test_an_idle_tenant_banks_no_credit():
    q = AdmissionQueue(aging_tokens_per_second=0.0, max_bypass=10**9)
    for _ in range(10):
        q.push("a", 100)
    for _ in range(5):
        q.pick(lambda e: True)  # a served alone for a while
    for _ in range(5):
        q.push("b", 100)
    order = [e.tenant for e in drain(q)]
    # b joins at the current virtual clock: it alternates with a, it does not get five in a row
    assert order[:4].count("b") == 2


# --- the bypass bound (aging that needs no clock) ----------------------------------------------------


def test_long_request_goes_next_after_max_bypass_and_blocks_others():
    q = AdmissionQueue(aging_tokens_per_second=0.0, max_bypass=3)
    long_ = q.push("a", 900)
    shorts = [q.push("a", 10) for _ in range(6)]
    fits_short_only = lambda e: True if e.tokens <= 100 else None  # noqa: E731
    admitted = [q.pick(fits_short_only)[0] for _ in range(3)]
    assert admitted == shorts[:3] and long_.bypassed == 3
    assert q.blocked_by() is long_
    # Now nothing passes it, though the shorts would fit...
    assert q.pick(fits_short_only) is None
    # ...until it fits itself.
    assert q.pick(lambda e: True)[0] is long_
    assert q.blocked_by() is None


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_invariants_under_random_load(data):
    """A member with a token cap serves a random mix of tenants, sizes and cancellations:
    * nobody is ever bypassed more than max_bypass times;
    * the member's outstanding tokens never exceed its cap, except one request above the cap, alone;
    * when a request has used its bypasses, nothing else is admitted;
    * the queue's token count is the sum of its entries; and once arrivals stop, everyone is served."""
    max_bypass = data.draw(st.integers(0, 6), label="max_bypass")
    cap = data.draw(st.integers(50, 2000), label="cap")
    q = AdmissionQueue(aging_tokens_per_second=data.draw(st.sampled_from([0.0, 10.0, 1000.0])), max_bypass=max_bypass)
    load = MemberLoad(cap)
    running: list = []
    now = 0.0
    queued: set = set()
    served: list = []

    def fit(e):
        return True if load.room_for(e.tokens) else None

    def admit_all():
        while True:
            blocker = q.blocked_by()
            got = q.pick(fit)
            if got is None:
                return
            e = got[0]
            assert blocker is None or e is blocker
            queued.discard(e)
            served.append(e)
            load.tokens += e.tokens
            running.append(e)
            assert load.tokens <= cap or len(running) == 1
            for other in q:
                assert other.bypassed <= max_bypass

    ops = data.draw(st.lists(st.sampled_from(["push", "push", "push", "finish", "cancel", "tick"]), max_size=80))
    for op in ops:
        if op == "push":
            tenant = data.draw(st.sampled_from(["a", "b", "c"]))
            tokens = data.draw(st.integers(1, 3000))
            queued.add(q.push(tenant, tokens, weight={"a": 1.0, "b": 2.0, "c": 0.5}[tenant], now=now))
        elif op == "finish" and running:
            e = running.pop(data.draw(st.integers(0, len(running) - 1)))
            load.tokens -= e.tokens
        elif op == "cancel" and queued:
            e = data.draw(st.sampled_from(sorted(queued, key=lambda x: x.seq)))
            assert q.remove(e) and not q.remove(e)
            queued.discard(e)
        elif op == "tick":
            now += data.draw(st.floats(0.0, 5.0))
        admit_all()
        assert q.tokens == sum(e.tokens for e in q) and len(q) == len(queued)
    while running:
        load.tokens -= running.pop(0).tokens
        admit_all()
    assert len(q) == 0 and not queued


# --- PoolAdmission: futures, timeouts, cancellation --------------------------------------------------


class _Idle(Backend):
    async def send(self, request):  # pragma: no cover - never called here
        raise AssertionError


def _admission(cap: int = 100, **cfg):
    adm = pool_admission("p", Admission(max_outstanding_tokens=cap, **cfg), [None])
    adm.bind([PoolMember("p/0", _Idle())])
    return adm


async def test_fast_path_then_queue_then_release_admits_the_waiter():
    adm = _admission(cap=100, aging_tokens_per_second=0.0)
    m = adm.try_acquire(80)
    assert m is not None and adm.loads[m].tokens == 80
    assert adm.try_acquire(30) is None  # no room: the caller waits
    ticket = Ticket("t", 30)
    waiter = asyncio.create_task(adm.wait(ticket))
    await asyncio.sleep(0)
    assert len(adm.queue) == 1 and not waiter.done()
    m.breaker.release()
    adm.release(m, 80)
    assert await waiter is m and adm.loads[m].tokens == 30
    assert ticket.queue_seconds > 0
    assert adm.try_acquire(1) is not None  # queue empty again: the fast path is back


async def test_a_cancelled_waiter_leaves_the_queue():
    adm = _admission(cap=10)
    m = adm.try_acquire(10)
    waiter = asyncio.create_task(adm.wait(Ticket("t", 5)))
    await asyncio.sleep(0)
    assert len(adm.queue) == 1
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert len(adm.queue) == 0
    m.breaker.release()
    adm.release(m, 10)
    assert adm.loads[m].tokens == 0


async def test_a_grant_to_a_waiter_cancelled_before_it_ran_is_given_back():
    adm = _admission(cap=10)
    m = adm.try_acquire(10)
    waiter = asyncio.create_task(adm.wait(Ticket("t", 5)))
    await asyncio.sleep(0)
    m.breaker.release()
    adm.release(m, 10)        # grants the waiter (future resolved)...
    waiter.cancel()           # ...but its client leaves before it resumes
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert adm.loads[m].tokens == 0 and adm.loads[m].requests == 0 and len(adm.queue) == 0


async def test_timeout_and_full_queue_are_503s_with_retry_after():
    adm = _admission(cap=10, queue_timeout=0.05, max_queued=1, retry_after=2)
    m = adm.try_acquire(10)
    first = asyncio.create_task(adm.wait(Ticket("t", 5)))
    await asyncio.sleep(0)
    with pytest.raises(BackendError) as full:
        await adm.wait(Ticket("t", 5))
    assert (full.value.status, full.value.code, full.value.retryable, full.value.retry_after) == \
        (503, "admission_queue_full", True, 2)
    with pytest.raises(BackendError) as timed_out:
        await first
    assert (timed_out.value.status, timed_out.value.code, timed_out.value.retryable) == \
        (503, "admission_queue_timeout", False)
    assert len(adm.queue) == 0
    m.breaker.release()
    adm.release(m, 10)


async def test_waiters_go_to_an_ejected_member_when_its_cool_down_ends():
    """The member is ejected while a request waits for its capacity: nothing is in flight to release
    capacity again, so the queue itself must look again when the cool-down ends (the waiter becomes
    the half-open probe), not sit until its queue timeout."""
    from backends.breaker import BreakerConfig, CircuitBreaker, State

    adm = pool_admission("p", Admission(max_outstanding_tokens=10, queue_timeout=60), [None])
    member = PoolMember("p/0", _Idle(), breaker=CircuitBreaker(BreakerConfig(consecutive_failures=1, cooldown_seconds=0.05)))
    adm.bind([member])
    assert adm.try_acquire(10) is member
    waiter = asyncio.create_task(adm.wait(Ticket("t", 5)))
    await asyncio.sleep(0)
    member.breaker.record_failure()  # the request in flight failed: the member is ejected...
    adm.release(member, 10)           # ...and its capacity comes back while nobody may use it
    assert member.breaker.state is State.OPEN and len(adm.queue) == 1
    granted = await asyncio.wait_for(waiter, 10)  # far below the 60 s queue timeout
    assert granted is member and member.breaker.state is State.HALF_OPEN
    member.breaker.record_success()
    adm.release(member, 5)
    adm.close()


async def test_request_above_the_cap_runs_alone():
    adm = _admission(cap=100)
    m = adm.try_acquire(500)
    assert m is not None  # idle member: admitted although above the cap
    assert adm.try_acquire(1) is None
    m.breaker.release()
    adm.release(m, 500)
    assert adm.try_acquire(1) is not None


async def test_waiters_are_spread_over_members_with_room():
    adm = pool_admission("p", Admission(max_outstanding_tokens=100), [None, 300])
    members = [PoolMember("p/0", _Idle()), PoolMember("p/1", _Idle())]
    adm.bind(members)
    assert [adm.loads[m].cap for m in members] == [100, 300]
    got = [adm.try_acquire(100) for _ in range(4)]
    assert None not in got and adm.try_acquire(100) is None
    assert sorted(adm.loads[m].tokens for m in members) == [100, 300]


# --- configuration ------------------------------------------------------------------------------------


def test_admission_config_errors_name_file_line_and_field():
    from policies import loader

    text = """pools:
  p:
    admission:
      max_outstanding_tokens: 0
      queue_timeout: -1
      max_bypas: 3
    members:
      - url: http://127.0.0.1:9/v1
        max_outstanding_tokens: lots
models: {m: {pool: p}}
tenants:
  t:
    keys: [{sha256: "%s"}]
    models: [m]
    limits: {queue_weight: 0}
""" % ("a" * 64)
    with pytest.raises(loader.PolicyError) as exc:
        loader.parse(text, "gw.yaml")
    problems = sorted(exc.value.problems)
    assert any(p.startswith("gw.yaml:4: pools.p.admission.max_outstanding_tokens:") for p in problems), problems
    assert any(p.startswith("gw.yaml:5: pools.p.admission.queue_timeout:") for p in problems), problems
    assert any(p.startswith("gw.yaml:6: pools.p.admission.max_bypas:") for p in problems), problems
    assert any(p.startswith("gw.yaml:9: pools.p.members[0].max_outstanding_tokens:") for p in problems), problems
    assert any(p.startswith("gw.yaml:15: tenants.t.limits.queue_weight:") for p in problems), problems


def test_defaults_do_not_throttle_and_member_caps_override():
    from policies.loader import load

    from tests.processes import ROOT

    cfg = load(ROOT / "policies/examples/gateway.yaml")
    assert Admission().max_outstanding_tokens >= 1_000_000 and Admission().max_queued > 0
    adm = pool_admission("vllm-small", cfg.pools["vllm-small"].admission, [None, 5000])
    assert list(adm.caps) == [200000, 5000]
