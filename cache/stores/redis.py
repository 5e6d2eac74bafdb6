"""The shared store: Redis holds entries, vectors, metadata and TTLs; replicas sync through pub/sub.

Layout (tenant ids are hex-encoded in keys, so no tenant's key can match another tenant's pattern):
  {p}:t:{tenant}:e:{id}   hash  d=entry JSON, v=float32 vector bytes, c=context key, x=exact key   (TTL)
  {p}:t:{tenant}:x:{key}  str   entry id                                                           (TTL)
  {p}:t:{tenant}:lru      zset  id → last use (LRU eviction order)
  {p}:t:{tenant}:exp      zset  id → expiry time (rebuilds skip expired ids; sweeps trim it)
  {p}:tenants             set   tenant ids (plain)
  {p}:events              channel  {"o": origin, "op": insert|delete, "t": tenant, ...} (a flush publishes
                                   the deletes of what it removed; "flush" from older replicas is applied);
                                   an insert carries each entry's id, context, expiry, vector and text

Every replica subscribes to the channel, applies other replicas' inserts and deletes to its
own FAISS index, and rebuilds its index from Redis at start and after every reconnect (pub/sub does
not replay what was missed while disconnected, so a reconnect always resyncs).

Redis down: every call has a timeout (socket and asyncio); a call that fails returns a miss / False
at once. Before the store is marked down, one ping (shared by every call that failed meanwhile)
asks whether Redis is still there: a burst that waited for pooled connections, or a slow moment on
a busy event loop, is a slow call, not an outage, and must not cost every replica's index a full
resync. When the ping fails too, the store is unhealthy: calls do not touch the network at all, and a
supervisor task pings until Redis answers, then resubscribes, resyncs and marks the store healthy.
Connections come from a bounded, blocking pool: a burst of stores queues for one instead of opening a
connection each.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

import numpy as np
import orjson
import redis.asyncio as aioredis
import structlog
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from cache.entry import DIM, CacheEntry, valid_entry_id
from cache.stopping import stop_task
from cache.stores.base import CacheStore, IndexRecord, StoreEvent, StoreListener, TenantUsage

log = structlog.get_logger("switchyard.cache.redis")

# An outage is a Redis we cannot reach. An error *reply* (out of memory under maxmemory, a read-only
# replica) fails that one call and leaves the store up: reads still serve hits.
_OUTAGE = (RedisConnectionError, RedisTimeoutError, OSError, asyncio.TimeoutError, ConnectionError)
_DELETE_IF_EQUAL = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
# Store one entry and make room, atomically: two puts racing cannot evict each other's new entry or
# leave the LRU set above its bound. KEYS: entry, exact pointer, lru, exp, tenants. ARGV: id, ttl ms,
# now, expires_at, tenant, max entries (-1: none), d, c, x, v ('' : none), event (insert with a vector;
# else a delete, published only if the id held an entry whose vector replicas may index), channel.
# Returns {1 if the id held an entry, the ids to delete: the exact key's previous entry, the LRU's oldest}.
# Its first write is a SET, which Redis refuses under maxmemory: a full Redis fails the put cleanly
# (a script whose first write is allowed, like DEL, may go on writing past the limit).
_PUT = """
local prev = redis.call('GET', KEYS[2])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
local existed = redis.call('DEL', KEYS[1])
if ARGV[10] ~= '' then
  redis.call('HSET', KEYS[1], 'd', ARGV[7], 'c', ARGV[8], 'x', ARGV[9], 'v', ARGV[10])
else
  redis.call('HSET', KEYS[1], 'd', ARGV[7], 'c', ARGV[8], 'x', ARGV[9])
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[4], ARGV[1])
redis.call('SADD', KEYS[5], ARGV[5])
if ARGV[10] ~= '' or existed == 1 then redis.call('PUBLISH', ARGV[12], ARGV[11]) end
local stale = {}
if prev and prev ~= ARGV[1] then table.insert(stale, prev) end
local limit = tonumber(ARGV[6])
if limit >= 0 then
  local over = redis.call('ZCARD', KEYS[3]) - limit
  if over > 0 then
    for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, over)) do
      if over > 0 and id ~= ARGV[1] then
        redis.call('ZREM', KEYS[3], id)
        table.insert(stale, id)
        over = over - 1
      end
    end
  end
