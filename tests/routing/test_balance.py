"""Choosing a member: weighted power-of-two-choices, ejection, failover before the first byte."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import pytest

from backends.balance import PoolMember, choose_member, send_with_failover
from backends.base import BackendError
from backends.breaker import BreakerConfig, CircuitBreaker, State
from tests.routing.doubles import FakeClock, ScriptedBackend, request

CFG = BreakerConfig(consecutive_failures=2, cooldown_seconds=10, health_failures=1)


def pool(*weights: float, clock: FakeClock | None = None) -> list[PoolMember]:
    clock = clock or FakeClock()
    return [
        PoolMember(f"m{i}", ScriptedBackend(f"m{i}"), w, CircuitBreaker(CFG, clock=clock))
        for i, w in enumerate(weights)
    ]


def pick(members, rng, **kw):
    m = choose_member(members, rng, **kw)
    if m is not None:
        m.breaker.release()  # these tests only look at the choice
    return m


def test_weights_set_the_traffic_share_at_equal_load():
    members = pool(9, 1)
    rng = random.Random(7)
    counts = Counter(pick(members, rng).name for _ in range(5000))
    assert 0.87 <= counts["m0"] / 5000 <= 0.93  # 9:1 → 90%


def test_zero_weight_drains_a_member():
    members = pool(1, 0, 1)
    rng = random.Random(1)
    assert "m1" not in {pick(members, rng).name for _ in range(500)}


def test_the_less_loaded_of_two_wins():
    members = pool(1, 1)
    members[0].backend.inflight = 5
    rng = random.Random(3)
    counts = Counter(pick(members, rng).name for _ in range(2000))
    # m0 is chosen only when both draws land on it (1 in 4).
    assert 0.2 <= counts["m0"] / 2000 <= 0.3


def test_ejected_and_excluded_members_are_skipped():
    members = pool(1, 1, 1)
    members[0].breaker.record_health(False)  # ejected by a failed check (health_failures=1)
    assert members[0].breaker.state is State.OPEN
    rng = random.Random(5)
    assert {pick(members, rng).name for _ in range(300)} == {"m1", "m2"}
    assert pick(members, rng, exclude=[members[1]]).name == "m2"
    assert pick(members, rng, exclude=members[1:]) is None


def test_half_open_member_gets_one_probe_at_a_time():
    clock = FakeClock()
    members = pool(1, clock=clock)
    members[0].breaker.record_health(False)
    clock.advance(10)
    assert members[0].breaker.state is State.HALF_OPEN
    rng = random.Random(0)
    assert choose_member(members, rng) is members[0]  # the probe is reserved...
    assert choose_member(members, rng) is None  # ...so nobody else goes there until it reports


async def test_failover_to_a_live_member_without_a_client_error():
    members = pool(1, 1, 1)
    members[0].backend.alive = False
    rng = random.Random(11)
    for _ in range(50):
        response = await send_with_failover(members, request(), rng, max_attempts=3)
        assert response.status == 200 and response.member in ("m1", "m2")
    # The dead member failed twice in a row and is now ejected: no more attempts reach it.
    assert members[0].breaker.state is State.OPEN
    assert members[0].backend.sent == 2


async def test_all_members_down_is_a_retryable_503_for_the_next_pool():
    members = pool(1, 1)
    for m in members:
        m.backend.alive = False
    rng = random.Random(2)
    with pytest.raises(BackendError) as e:
        await send_with_failover(members, request(), rng, max_attempts=2)
    assert e.value.status == 502 and e.value.retryable
    for _ in range(3):
        with pytest.raises(BackendError):
            await send_with_failover(members, request(), rng, max_attempts=2)
    assert all(m.breaker.state is State.OPEN for m in members)
    with pytest.raises(BackendError) as e:
        await send_with_failover(members, request(), rng, max_attempts=2)
    assert e.value.status == 503 and e.value.code == "pool_unavailable" and e.value.retryable


async def test_a_client_error_is_not_held_against_the_member():
    members = pool(1)
    members[0].backend.alive, members[0].backend.status = False, 400
    rng = random.Random(0)
    for _ in range(5):
        with pytest.raises(BackendError):
            await send_with_failover(members, request(), rng, max_attempts=1)
    assert members[0].breaker.state is State.CLOSED


async def test_max_attempts_bounds_the_failover():
    members = pool(1, 1, 1)
    for m in members:
        m.backend.alive = False
    with pytest.raises(BackendError):
        await send_with_failover(members, request(), random.Random(0), max_attempts=2)
    assert sum(m.backend.sent for m in members) == 2


async def test_a_cancelled_request_releases_its_probe():
    clock = FakeClock()
    members = pool(1, clock=clock)
    members[0].breaker.record_health(False)
    clock.advance(10)
    members[0].backend.hold = asyncio.Event()
    task = asyncio.create_task(send_with_failover(members, request(), random.Random(0), max_attempts=1))
    while members[0].backend.inflight == 0:
        await asyncio.sleep(0)
    assert not members[0].breaker.available()  # the probe is out
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert members[0].breaker.state is State.HALF_OPEN and members[0].breaker.available()
