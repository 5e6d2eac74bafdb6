from __future__ import annotations

import asyncio
import random

import pytest
import redis.asyncio as aioredis
import structlog
from prometheus_client import REGISTRY

import policies.ratelimit as rl
from policies.ratelimit import RateLimiter
from policies.schema import KeyLimits, Limits


class Clock:
    """Test time: moves only when told to."""

    def __init__(self, t: float = 1_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture(params=["in-process", "redis"])
async def limiter(request, clock):
    """The same behaviour is required from both stores."""
    if request.param == "in-process":
        lim = await RateLimiter.create(None, clock=clock)
        yield lim
    else:
        server = request.getfixturevalue("redis_server")
        lim = await RateLimiter.create(server.url, clock=clock)
        assert lim.mode == "redis"
        yield lim
    await lim.aclose()


RPM = Limits(requests_per_minute=10)
TPM = Limits(tokens_per_minute=1000)


async def test_requests_per_minute_exact_and_refill(limiter, clock):
    results = [await limiter.acquire("acme", "k", RPM, 0) for _ in range(11)]
    assert [d.allowed for d in results] == [True] * 10 + [False]
    denied = results[-1]
    assert denied.reason == "requests" and denied.retry_after == pytest.approx(6.0, abs=0.01)
    h = denied.headers()
    assert h["retry-after"] == "6" and h["x-ratelimit-limit-requests"] == "10"
    assert h["x-ratelimit-remaining-requests"] == "0" and h["x-ratelimit-reset-requests"] == "1m0s"
    assert results[0].headers()["x-ratelimit-remaining-requests"] == "9"
    clock.advance(5.9)
    assert not (await limiter.acquire("acme", "k", RPM, 0)).allowed
    clock.advance(0.2)  # 6.1 s: one request's worth refilled
    assert (await limiter.acquire("acme", "k", RPM, 0)).allowed
    assert not (await limiter.acquire("acme", "k", RPM, 0)).allowed
    # other tenants are not affected
    assert (await limiter.acquire("globex", "k", RPM, 0)).allowed


async def test_tokens_per_minute_exact_at_the_boundary(limiter, clock):
    assert (await limiter.acquire("acme", "k", TPM, 600)).allowed
    d = await limiter.acquire("acme", "k", TPM, 401)  # 400 left: 401 do not fit
    assert not d.allowed and d.reason == "tokens" and d.remaining_tokens == 400
    assert d.retry_after == pytest.approx(0.06, abs=0.002)  # 1 token at 1000/60 per second
    assert d.headers()["x-ratelimit-remaining-tokens"] == "400"
    assert (await limiter.acquire("acme", "k", TPM, 400)).allowed  # exactly what is left
    too_big = await limiter.acquire("acme", "k", TPM, 1001)
    assert not too_big.allowed and too_big.reason == "too_large" and too_big.retry_after is None
    assert "1001" in too_big.error_message() and "retry-after" not in too_big.headers()


async def test_all_or_nothing_across_tenant_and_key_buckets(limiter, clock):
    limits = Limits(requests_per_minute=100, tokens_per_minute=10_000,
                    per_key=KeyLimits(requests_per_minute=3, tokens_per_minute=500))
    assert (await limiter.acquire("acme", "alice", limits, 300)).allowed
    d = await limiter.acquire("acme", "alice", limits, 300)  # alice's key has 200 tokens left
    assert not d.allowed and d.reason == "tokens" and d.limit_tokens == 500 and d.remaining_tokens == 200
    # the refused request took nothing from the tenant's buckets: bob still sees 10000 - 300
    b = await limiter.acquire("acme", "bob", limits, 0)
    assert b.allowed and b.limit_tokens == 500 and b.remaining_requests == 2
    t = await limiter.acquire("acme", "carol", Limits(requests_per_minute=100, tokens_per_minute=10_000), 0)
    assert t.remaining_tokens == 9700 and t.remaining_requests == 97


async def test_reconcile_refunds_unused_reservation_and_charges_overrun(limiter, clock):
    d = await limiter.acquire("acme", "k", TPM, 800, prompt_tokens=100)  # 100 in + 700 reserved out
    await limiter.reconcile(d, actual=150)
    await limiter.reconcile(d, actual=150)  # idempotent
    probe = await limiter.acquire("acme", "k", TPM, 0)
    assert probe.remaining_tokens == 850
    d = await limiter.acquire("acme", "k", TPM, 100, prompt_tokens=50)
    await limiter.reconcile(d, actual=300)  # used more than reserved
    assert (await limiter.acquire("acme", "k", TPM, 0)).remaining_tokens == 550


async def test_streamed_usage_is_charged_as_it_streams(limiter, clock):
    d = await limiter.acquire("acme", "k", TPM, 60, prompt_tokens=50)  # 10 output tokens reserved
    for _ in range(20):
        await limiter.charge(d, 10)  # 200 output tokens streamed, far past the reservation
    # Past the reservation the charges have reached the buckets before the stream ends...
    mid = await limiter.acquire("acme", "k", TPM, 0)
    assert 1000 - 250 <= mid.remaining_tokens <= 1000 - 250 + rl.CHARGE_BATCH
    # ...and a stream that ends without a usage chunk settles on what was counted.
    await limiter.reconcile(d)
    assert (await limiter.acquire("acme", "k", TPM, 0)).remaining_tokens == 750
    # a stream inside its reservation is refunded the rest at the end
    d = await limiter.acquire("acme", "k", TPM, 500, prompt_tokens=100)
    await limiter.charge(d, 40)
    await limiter.reconcile(d)
    assert (await limiter.acquire("acme", "k", TPM, 0)).remaining_tokens == 750 - 140


async def test_no_limits_configured_is_free_and_headerless(limiter):
    d = await limiter.acquire("acme", "k", Limits(), 10**9)
    assert d.allowed and d.headers() == {}


async def test_store_parity_random_sequence(clock, redis_server):
    """The Lua script and the in-process buckets agree step by step on a random workload."""
    local = await RateLimiter.create(None, clock=clock)
    shared = await RateLimiter.create(redis_server.url, clock=clock)
    limits = Limits(requests_per_minute=20, tokens_per_minute=2000, per_key=KeyLimits(tokens_per_minute=900))
    rng = random.Random(7)
    for _ in range(200):
        clock.advance(rng.choice([0, 0, 0.05, 0.5, 3]))
        key, tokens = rng.choice(["a", "b"]), rng.randint(0, 400)
        x = await local.acquire("t", key, limits, tokens)
        y = await shared.acquire("t", key, limits, tokens)
        assert (x.allowed, x.reason, x.remaining_requests, x.remaining_tokens) == \
               (y.allowed, y.reason, y.remaining_requests, y.remaining_tokens)
        if x.allowed and rng.random() < 0.5:
            actual = rng.randint(0, 500)
            await local.reconcile(x, actual)
            await shared.reconcile(y, actual)
    await local.aclose()
    await shared.aclose()


# --- many replicas, one Redis -------------------------------------------------------------------------------


async def _burst(limiters, limits, tokens, n_per, tenant="acme"):
    async def one(lim, i):
        d = await lim.acquire(tenant, f"key{i % 3}", limits, tokens)
        return d.allowed

    tasks = [one(lim, i) for lim in limiters for i in range(n_per)]
    random.Random(1).shuffle(tasks)
    return sum(await asyncio.gather(*tasks))


async def test_two_replicas_sharing_redis_enforce_one_combined_limit(redis_server, clock):
    # Generous timeouts: 600 requests at once on a shared 2-core machine can lag the event loop past the
    # production reply timeout, and this test is about the combined limit, not about fallback.
    opts = {"clock": clock, "timeout": 5.0, "connect_timeout": 10.0, "pool_timeout": 30.0}
    a = await RateLimiter.create(redis_server.url, **opts)
    b = await RateLimiter.create(redis_server.url, **opts)
    try:
        admitted = await _burst([a, b], Limits(requests_per_minute=200), 0, 300)  # 600 concurrent
        assert a.status()["mode"] == b.status()["mode"] == "redis"  # counted in Redis, not per replica
        assert abs(admitted - 200) <= 0.05 * 200
        tokens = Limits(tokens_per_minute=20_000)
        admitted = await _burst([a, b], tokens, 70, 300, tenant="initech")
        assert abs(admitted - 20_000 // 70) <= 0.05 * (20_000 // 70)
        # and with time passing while the load runs: one minute's limit plus the refill, not twice that
        total = 0
        for _ in range(10):
            clock.advance(6)
            total += await _burst([a, b], Limits(requests_per_minute=120), 0, 100, tenant="umbrella")
        expected = 120 + 9 * 12  # a full bucket at the first round, then 6 s of refill per round
        assert abs(total - expected) <= 0.05 * expected
        assert a.fallbacks == b.fallbacks == 0
    finally:
        await a.aclose()
        await b.aclose()


async def test_in_process_replicas_would_each_allow_the_full_limit(clock):
    a = await RateLimiter.create(None, clock=clock)
    b = await RateLimiter.create(None, clock=clock)
    assert await _burst([a, b], Limits(requests_per_minute=200), 0, 300) == 400  # why Redis is needed


# --- Redis outage ---------------------------------------------------------------------------------------------


def _fallbacks() -> float:
    return REGISTRY.get_sample_value("switchyard_ratelimit_fallbacks_total") or 0.0


async def test_redis_outage_falls_back_per_replica_says_so_and_recovers(redis_server, clock, monkeypatch):
    # A stopped server refuses connections at once; the long reply timeout only keeps a loaded machine
    # from looking like an outage during the bursts.
    opts = {"clock": clock, "probe_interval": 0.05, "timeout": 2.0, "connect_timeout": 10.0, "pool_timeout": 30.0}
    a = await RateLimiter.create(redis_server.url, **opts)
    b = await RateLimiter.create(redis_server.url, **opts)
    limits = Limits(requests_per_minute=50)
    try:
        assert a.status()["mode"] == "redis" and a.status()["shared"]
        before = _fallbacks()
        redis_server.stop()
        with structlog.testing.capture_logs() as logs:
            monkeypatch.setattr(rl, "log", structlog.get_logger("switchyard.ratelimit"))
            first = await a.acquire("acme", "k", limits, 0)
        assert first.allowed and first.where == "fallback"  # requests keep flowing
        assert a.status()["mode"] == "fallback" and not a.status()["shared"] and a.status()["last_error"]
        assert _fallbacks() == before + 1
        assert REGISTRY.get_sample_value("switchyard_ratelimit_mode", {"mode": "fallback"}) == 1
        assert any(e["event"] == "ratelimit.redis_unavailable" and e["log_level"] == "warning" for e in logs)
        # per replica now: each allows the whole limit on its own
        admitted = await _burst([a, b], limits, 0, 100)
        assert admitted == 2 * 50 - 1
        assert b.status()["mode"] == "fallback"

        redis_server.start()  # same port
        for _ in range(200):
            if a.status()["mode"] == "redis" and b.status()["mode"] == "redis":
                break
            await asyncio.sleep(0.05)
        assert a.status()["mode"] == "redis" and b.status()["mode"] == "redis"
        d = await a.acquire("acme", "k", limits, 0)
        assert d.where == "redis"
        probe = aioredis.from_url(redis_server.url)
        assert await probe.exists("sy:rl:{acme}:r") == 1  # counting in Redis again
        await probe.aclose()
        assert (await _burst([a, b], limits, 0, 100)) == 49  # one combined limit again
    finally:
        await a.aclose()
        await b.aclose()


async def test_starts_in_fallback_when_redis_is_down_at_start(clock):
    from tests.redis_server import free_port

    lim = await RateLimiter.create(f"redis://127.0.0.1:{free_port()}/0", clock=clock, probe_interval=10)
    try:
        assert lim.status()["mode"] == "fallback"
        assert (await lim.acquire("acme", "k", RPM, 0)).allowed
    finally:
        await lim.aclose()


async def test_fallback_share_divides_the_limit_between_replicas(clock):
    from tests.redis_server import free_port

    lim = await RateLimiter.create(f"redis://127.0.0.1:{free_port()}/0", clock=clock, probe_interval=10,
                                   fallback_share=0.5)
    try:
        assert sum([(await lim.acquire("acme", "k", RPM, 0)).allowed for _ in range(10)]) == 5
    finally:
        await lim.aclose()


async def test_a_missed_reply_from_a_healthy_redis_is_retried_not_an_outage(redis_server, clock):
    """A reply lost once (a busy event loop missing its timeout) while Redis still answers pings."""
    from redis.exceptions import TimeoutError as RedisTimeoutError

    lim = await RateLimiter.create(redis_server.url, clock=clock)
    real, calls = lim._script, []

    async def flaky(**kw):
        calls.append(kw)
        if len(calls) == 1:
            raise RedisTimeoutError("Timeout reading from socket")
        return await real(**kw)

    lim._script = flaky
    try:
        d = await lim.acquire("acme", "k", RPM, 0)
        assert d.allowed and d.where == "redis" and len(calls) == 2
        assert lim.status()["mode"] == "redis" and lim.fallbacks == 0
    finally:
        await lim.aclose()
