"""Requests/min and tokens/min per tenant and per key: token buckets, in Redis when there is one.

Each limit is a bucket holding at most one minute's allowance and refilling continuously (limit/60 per
second). Admission takes 1 request and `tokens` (input + reserved output) from every bucket that applies
– tenant and key, requests and tokens – all or none, atomically: one Lua script in Redis, so N gateway
replicas enforce one combined limit. Reservations are then made true:

    d = await limiter.acquire(tenant, key, limits, tokens=input + reserved_output)
    if not d.allowed: 429 with d.headers() (Retry-After and x-ratelimit-*)
    ... while streaming: await limiter.charge(d, n)        # tokens as they stream
    ... at the end:       await limiter.reconcile(d, actual) # refund or charge the difference

Without a Redis URL the buckets live in this process. With one that stops answering, the limiter falls
back to in-process buckets (per replica, so N replicas together allow up to N times the limit, or
`fallback_share` of it each), says so in `status()`, a metric and a warning, probes Redis in the
background and returns to it when it answers again.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import structlog
from prometheus_client import Counter, Gauge
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from policies.schema import Limits

log = structlog.get_logger("switchyard.ratelimit")

# Network trouble that means "Redis is not there now" (not a bug in our script, which should surface).
_UNAVAILABLE = (OSError, TimeoutError, RedisConnectionError, RedisTimeoutError)
CHARGE_BATCH = 32  # streamed tokens past the reservation are taken in Redis this many at a time

Mode = Literal["in-process", "redis", "fallback"]
RATELIMIT_MODE = Gauge("switchyard_ratelimit_mode", "Where rate-limit counters live now (1 = this mode)", ["mode"])
RATELIMIT_FALLBACKS = Counter("switchyard_ratelimit_fallbacks_total",
                              "Times Redis stopped answering and limits fell back to per-replica counters")
RATELIMIT_REJECTIONS = Counter("switchyard_ratelimit_rejections_total", "Requests refused by rate limits",
                               ["reason"])

# One script for admission (all-or-none take) and adjustment (forced take or refund, may go into debt).
# KEYS: bucket hashes. ARGV: now (seconds), mode ("take" / "adjust"), then capacity and cost per bucket.
# Returns [allowed, wait_ms, level_milli...]. Times come from the caller's clock so tests can drive them;
# a bucket's time never moves backwards, so a replica with a slower clock cannot refill it twice.
_LUA = """
local now = tonumber(ARGV[1])
local adjust = ARGV[2] == 'adjust'
local n = #KEYS
local levels, caps, costs, stamps = {}, {}, {}, {}
local ok, wait = 1, 0
for i = 1, n do
  local cap = tonumber(ARGV[1 + 2 * i])
  local cost = tonumber(ARGV[2 + 2 * i])
  local v = redis.call('HMGET', KEYS[i], 'l', 't')
  local level, ts = tonumber(v[1]), tonumber(v[2])
  if level == nil then level, ts = cap, now end
  local rate = cap / 60
  if now > ts then level = math.min(cap, level + (now - ts) * rate); ts = now end
  levels[i], caps[i], costs[i], stamps[i] = level, cap, cost, ts
  if not adjust and cost > 0 and level < cost then
    ok = 0
    local w = (cost - level) / rate
    if w > wait then wait = w end
  end
end
local out = {ok, math.ceil(wait * 1000)}
for i = 1, n do
  local level = levels[i]
  if ok == 1 then
    level = math.max(-caps[i], math.min(caps[i], level - costs[i]))
    redis.call('HSET', KEYS[i], 'l', tostring(level), 't', tostring(stamps[i]))
    redis.call('PEXPIRE', KEYS[i], math.ceil((caps[i] - level) / (caps[i] / 60) * 1000) + 1000)
  end
  out[2 + i] = math.floor(level * 1000)
