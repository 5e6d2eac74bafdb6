"""Active health checks feeding the breakers, and a member's whole life: dead, ejected, back."""

from __future__ import annotations

import asyncio
import random

import pytest

from backends.balance import PoolMember, send_with_failover
from backends.breaker import BreakerConfig, CircuitBreaker, State
from backends.health import HealthChecker
from tests.routing.doubles import FakeClock, ScriptedBackend, request

CFG = BreakerConfig(consecutive_failures=3, cooldown_seconds=30, health_failures=2)


def members(n: int, clock: FakeClock) -> list[PoolMember]:
    return [PoolMember(f"m{i}", ScriptedBackend(f"m{i}"), 1.0, CircuitBreaker(CFG, clock=clock)) for i in range(n)]


async def test_check_once_feeds_every_breaker():
    ms = members(3, FakeClock())
    ms[1].backend.alive = False
    checker = HealthChecker(ms, timeout=1.0)
    assert await checker.check_once() == {"m0": True, "m1": False, "m2": True}
    assert await checker.check_once() == {"m0": True, "m1": False, "m2": True}
    assert [m.breaker.state for m in ms] == [State.CLOSED, State.OPEN, State.CLOSED]
    assert ms[1].breaker.opened_by == "health"


async def test_a_hanging_or_crashing_check_is_a_failed_check():
    ms = members(2, FakeClock())
    ms[0].backend.hang_health = True

    async def boom() -> bool:
        raise ConnectionResetError("peer went away")

    ms[1].backend.health = boom
    checker = HealthChecker(ms, timeout=0.01)
    assert await checker.check_once() == {"m0": False, "m1": False}


async def test_start_runs_rounds_until_stop():
    ms = members(2, FakeClock())
    checker = HealthChecker(ms, interval=0.001, jitter=0.5, rng=random.Random(0))
    await checker.start()
    await checker.start()  # idempotent
    assert checker.running
    for _ in range(10_000):
        if ms[0].backend.health_checks >= 3:
            break
        await asyncio.sleep(0.001)
    await checker.stop()
    assert not checker.running and ms[0].backend.health_checks >= 3
    seen = ms[0].backend.health_checks
    await asyncio.sleep(0.01)
    assert ms[0].backend.health_checks == seen  # stopped means stopped
    await checker.stop()  # idempotent


def test_bad_settings_are_refused():
    with pytest.raises(ValueError):
        HealthChecker([], interval=0)
    with pytest.raises(ValueError):
        HealthChecker([], jitter=1.0)


async def test_dead_member_is_ejected_and_comes_back_through_a_half_open_probe():
    clock = FakeClock()
    ms = members(2, clock)
    dead = ms[0]
    checker = HealthChecker(ms, timeout=1.0)
    rng = random.Random(4)

    # It dies: traffic fails over with no client error, and the checks eject it.
    dead.backend.alive = False
    for _ in range(20):
        assert (await send_with_failover(ms, request(), rng, max_attempts=2)).member == "m1"
    await checker.check_once()
    await checker.check_once()
    assert dead.breaker.state is State.OPEN
    sent = dead.backend.sent
    for _ in range(20):
        await send_with_failover(ms, request(), rng, max_attempts=2)
    assert dead.backend.sent == sent  # ejected: not even tried

    # It recovers: still ejected until its cool-down ends or a health check passes...
    dead.backend.alive = True
    clock.advance(CFG.cooldown_seconds * 8)
    assert dead.breaker.state is State.HALF_OPEN
    # ...then one probe goes through, succeeds, and closes the breaker.
    assert (await send_with_failover([dead], request(), rng, max_attempts=1)).member == "m0"
    assert dead.breaker.state is State.CLOSED

    served = {(await send_with_failover(ms, request(), rng, max_attempts=2)).member for _ in range(40)}
    assert served == {"m0", "m1"}


async def test_a_health_ejected_member_is_probed_as_soon_as_its_check_passes():
    clock = FakeClock()
    ms = members(1, clock)
    checker = HealthChecker(ms, timeout=1.0)
    ms[0].backend.alive = False
    await checker.check_once()
    await checker.check_once()
    assert ms[0].breaker.state is State.OPEN and ms[0].breaker.retry_in() == CFG.cooldown_seconds
    ms[0].backend.alive = True
    await checker.check_once()  # no waiting out the cool-down
    assert ms[0].breaker.state is State.HALF_OPEN