end
return {existed, stale}
"""
# Count a hit only on an entry that still exists: a hit racing a delete must not write the hash back
# (without its TTL). KEYS: entry, lru. ARGV: now, id.
_TOUCH = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'h', 1)
  redis.call('HSET', KEYS[1], 'l', ARGV[1])
  redis.call('ZADD', KEYS[2], 'XX', ARGV[1], ARGV[2])
end
return 0
"""
# The tenant leaves the tenant set only once its LRU set is empty (a put racing a flush keeps it).
_FORGET_TENANT_IF_EMPTY = """
if redis.call('ZCARD', KEYS[1]) == 0 then return redis.call('SREM', KEYS[2], ARGV[1]) end
return 0
"""


_FIELDS = [b"d", b"v", b"h", b"l"]  # entry JSON, vector, hits and last hit counted since it was stored


class RedisStore(CacheStore):
    name = "redis"
    shared = True

    def __init__(self, url: str, *, prefix: str = "sy:cache", op_timeout: float = 0.25,
                 connect_timeout: float = 0.5, retry_interval: float = 0.5, batch: int = 500,
                 max_connections: int = 64) -> None:
        self.url = url
        self.prefix = prefix
        self.op_timeout = op_timeout
        self.retry_interval = retry_interval
        self.batch = batch
        self.origin = uuid.uuid4().hex  # this replica, so it can skip its own messages
        # Waiting for a pooled connection counts inside each call's own timeout (`_run`); the pool's
        # timeout only bounds callers that have none.
        pool = aioredis.BlockingConnectionPool.from_url(
            url, max_connections=max_connections, timeout=op_timeout * 4, socket_timeout=op_timeout,
            socket_connect_timeout=connect_timeout, retry=Retry(NoBackoff(), 0), health_check_interval=0,
            decode_responses=False,
        )
        self._client = aioredis.Redis.from_pool(pool)
        self._confirming: asyncio.Task | None = None
        self.slow_calls = 0  # calls that failed while Redis still answered a ping
        self._listener: StoreListener | None = None
        self._healthy = False
        self._synced = False
        self._closed = False
        self._supervisor: asyncio.Task | None = None
        self._background: set[asyncio.Task] = set()
        self._ready = asyncio.Event()
        self.outages = 0
        self.resyncs = 0
        self.last_error: str | None = None

    # --- keys ---------------------------------------------------------------------------------

    @staticmethod
    def _t(tenant: str) -> str:
        return tenant.encode().hex()

    def _entry_key(self, tenant: str, entry_id: str) -> str:
        return f"{self.prefix}:t:{self._t(tenant)}:e:{entry_id}"

    def _exact_key(self, tenant: str, exact_key: str) -> str:
        return f"{self.prefix}:t:{self._t(tenant)}:x:{exact_key}"

    def _lru_key(self, tenant: str) -> str:
        return f"{self.prefix}:t:{self._t(tenant)}:lru"

    def _exp_key(self, tenant: str) -> str:
        return f"{self.prefix}:t:{self._t(tenant)}:exp"

    @property
    def _tenants_key(self) -> str:
        return f"{self.prefix}:tenants"

    @property
    def channel(self) -> str:
        return f"{self.prefix}:events"

    # --- lifecycle and health -----------------------------------------------------------------

    @property
    def healthy(self) -> bool:
        """Connected *and* the listener's index rebuilt since the last outage: until then the local
        index may still hold vectors of entries Redis lost, so the cache reports itself down."""
        return self._healthy and self._synced and not self._closed

    def _connected(self) -> bool:
        """Whether calls may use the network (true during the resync, which reads through them)."""
        return self._healthy and not self._closed

    def status(self) -> dict:
        return {"store": self.name, "healthy": self.healthy, "url": _redact(self.url), "outages": self.outages,
                "resyncs": self.resyncs, "slow_calls": self.slow_calls, "last_error": self.last_error}

    async def start(self, listener: StoreListener, *, wait: float = 2.0) -> None:
        """Start the supervisor; wait up to `wait` s for the first sync. A Redis that is down at start
        is not an error: the gateway serves uncached and the supervisor keeps trying."""
        self._listener = listener
        self._supervisor = asyncio.get_running_loop().create_task(self._supervise(), name="redis-cache-sync")
        try:
            async with asyncio.timeout(wait):
                await self._ready.wait()
        except TimeoutError:
            log.warning("cache.redis.unavailable_at_start", url=_redact(self.url))

    async def aclose(self) -> None:
        self._closed = True
        await stop_task(self._supervisor)
        await stop_task(self._confirming)
        for task in list(self._background):
            task.cancel()
        try:
            async with asyncio.timeout(self.op_timeout * 2):
                await self._client.aclose()
        except _OUTAGE:
            pass

    def _failed(self, exc: BaseException, op: str) -> None:
        if self._healthy:
            self.outages += 1
            log.warning("cache.redis.down", op=op, error=repr(exc))
        self._healthy = self._synced = False
        self._ready.clear()
        self.last_error = f"{op}: {exc!r}"

    async def _supervise(self) -> None:
        while not self._closed:
            pubsub = None
            try:
                async with asyncio.timeout(self.op_timeout * 4):
                    await self._client.ping()
                pubsub = self._client.pubsub(ignore_subscribe_messages=True)
                async with asyncio.timeout(self.op_timeout * 4):
                    await pubsub.subscribe(self.channel)
                # Subscribed before reading, so nothing published during the rebuild is lost
                # (an insert seen twice is harmless: applying it is idempotent).
                self._healthy = True
                if self._listener is not None:
                    await self._listener.resync()
                if not self._healthy:
                    raise ConnectionError("lost Redis during resync")
                self.resyncs += 1
                self._synced = True
                self._ready.set()
                log.info("cache.redis.synced", url=_redact(self.url))
                last_ping = time.monotonic()
                while not self._closed:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is not None and message.get("type") == "message":
                        self._on_message(message["data"])
                    if time.monotonic() - last_ping > 2.0:  # a half-open socket shows up here
                        async with asyncio.timeout(self.op_timeout * 4):
                            await self._client.ping()
                        last_ping = time.monotonic()
                    if not self._healthy:  # a request saw an outage: reconnect and resync
                        raise ConnectionError(self.last_error or "outage seen by a request")
            except asyncio.CancelledError:
                raise
            except _OUTAGE as exc:
                self._failed(exc, "supervise")
            except Exception as exc:  # noqa: BLE001 - whatever broke, the sync task must live and retry
                log.error("cache.redis.sync_failed", error=repr(exc))
                self._failed(exc, "supervise")
            finally:
                if pubsub is not None:
                    try:
                        async with asyncio.timeout(self.op_timeout):
                            await pubsub.aclose()
                    except (*_OUTAGE, Exception):  # noqa: BLE001 - the connection is gone anyway
                        pass
            if not self._closed:
                await asyncio.sleep(self.retry_interval)

    def _on_message(self, data: bytes) -> None:
        """Apply another replica's change. A message this replica cannot read (another version, a
        stray publisher) is logged and skipped: it must never stop the sync."""
        try:
            msg = orjson.loads(data)
            if not isinstance(msg, dict) or msg.get("o") == self.origin or self._listener is None:
                return
            tenant = str(msg.get("t", ""))
            op = msg.get("op")
            if op == "insert":
                records = [IndexRecord(r["id"], tenant, r["c"], np.frombuffer(bytes.fromhex(r["v"]), np.float32).copy(),
                                       float(r["e"]), r["x"] if isinstance(r.get("x"), str) else None)
                           for r in msg.get("r", [])]
                if not all(valid_entry_id(r.id) and r.vector.shape == (DIM,) for r in records):
                    raise ValueError("insert with a bad entry id or vector")
                self._listener.apply(StoreEvent("insert", tenant, records=records))
            elif op == "delete":
                ids = [str(i) for i in msg.get("ids", [])]
                self._listener.apply(StoreEvent("delete", tenant, ids=[i for i in ids if valid_entry_id(i)]))
            elif op == "flush":
                self._listener.apply(StoreEvent("flush", tenant))
        except Exception as exc:  # noqa: BLE001 - one bad message costs that message, not the sync
            log.warning("cache.redis.bad_event", error=repr(exc), size=len(data))

    def _message(self, op: str, tenant: str, **fields: Any) -> bytes:
        return orjson.dumps({"o": self.origin, "op": op, "t": tenant, **fields})

    async def _run(self, op: str, coro, default):
        """Run one Redis call with a hard timeout; an outage returns `default`, never raises.
        `asyncio.timeout`, not `asyncio.wait_for`, which can lose a cancellation (cache/stopping.py)."""
        if not self._connected():
            coro.close()
            return default
        try:
            async with asyncio.timeout(self.op_timeout * 2):
                return await coro
        except _OUTAGE as exc:
            if await self._still_there():
                # Slow, not down: this call is lost (a write's outcome is unknown: it may yet apply,
                # which leaves at most a stale or a missing vector in this replica's index, both
                # harmless), but the store stays up and no replica resyncs.
                self.slow_calls += 1
                self.last_error = f"{op}: {exc!r}"
                log.warning("cache.redis.slow_call", op=op, error=repr(exc))
            else:
                self._failed(exc, op)
            return default
        except RedisError as exc:  # an error reply (e.g. OOM): this call failed, Redis is still there
            self.last_error = f"{op}: {exc!r}"
            log.warning("cache.redis.error_reply", op=op, error=repr(exc))
            return default

    async def _still_there(self) -> bool:
        """Does Redis answer a ping? One ping at a time: every call that failed meanwhile awaits it."""
        if self._confirming is None or self._confirming.done():
            self._confirming = asyncio.get_running_loop().create_task(self._ping())
        return await asyncio.shield(self._confirming)

    async def _ping(self) -> bool:
        if not self._connected():
            return False
        try:
            async with asyncio.timeout(self.op_timeout * 4):
                await self._client.ping()
            return True
        except (*_OUTAGE, RedisError):
            return False

    def _spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # --- entries --------------------------------------------------------------------------------

    async def put(self, entry: CacheEntry, *, max_entries: int | None = None) -> bool:
        if not self._connected():
            return False
        tenant = entry.tenant
        ttl_ms = max(1, int((entry.expires_at - time.time()) * 1000))
        vector = b"" if entry.vector is None else np.asarray(entry.vector, np.float32).tobytes()
        if entry.vector is not None:
            record = {"id": entry.id, "c": entry.context_key, "e": entry.expires_at, "v": vector.hex(), "x": entry.text}
            message = self._message("insert", tenant, r=[record])
        else:  # replacing an entry (an import re-using its id) must take the old vector out of every index
            message = self._message("delete", tenant, ids=[entry.id])
        keys = [self._entry_key(tenant, entry.id), self._exact_key(tenant, entry.exact_key), self._lru_key(tenant),
                self._exp_key(tenant), self._tenants_key]
        args = [entry.id, ttl_ms, repr(time.time()), repr(entry.expires_at), tenant,
                -1 if max_entries is None else max_entries, orjson.dumps(entry.to_dict(with_vector=False)),
                entry.context_key, entry.exact_key, vector, message, self.channel]
        result = await self._run("put", self._client.eval(_PUT, len(keys), *keys, *args), None)
        if result is None:
            return False
        existed, stale = result
        # Indexed before anything else is awaited, so a delete of this entry that another replica
        # publishes from now on finds the vector to remove.
        if self._listener is not None:
            if entry.vector is not None:
                self._listener.apply(StoreEvent("insert", tenant, records=[
                    IndexRecord(entry.id, tenant, entry.context_key, entry.vector, entry.expires_at, entry.text)]))
            elif existed:
                self._listener.apply(StoreEvent("delete", tenant, ids=[entry.id]))
        if stale:
            await self.delete(tenant, [i.decode() for i in stale])
        return True

    def _decode(self, tenant: str, raw: dict[bytes, bytes] | list | None) -> CacheEntry | None:
        if not raw:
            return None
        data, vector, hits, last_hit = raw if isinstance(raw, list) else (raw.get(f) for f in _FIELDS)
        if data is None:
            return None
        entry = CacheEntry.from_dict(orjson.loads(data))
        if entry.tenant != tenant:  # defence in depth: keys are tenant-scoped already
            return None
        if vector:
            entry.vector = np.frombuffer(vector, np.float32).copy()
        if hits:  # counted by touch() next to the entry's JSON
            entry.hits += int(hits)
            entry.last_hit_at = float(last_hit) if last_hit else entry.last_hit_at
        return None if entry.expired() else entry

    async def get(self, tenant: str, entry_id: str) -> CacheEntry | None:
        raw = await self._run("get", self._client.hmget(self._entry_key(tenant, entry_id), _FIELDS), None)
        return self._decode(tenant, raw)

    async def get_many(self, tenant: str, entry_ids: Sequence[str]) -> list[CacheEntry | None]:
        if not entry_ids:
            return []
        pipe = self._client.pipeline(transaction=False)
        for entry_id in entry_ids:
            pipe.hmget(self._entry_key(tenant, entry_id), _FIELDS)
        raws = await self._run("get", pipe.execute(), None)
        if raws is None:
            return [None] * len(entry_ids)
        return [self._decode(tenant, raw) for raw in raws]

    async def get_exact(self, tenant: str, exact_key: str) -> CacheEntry | None:
        entry_id = await self._run("get_exact", self._client.get(self._exact_key(tenant, exact_key)), None)
        if not entry_id:
            return None
        return await self.get(tenant, entry_id.decode())

    def touch(self, tenant: str, entry_id: str) -> None:
        if not self._connected():
            return
        keys = [self._entry_key(tenant, entry_id), self._lru_key(tenant)]
        self._spawn(self._run("touch", self._client.eval(_TOUCH, 2, *keys, repr(time.time()), entry_id), None))

    async def _delete_keys(self, tenant: str, entry_ids: Sequence[str]) -> int | None:
        """Delete entries' keys, in chunks; each chunk's delete event is published in the same
        transaction, so no replica can miss a delete that happened."""
        removed = 0
        for start in range(0, len(entry_ids), self.batch):
            chunk = list(entry_ids[start:start + self.batch])
            pipe = self._client.pipeline(transaction=False)
            for entry_id in chunk:
                pipe.hget(self._entry_key(tenant, entry_id), b"x")
            exact_keys = await self._run("delete", pipe.execute(), None)
            if exact_keys is None:
                return None
            pipe = self._client.pipeline(transaction=True)
            for entry_id, exact in zip(chunk, exact_keys):
                pipe.delete(self._entry_key(tenant, entry_id))
                if exact:
                    pipe.eval(_DELETE_IF_EQUAL, 1, self._exact_key(tenant, exact.decode()), entry_id)
            pipe.zrem(self._lru_key(tenant), *chunk)
            pipe.zrem(self._exp_key(tenant), *chunk)
            pipe.publish(self.channel, self._message("delete", tenant, ids=chunk))
            results = await self._run("delete", pipe.execute(), None)
            if results is None:
                return None
            removed += sum(1 for exact in exact_keys if exact)
        return removed

    async def delete(self, tenant: str, entry_ids: Sequence[str]) -> int:
        entry_ids = list(dict.fromkeys(entry_ids))
        if not entry_ids or not self._connected():
            return 0
        removed = await self._delete_keys(tenant, entry_ids)
        if removed is None:
            return 0
        if self._listener is not None:
            self._listener.apply(StoreEvent("delete", tenant, ids=entry_ids))
        return removed

    async def flush(self, tenant: str) -> int:
        if not self._connected():
            return 0
        ids = await self._run("flush", self._client.zrange(self._lru_key(tenant), 0, -1), None)
        if ids is None:
            return 0
        ids = [i.decode() for i in ids]
        # Only what was read is deleted: an entry stored meanwhile keeps its place in the LRU and
        # expiry sets (and the tenant its place in the tenant set), so it stays listed and evictable.
        removed = await self._delete_keys(tenant, ids) if ids else 0
        if removed is None:
            return 0
        await self._run("flush", self._client.eval(_FORGET_TENANT_IF_EMPTY, 2, self._lru_key(tenant),
                                                    self._tenants_key, tenant), None)
        # Replicas drop what was deleted (the chunks' delete events), never the whole tenant: an entry
        # stored during the flush keeps its vector everywhere.
        if self._listener is not None and ids:
            self._listener.apply(StoreEvent("delete", tenant, ids=ids))
        return removed

    async def forget_expired(self, tenant: str, entry_ids: Sequence[str] = ()) -> None:
        # The hashes expired by TTL already; trim the bookkeeping sets of every expired id, those of
        # entries without a vector too (idempotent on every replica).
        if not self._connected():
            return
        expired = await self._ids_by_expiry("forget_expired", tenant, "-inf", time.time())
        if expired is None:
            return
        ids = set(expired) | set(entry_ids)
        if not ids:
            return
        pipe = self._client.pipeline(transaction=False)
        pipe.zrem(self._lru_key(tenant), *ids)
        pipe.zrem(self._exp_key(tenant), *ids)
        await self._run("forget_expired", pipe.execute(), None)

    async def _ids_by_expiry(self, op: str, tenant: str, low: float | str, high: float | str) -> list[str] | None:
        """The tenant's entry ids whose expiry lies in [low, high]; None when Redis could not be read."""
        raw = await self._run(op, self._client.zrangebyscore(self._exp_key(tenant), low, high), None)
        return None if raw is None else [i.decode() for i in raw]

    async def _live_ids(self, tenant: str) -> list[str]:
        return await self._ids_by_expiry("scan", tenant, time.time(), "+inf") or []

    async def iter_entries(self, tenant: str | None = None) -> AsyncIterator[CacheEntry]:
        tenants = [tenant] if tenant is not None else await self.tenants()
        for t in tenants:
            ids = await self._live_ids(t)
            for start in range(0, len(ids), self.batch):
                for entry in await self.get_many(t, ids[start:start + self.batch]):
                    if entry is not None:
                        yield entry

    async def iter_records(self) -> AsyncIterator[IndexRecord]:
        """For a rebuild: a read that fails raises (a partial rebuild must never pass for a whole one);
        a record no replica could index (an id FAISS cannot hold, a vector of the wrong size) is skipped."""
        tenants = await self._run("rebuild", self._client.smembers(self._tenants_key), None)
        if tenants is None:
            raise ConnectionError("rebuild: the tenant set could not be read")
        for tenant in sorted(t.decode() for t in tenants):
            ids = await self._ids_by_expiry("rebuild", tenant, time.time(), "+inf")
            if ids is None:
                raise ConnectionError("rebuild: a tenant's entry ids could not be read")
            for start in range(0, len(ids), self.batch):
                chunk = ids[start:start + self.batch]
                pipe = self._client.pipeline(transaction=False)
                for entry_id in chunk:
                    pipe.hmget(self._entry_key(tenant, entry_id), [b"c", b"v", b"d"])
                rows = await self._run("rebuild", pipe.execute(), None)
                if rows is None:
                    raise ConnectionError("rebuild: entries could not be read")
                for entry_id, (context, vector, data) in zip(chunk, rows):
                    if context is None or not vector or len(vector) != DIM * 4 or not valid_entry_id(entry_id):
                        continue
                    expires_at = orjson.loads(data)["expires_at"] if data else time.time()
                    yield IndexRecord(entry_id, tenant, context.decode(), np.frombuffer(vector, np.float32).copy(),
                                      float(expires_at))

    async def tenants(self) -> list[str]:
        raw = await self._run("tenants", self._client.smembers(self._tenants_key), None)
        return sorted(t.decode() for t in raw) if raw else []

    async def usage(self, tenant: str) -> TenantUsage:
        ids = await self._live_ids(tenant)
        total = 0
        for start in range(0, len(ids), self.batch):
            pipe = self._client.pipeline(transaction=False)
            for entry_id in ids[start:start + self.batch]:
                pipe.memory_usage(self._entry_key(tenant, entry_id))
            sizes = await self._run("usage", pipe.execute(), None)
            total += sum(s or 0 for s in sizes or [])
        return TenantUsage(entries=len(ids), bytes=total)


def _redact(url: str) -> str:
    """Never log a password: redis://user:secret@host → redis://user:***@host."""
    if "@" not in url or "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    creds, host = rest.rsplit("@", 1)
    user = creds.split(":", 1)[0] if ":" in creds else ""
    return f"{scheme}://{user}:***@{host}"