end
return out
"""


@dataclass(slots=True)
class _Bucket:
    key: str
    capacity: int
    cost: int
    kind: Literal["requests", "tokens"]


@dataclass(slots=True)
class RateDecision:
    allowed: bool
    tenant_id: str
    key_name: str
    reserved: int = 0
    """Tokens taken at admission."""
    retry_after: float | None = None
    """Seconds until the request would fit; None when allowed, or when it can never fit (too large)."""
    reason: str | None = None  # "requests" | "tokens" | "too_large"
    where: Mode | Literal["none"] = "none"
    limit_requests: int | None = None
    remaining_requests: int | None = None
    reset_requests: float = 0.0
    limit_tokens: int | None = None
    remaining_tokens: int | None = None
    reset_tokens: float = 0.0
    used: int = 0
    """Tokens known used so far: the prompt given to `acquire`, plus what `charge` counted."""
    taken: int = 0
    """Tokens actually taken from the buckets for this request so far."""
    settled: bool = False
    buckets: tuple[_Bucket, ...] = field(default=(), repr=False)

    def headers(self) -> dict[str, str]:
        """x-ratelimit-* for every response (and Retry-After on a 429), as OpenAI's API sends them."""
        h: dict[str, str] = {}
        if self.limit_requests is not None:
            h["x-ratelimit-limit-requests"] = str(self.limit_requests)
            h["x-ratelimit-remaining-requests"] = str(self.remaining_requests)
            h["x-ratelimit-reset-requests"] = _duration(self.reset_requests)
        if self.limit_tokens is not None:
            h["x-ratelimit-limit-tokens"] = str(self.limit_tokens)
            h["x-ratelimit-remaining-tokens"] = str(self.remaining_tokens)
            h["x-ratelimit-reset-tokens"] = _duration(self.reset_tokens)
        if not self.allowed and self.retry_after is not None:
            h["retry-after"] = str(max(1, math.ceil(self.retry_after)))
            h["retry-after-ms"] = str(max(1, math.ceil(self.retry_after * 1000)))
        return h

    def error_message(self) -> str:
        if self.reason == "too_large":
            return (f"Request too large: it needs {self.reserved} tokens (input plus reserved output) and the "
                    f"limit is {self.limit_tokens} tokens per minute. Lower max_tokens or shorten the prompt.")
        what = "requests per minute" if self.reason == "requests" else "tokens per minute"
        limit = self.limit_requests if self.reason == "requests" else self.limit_tokens
        return f"Rate limit reached: {limit} {what}. Try again in {self.retry_after or 0:.1f}s."


def _duration(seconds: float) -> str:
    """OpenAI's reset format: 20ms, 1.5s, 6m0s."""
    if seconds < 1:
        return f"{max(0, round(seconds * 1000))}ms"
    if seconds < 60:
        return f"{seconds:.3g}s"
    m, s = divmod(round(seconds), 60)
    return f"{m}m{s}s"


def buckets_for(tenant_id: str, key_name: str, limits: Limits, tokens: int) -> tuple[_Bucket, ...]:
    base = f"sy:rl:{{{tenant_id}}}"  # the hash tag keeps one tenant's buckets on one Redis Cluster slot
    out = []
    if limits.requests_per_minute:
        out.append(_Bucket(f"{base}:r", limits.requests_per_minute, 1, "requests"))
    if limits.tokens_per_minute:
        out.append(_Bucket(f"{base}:t", limits.tokens_per_minute, tokens, "tokens"))
    pk = limits.per_key
    if pk.requests_per_minute:
        out.append(_Bucket(f"{base}:k:{key_name}:r", pk.requests_per_minute, 1, "requests"))
    if pk.tokens_per_minute:
        out.append(_Bucket(f"{base}:k:{key_name}:t", pk.tokens_per_minute, tokens, "tokens"))
    return tuple(out)


class LocalBuckets:
    """The same buckets as the Lua script, in this process (no await, no lock: one event loop)."""

    def __init__(self) -> None:
        self._state: dict[str, list[float]] = {}  # key → [level, time]

    def run(self, now: float, buckets: tuple[_Bucket, ...], adjust: bool, share: float = 1.0) -> tuple[bool, float, list[float]]:
        levels = []
        ok, wait = True, 0.0
        for b in buckets:
            cap = b.capacity * share
            st = self._state.get(b.key)
            if st is None:
                st = self._state[b.key] = [cap, now]
            rate = cap / 60
            if now > st[1]:
                st[0] = min(cap, st[0] + (now - st[1]) * rate)
                st[1] = now
            levels.append(st[0])
            if not adjust and b.cost > 0 and st[0] < b.cost:
                ok = False
                wait = max(wait, (b.cost - st[0]) / rate)
        if ok:
            for i, b in enumerate(buckets):
                cap = b.capacity * share
                st = self._state[b.key]
                st[0] = max(-cap, min(cap, st[0] - b.cost))
                levels[i] = st[0]
        return ok, wait, levels


class RateLimiter:
    def __init__(
        self,
        redis=None,
        *,
        clock: Callable[[], float] = time.time,
        timeout: float = 0.25,
        probe_interval: float = 1.0,
        fallback_share: float = 1.0,
        probe_timeout: float = 1.0,
    ) -> None:
        """Use `create`. `fallback_share`: the part of each limit one replica allows while Redis is down
        (1.0 = the whole limit per replica; 1/N with N replicas keeps the total near the limit)."""
        self.redis = redis
        self.clock = clock
        self.timeout = timeout
        self.probe_timeout = max(timeout, probe_timeout)
        self.probe_interval = probe_interval
        self.fallback_share = fallback_share
        self.local = LocalBuckets()
        self.mode: Mode = "redis" if redis is not None else "in-process"
        self.fallbacks = 0
        self.last_error: str | None = None
        self.since = clock()
        self._script = redis.register_script(_LUA) if redis is not None else None
        self._probe: asyncio.Task | None = None
        self._set_gauge()

    @classmethod
    async def create(cls, redis_url: str | None, *, max_connections: int = 64, connect_timeout: float = 1.0,
                     pool_timeout: float = 2.0, **kwargs) -> RateLimiter:
        """A limiter on Redis at `redis_url`, or in-process when None. Starts even if Redis is down
        (in fallback mode, probing for it)."""
        if redis_url is None:
            return cls(None, **kwargs)
        import redis.asyncio as aioredis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        timeout = kwargs.get("timeout", 0.25)
        # Every network step has a timeout (`connect_timeout`, then `timeout` for each reply) and redis-py
        # retries nothing: a Redis that does not answer means per-replica limits now, not a request held
        # up by reconnect attempts. Connecting gets longer because a burst opens many connections at once
        # on a busy event loop. Waiting for a free pooled connection is local contention, not an outage:
        # a blocking pool queues for it (up to `pool_timeout`) instead of failing at a connection cap.
        pool = aioredis.BlockingConnectionPool.from_url(
            redis_url, max_connections=max_connections, timeout=pool_timeout, socket_timeout=timeout,
            socket_connect_timeout=connect_timeout, retry=Retry(NoBackoff(), 0), health_check_interval=0)
        limiter = cls(aioredis.Redis.from_pool(pool), **kwargs)
        if not await limiter.probe():
            limiter._fall_back("redis did not answer at start-up")
        return limiter

    # --- the request path ---------------------------------------------------------------------------------

    async def acquire(self, tenant_id: str, key_name: str, limits: Limits, tokens: int,
                      prompt_tokens: int = 0, *, requests_only: bool = False) -> RateDecision:
        """Admit one request that reserves `tokens` (input + the most output it may produce). Give
        `prompt_tokens` so that streamed output passed to `charge` is measured against the reservation.
        `requests_only`: a request that uses no backend tokens (a cache hit) takes one request and is
        not held back by the token buckets, not even one in debt."""
        buckets = buckets_for(tenant_id, key_name, limits, tokens)
        if requests_only:
            buckets = tuple(b for b in buckets if b.kind == "requests")
        d = RateDecision(True, tenant_id, key_name, reserved=tokens, used=prompt_tokens, taken=tokens, buckets=buckets)
        if not buckets:
            return d
        for b in buckets:
            if b.kind == "tokens" and tokens > b.capacity:
                d.allowed, d.reason, d.where = False, "too_large", self.mode
                self._fill(d, [float(x.capacity) for x in buckets], self.clock())
                RATELIMIT_REJECTIONS.labels("too_large").inc()
                return d
        now = self.clock()
        ok, wait, levels, where = await self._run(now, buckets, adjust=False)
        d.allowed, d.where = ok, where
        self._fill(d, levels, now)
        if not ok:
            d.retry_after = wait
            d.reason = self._binding(buckets, levels)
            RATELIMIT_REJECTIONS.labels(d.reason).inc()
        return d

    async def charge(self, decision: RateDecision, tokens: int) -> None:
        """Count `tokens` more used by this request, as they stream. Tokens inside the reservation were
        taken at admission; what goes past it is taken now (in batches of CHARGE_BATCH)."""
        if not decision.allowed or tokens <= 0 or decision.settled:
            return
        decision.used += tokens
        pending = decision.used - decision.taken
        if pending >= CHARGE_BATCH:
            decision.taken += pending
            await self._adjust(decision, pending)

    async def reconcile(self, decision: RateDecision, actual: int | None = None) -> None:
        """The request is over: `actual` tokens (prompt + completion, from usage) replace what was taken,
        refunding an unused reservation or taking the rest. `actual=None` settles on what `charge`
        counted (a stream that ended without a usage chunk). Idempotent."""
        if not decision.allowed or decision.settled:
            return
        decision.settled = True
        used = decision.used if actual is None else actual
        delta, decision.taken = used - decision.taken, used
        if delta:
            await self._adjust(decision, delta)

    async def _adjust(self, decision: RateDecision, delta: int) -> None:
        buckets = tuple(_Bucket(b.key, b.capacity, delta, b.kind) for b in decision.buckets if b.kind == "tokens")
        if not buckets:
            return
        if decision.where == "redis" and self.mode == "redis":
            await self._run(self.clock(), buckets, adjust=True)
        elif decision.where != "redis":
            self.local.run(self.clock(), buckets, adjust=True, share=self._share())
        # Taken in Redis but Redis is gone now: nothing to settle against; its buckets expire on their own.

    # --- Redis or not -------------------------------------------------------------------------------------

    async def _run(self, now: float, buckets: tuple[_Bucket, ...], adjust: bool) -> tuple[bool, float, list[float], Mode]:
        if self.mode == "redis":
            args: list = [repr(now), "adjust" if adjust else "take"]
            for b in buckets:
                args += [b.capacity, b.cost]
            keys = [b.key for b in buckets]
            # An adjustment is never sent twice: its first try may have been applied before the reply
            # was lost, and a refund counted twice would give away tokens.
            for _ in (1,) if adjust else (1, 2):
                try:
                    out = await self._script(keys=keys, args=args)
                    return bool(out[0]), out[1] / 1000, [x / 1000 for x in out[2:]], "redis"
                except _UNAVAILABLE as exc:
                    # A busy event loop can miss a timeout on a healthy Redis (a burst opening many
                    # connections at once): only a failed ping as well means an outage. If Redis answers
                    # the ping, admission is tried once more and then decided here.
                    if self.mode == "redis" and not await self.probe():
                        self._fall_back(f"{type(exc).__name__}: {exc}")
                        break
                    self.last_error = f"{type(exc).__name__}: {exc}"
            if adjust:
                return True, 0.0, [], "redis"  # lost with Redis; its buckets settle by refilling
        ok, wait, levels = self.local.run(now, buckets, adjust, share=self._share())
        return ok, wait, levels, "in-process" if self.mode == "in-process" else "fallback"

    def _share(self) -> float:
        return self.fallback_share if self.mode == "fallback" else 1.0

    def _fall_back(self, error: str) -> None:
        self.last_error = error
        if self.mode != "fallback":
            self.mode, self.since = "fallback", self.clock()
            self.fallbacks += 1
            RATELIMIT_FALLBACKS.inc()
            self._set_gauge()
            log.warning("ratelimit.redis_unavailable", error=error, mode="fallback",
                        detail="rate limits are now enforced per replica until Redis answers again")
        if self._probe is None or self._probe.done():
            with contextlib.suppress(RuntimeError):  # no running loop (called from sync code): no prober
                self._probe = asyncio.get_running_loop().create_task(self._probe_until_up())

    async def probe(self) -> bool:
        """Ping Redis once; on success leave fallback mode. Returns whether Redis answered."""
        if self.redis is None:
            return False
        try:
            async with asyncio.timeout(self.probe_timeout):
                await self.redis.ping()
        except _UNAVAILABLE as exc:
            self.last_error = f"{type(exc).__name__}: {exc}"
            return False
        if self.mode == "fallback":
            now = self.clock()
            log.info("ratelimit.redis_recovered", mode="redis", fallback_seconds=round(now - self.since, 3))
            self.mode, self.since = "redis", now
            self._set_gauge()
        return True

    async def _probe_until_up(self) -> None:
        while self.mode == "fallback":
            await asyncio.sleep(self.probe_interval)
            await self.probe()

    def status(self) -> dict:
        """For readiness and /admin: where the counters live now and why."""
        return {"mode": self.mode, "shared": self.mode == "redis", "since": self.since,
                "fallbacks": self.fallbacks, "last_error": self.last_error}

    async def aclose(self) -> None:
        if self._probe is not None:
            self._probe.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._probe
        if self.redis is not None:
            await self.redis.aclose()

    # --- headers ------------------------------------------------------------------------------------------

    @staticmethod
    def _binding(buckets: tuple[_Bucket, ...], levels: list[float]) -> str:
        short = [b for b, lv in zip(buckets, levels, strict=True) if b.cost > 0 and lv < b.cost]
        return "requests" if any(b.kind == "requests" for b in short) else "tokens"

    def _fill(self, d: RateDecision, levels: list[float], now: float) -> None:
        """Report, per kind, the bucket with the least left (tenant or key) in the OpenAI headers."""
        share = self._share()
        for kind in ("requests", "tokens"):
            best = None
            for b, lv in zip(d.buckets, levels, strict=True):
                if b.kind == kind and (best is None or lv < best[1]):
                    best = (b, lv)
            if best is None:
                continue
            b, lv = best
            cap = b.capacity * share
            reset = max(0.0, (cap - lv) / (cap / 60))
            if kind == "requests":
                d.limit_requests, d.remaining_requests, d.reset_requests = b.capacity, max(0, math.floor(lv)), reset
            else:
                d.limit_tokens, d.remaining_tokens, d.reset_tokens = b.capacity, max(0, math.floor(lv)), reset

    def _set_gauge(self) -> None:
        for m in ("in-process", "redis", "fallback"):
            RATELIMIT_MODE.labels(m).set(1 if m == self.mode else 0)
