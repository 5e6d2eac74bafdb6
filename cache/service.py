"""`CacheService`: the gateway's single entry point to the cache.

Pipeline use (see docs/cache.md):
  step 5 (encode):  embed = an async function returning the request vector (computed once, shared)
  step 6 (cache):   look = await service.lookup(tenant_id, policy, endpoint, body, embed)
                    headers.update(look.headers); on look.hit → render with cache.render and answer
  step 12 (record): if look.result == "miss" and the answer completed: await service.store(...)

Layers, in order: exact (hash of the normalised request) → semantic (FAISS over the namespace
tenant + request context, cosine ≥ threshold, then the near-miss guard) → miss.
Isolation: the tenant id is in every key, every index namespace and every store call, and an entry
read back is checked to belong to the asking tenant before it is served.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import structlog

from cache import guard as near_miss
from cache import keys, synonyms
from cache.embed_text import SEMANTIC_MAX_CHARS, embedding_text, semantic_eligible
from cache.entry import (DIM, CacheEntry, CacheHit, CacheLookup, entry_id_of, faiss_id, fingerprint_or_none,
                         new_entry_id)
from cache.importing import BadImportLine, entry_from_line
from cache.index import VectorIndex
from cache.metrics import ENTRIES, GUARD_REJECTIONS, LOOKUP_SECONDS, LOOKUPS, REDIS_UP, STORES, TenantStats
from cache.stores.base import CacheStore, IndexRecord, StoreEvent
from cache.stopping import stop_task
from cache.stores.memory import MemoryStore
from policies.schema import CachePolicy

log = structlog.get_logger("switchyard.cache")

STORABLE_FINISH_REASONS = frozenset({"stop", "length"})  # tool calls and filtered answers are not replayable
CANDIDATES = 4  # nearest neighbours checked per semantic lookup (the first that passes is served)
# Scores of one vector against itself land within ~1e-7 (flat) or ~1e-4 (fp16 IVF codes) of 1.0: without
# this slack a threshold of 1.0 ("only the same text") would hit or miss by rounding.
SCORE_SLACK = 1e-4

Embedding = np.ndarray | Callable[[], Awaitable[np.ndarray | None]] | None
"""The request vector, or an async function that computes it: `lookup` calls it only when the semantic
layer needs the vector, so an exact hit (or a namespace with nothing to search) never waits for the
encoder."""

Verifier = Callable[[str, str], near_miss.Verdict]


class CacheService:
    def __init__(self, storage: CacheStore, encoder=None, *, verifier: Verifier = near_miss.verify,
                 sweep_interval: float = 10.0, nprobe: int = 16, ivf_min: int | None = None) -> None:
        self.storage = storage
        self.encoder = encoder
        self.verifier = verifier
        self.sweep_interval = sweep_interval
        self.nprobe = nprobe
        self.ivf_min = ivf_min
        # (tenant, context key) → index; tenant → {entry id → (context key, expires_at)}
        self._indexes: dict[tuple[str, str], VectorIndex] = {}
        self._meta: dict[str, dict[str, tuple[str, float]]] = {}
        self._gauged: set[str] = set()  # tenants whose entries gauge is set
        self._threshold_overrides: dict[str, float] = {}
        self._stats: dict[str, TenantStats] = {}
        self._buffer: list[StoreEvent] | None = None  # events that arrive during a resync
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cache-index")
        self._housekeeper: asyncio.Task | None = None
        self._closed = False
        self._owns_encoder = False
        self.started_at = time.time()

    # --- lifecycle ----------------------------------------------------------------------------------

    @classmethod
    async def create(cls, redis_url: str | None = None, *, encoder=None, load_encoder: bool = True,
                     memory_max_entries: int = 100_000, memory_max_bytes: int = 512 * 1024 * 1024,
                     redis_prefix: str = "sy:cache", redis_timeout: float = 0.25, **options: Any) -> CacheService:
        """A started service: Redis store when `redis_url` is given, else the in-memory store. The
        encoder is loaded (in a thread) unless one is passed or `load_encoder` is False."""
        if redis_url:
            from cache.stores.redis import RedisStore

            store: CacheStore = RedisStore(redis_url, prefix=redis_prefix, op_timeout=redis_timeout)
        else:
            store = MemoryStore(max_entries=memory_max_entries, max_bytes=memory_max_bytes)
        owns = False
        if encoder is None and load_encoder:
            from cache.encoder import Encoder

            encoder = await asyncio.get_running_loop().run_in_executor(None, Encoder.load)
            owns = True
        service = cls(store, encoder, **options)
        service._owns_encoder = owns
        await service.start()
        return service

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        if self.verifier in (near_miss.verify, near_miss.verify_rules):  # load the guard's data off the loop
            await loop.run_in_executor(None, synonyms.table)
        if self.verifier is near_miss.verify:
            await loop.run_in_executor(None, near_miss.learned_model)
        await self.storage.start(self)
        self._housekeeper = loop.create_task(self._housekeeping(), name="cache-housekeeping")

    async def aclose(self) -> None:
        self._closed = True  # the housekeeper also stops on this (cache/stopping.py says why)
        await stop_task(self._housekeeper)
        await self.storage.aclose()
        if self._owns_encoder and self.encoder is not None:
            await self.encoder.aclose()
        self._executor.shutdown(wait=False, cancel_futures=True)

    @property
    def healthy(self) -> bool:
        return self.storage.healthy

    def status(self) -> dict:
        """For /readyz detail. The cache being down never makes the gateway unready: it serves uncached."""
        return {
            **self.storage.status(),
            "encoder": getattr(self.encoder, "backend", None),
            "semantic_entries": sum(len(ix) for ix in self._indexes.values()),
            "namespaces": len(self._indexes),
        }

    # --- StoreListener: keep the local indexes equal to the store --------------------------------

    def apply(self, event: StoreEvent) -> None:
        if self._buffer is not None:
            self._buffer.append(event)
        self._apply(event, self._indexes, self._meta)

    def _apply(self, event: StoreEvent, indexes: dict, meta: dict) -> None:
        tenant = event.tenant
        if event.op == "insert":
            for record in event.records:
                self._insert(record, indexes, meta)
        elif event.op == "delete":
            tenant_meta = meta.get(tenant, {})
            for entry_id in event.ids:
                known = tenant_meta.pop(entry_id, None)
                if known is not None:
                    key = (tenant, known[0])
                    index = indexes.get(key)
                    if index is not None:
                        index.remove([faiss_id(entry_id)])
                        if not len(index) and not index.rebuilding:  # namespaces come and go with conversations
                            del indexes[key]
            if not tenant_meta:
                meta.pop(tenant, None)
        elif event.op == "flush":
            meta.pop(tenant, None)
            for key in [k for k in indexes if k[0] == tenant]:
                del indexes[key]

    def _insert(self, record: IndexRecord, indexes: dict, meta: dict) -> None:
        if record.vector is None:
            return
        tenant_meta = meta.setdefault(record.tenant, {})
        previous = tenant_meta.get(record.id)
        if previous is not None and previous[0] != record.context_key:
            old = indexes.get((record.tenant, previous[0]))
            if old is not None:
                old.remove([faiss_id(record.id)])
        key = (record.tenant, record.context_key)
        index = indexes.get(key)
        if index is None:
            index = indexes[key] = VectorIndex(nprobe=self.nprobe, ivf_min=self.ivf_min)
        index.add([faiss_id(record.id)], np.asarray(record.vector, np.float32)[None, :])
        tenant_meta[record.id] = (record.context_key, record.expires_at)
        if index is self._indexes.get(key) and index.needs_rebuild():
            try:
                index.schedule_rebuild(self._executor)
            except RuntimeError:  # no running loop (offline use): the next insert schedules it
                pass
        if record.text is not None:
            self._prepare_for_guard(record.tenant, record.text)

    def _prepare_for_guard(self, tenant_id: str, text: str) -> None:
        """Read a new entry's text for the guard when it is inserted (stored here after its answer went
        out, imported, or inserted by another replica: live inserts carry the text), rather than on the
        hit path of the first request it may answer. Entries loaded at start are read when first compared."""
        if self.verifier not in (near_miss.verify, near_miss.verify_rules):
            return
        try:
            near_miss.prepare(text, learned=self.verifier is near_miss.verify)
        except Exception as exc:  # noqa: BLE001 - the entry is indexed; the guard reads it again when compared
            log.error("cache.guard_prepare_failed", tenant=tenant_id, error=type(exc).__name__, detail=str(exc)[:200])

    async def resync(self) -> None:
        """Rebuild every index from the store; events that arrive meanwhile are replayed after."""
        self._buffer = []
        try:
            grouped: dict[tuple[str, str], tuple[list[int], list[np.ndarray]]] = {}
            meta: dict[str, dict[str, tuple[str, float]]] = {}
            now = time.time()
            async for record in self.storage.iter_records():
                if record.vector is None or record.expires_at <= now:
                    continue
                ids, vectors = grouped.setdefault((record.tenant, record.context_key), ([], []))
                ids.append(faiss_id(record.id))
                vectors.append(record.vector)
                meta.setdefault(record.tenant, {})[record.id] = (record.context_key, record.expires_at)
            indexes: dict[tuple[str, str], VectorIndex] = {}
            loop = asyncio.get_running_loop()
            for key, (ids, vectors) in grouped.items():
                index = VectorIndex(nprobe=self.nprobe, ivf_min=self.ivf_min)
                matrix = np.stack(vectors).astype(np.float32)
                id_array = np.asarray(ids, np.int64)
                if len(ids) >= index.ivf_min:  # big namespace: train the IVF off the event loop
                    await loop.run_in_executor(self._executor, index.load, id_array, matrix)
                else:
                    index.load(id_array, matrix)
                indexes[key] = index
            for event in self._buffer:
                self._apply(event, indexes, meta)
            self._indexes, self._meta = indexes, meta
            log.info("cache.resynced", store=self.storage.name, entries=sum(len(m) for m in meta.values()),
                     namespaces=len(indexes))
        finally:
            self._buffer = None

    # --- policy -------------------------------------------------------------------------------------

    def threshold(self, tenant_id: str, policy: CachePolicy) -> float:
        return self._threshold_overrides.get(tenant_id, policy.threshold)

    def set_threshold(self, tenant_id: str, value: float | None) -> None:
        """Run-time override of a tenant's semantic threshold (None removes it). Per replica."""
        if value is None:
            self._threshold_overrides.pop(tenant_id, None)
        else:
            if not 0.0 <= value <= 1.0:
                raise ValueError("threshold must be between 0 and 1")
            self._threshold_overrides[tenant_id] = float(value)

    def threshold_overrides(self) -> dict[str, float]:
        return dict(self._threshold_overrides)

    def bypass_reason(self, policy: CachePolicy, body: dict, endpoint: str = "chat") -> str | None:
        if not policy.enabled:
            return "disabled by policy"
        return keys.uncacheable_reason(endpoint, body, only_deterministic=policy.only_deterministic)

    def cacheable(self, policy: CachePolicy, body: dict, endpoint: str = "chat") -> bool:
        return self.bypass_reason(policy, body, endpoint) is None

    # --- the request path ---------------------------------------------------------------------------

    def _tenant_stats(self, tenant_id: str) -> TenantStats:
        stats = self._stats.get(tenant_id)
        if stats is None:
            stats = self._stats[tenant_id] = TenantStats()
        return stats

    def _record(self, tenant_id: str, look: CacheLookup, started: float) -> CacheLookup:
        seconds = time.perf_counter() - started
        self._tenant_stats(tenant_id).record(look.result, seconds)
        LOOKUPS.labels(tenant_id, look.result).inc()
        LOOKUP_SECONDS.labels(look.result).observe(seconds)
        return look

    async def lookup(self, tenant_id: str, policy: CachePolicy, endpoint: str, body: dict,
                     embedding: Embedding = None, *, scope: str = "", bypass: str | None = None,
                     max_age: int | None = None) -> CacheLookup:
        """Exact, then semantic. Never raises for a store outage (→ bypass). `embedding` is the request
        vector from the encode step, or a function computing it, called only after an exact miss when
        the namespace has entries to search; without it the service encodes the text itself. `scope`:
        what else decides the answer (`keys.request_digest`); `bypass`: a reason the caller has to
        skip the cache (counted and reported like the service's own). `max_age`: the client's limit
        on an entry's age in seconds (`cache.directives`); 0 answers a miss without looking, so the
        fresh answer is stored in place of the old one."""
        started = time.perf_counter()
        reason = bypass or self.bypass_reason(policy, body, endpoint)
        if reason is None and not self.storage.healthy:
            reason = "store unavailable"
        if reason is not None:
            return self._record(tenant_id, CacheLookup("bypass", reason=reason), started)
        if max_age == 0:
            return self._record(tenant_id, CacheLookup("miss", reason="client no-cache"), started)
        born_after = time.time() - max_age if max_age is not None else None
        exact_key = keys.exact_key(tenant_id, endpoint, body, scope)
        entry = await self.storage.get_exact(tenant_id, exact_key)
        refused: str | None = None
        # The entry must be this request's, not merely what the pointer names (an id re-used by an import)
        if entry is not None and entry.tenant == tenant_id and entry.exact_key == exact_key:
            if born_after is None or entry.created_at >= born_after:
                self.storage.touch(tenant_id, entry.id)
                return self._record(tenant_id, CacheLookup("hit-exact", CacheHit("exact", 1.0, entry)), started)
            refused = "older than max-age"
        if policy.semantic and semantic_eligible(endpoint, body):
            context = keys.context_key(tenant_id, endpoint, body, scope)
            index = self._indexes.get((tenant_id, context))
            if index is not None and len(index):
                text = embedding_text(endpoint, body)
                vector = await self._vector(tenant_id, text, embedding)
                if vector is None:
                    refused = "no vector"
                else:
                    hit, semantic_refused = await self._semantic(tenant_id, policy, context, text, vector, index,
                                                                 born_after)
                    refused = semantic_refused or refused
                    if hit is not None:
                        self.storage.touch(tenant_id, hit.entry_id)
                        return self._record(tenant_id, CacheLookup("hit-semantic", hit), started)
        if not self.storage.healthy:  # the store failed during this lookup
            return self._record(tenant_id, CacheLookup("bypass", reason="store unavailable"), started)
        return self._record(tenant_id, CacheLookup("miss", reason=refused), started)

    async def _vector(self, tenant_id: str, text: str, embedding: Embedding) -> np.ndarray | None:
        """The request vector: the caller's (or what its function returns), else the service's own
        encoder's. An encoder that fails costs the semantic layer for this request, never the request."""
        try:
            if callable(embedding):
                vector = await embedding()
            elif embedding is None and self.encoder is not None:
                vector = await self.encoder.embed(text)
            else:
                vector = embedding
            if vector is None:
                return None
            vector = np.asarray(vector, np.float32).reshape(-1)
            if vector.shape != (DIM,) or not np.isfinite(vector).all():
                raise ValueError(f"a vector of {vector.size} values, expected {DIM} finite values")
            return vector
        except Exception as exc:  # noqa: BLE001 - the exact layer and the upstream still answer
            log.error("cache.encode_failed", tenant=tenant_id, error=type(exc).__name__, detail=str(exc)[:200])
            return None

    async def _semantic(self, tenant_id: str, policy: CachePolicy, context: str, text: str, vector: np.ndarray,
                        index: VectorIndex, born_after: float | None = None) -> tuple[CacheHit | None, str | None]:
        threshold = self.threshold(tenant_id, policy)
        verify = self.verifier
        if verify is near_miss.verify and not policy.learned_verifier:
            verify = near_miss.verify_rules  # a tenant may turn the learned stage off
        candidates = [(i, s) for i, s in index.search(vector, CANDIDATES) if s >= threshold - SCORE_SLACK]
        if not candidates:
            return None, None
        entries = await self.storage.get_many(tenant_id, [entry_id_of(i) for i, _ in candidates])
        refused = None
        for (_, score), entry in zip(candidates, entries):
            if entry is None or entry.tenant != tenant_id or entry.context_key != context:
                continue
            if born_after is not None and entry.created_at < born_after:
                refused = "older than max-age"
                continue
            if policy.verify:
                try:
                    verdict = verify(text, entry.text)
                except Exception as exc:  # a guard bug must cost a miss, never the request or a wrong hit
                    log.error("cache.guard_failed", tenant=tenant_id, error=type(exc).__name__, detail=str(exc)[:200])
                    verdict = near_miss.Verdict(False, "error", type(exc).__name__)
                if not verdict.ok:
                    refused = f"guard:{verdict.reason}"
                    self._tenant_stats(tenant_id).guard_rejections[verdict.reason or "?"] += 1
                    GUARD_REJECTIONS.labels(tenant_id, verdict.reason or "?").inc()
                    continue
            return CacheHit("semantic", min(1.0, score), entry), None
        return None, refused

    async def store(self, tenant_id: str, policy: CachePolicy, endpoint: str, body: dict,
                    embedding: Embedding, response_text: str, finish_reason: str,
                    usage: dict[str, int] | None, model: str, *, scope: str = "",
                    system_fingerprint: str | None = None) -> str | None:
        """Store a complete, successful answer. Returns the entry id, or None if not stored (policy,
        finish reason, or store outage). Call only after the whole answer reached the client.
        `embedding` as for `lookup`: the vector, a function computing it, or None (the service encodes)."""
        if self.bypass_reason(policy, body, endpoint) is not None:
            return None
        if finish_reason not in STORABLE_FINISH_REASONS or not isinstance(response_text, str):
            return None
        text = embedding_text(endpoint, body)
        vector = None
        if semantic_eligible(endpoint, body):  # without a vector the entry still serves exact hits
            vector = await self._vector(tenant_id, text, embedding)
        now = time.time()
        request_digest = keys.request_digest(endpoint, body, scope)
        context_digest = keys.context_digest(endpoint, body, scope)
        entry = CacheEntry(
            id=new_entry_id(), tenant=tenant_id, endpoint=endpoint, request_model=str(body.get("model", "")),
            model=model, exact_key=keys.scoped(tenant_id, request_digest),
            context_key=keys.scoped(tenant_id, context_digest), text=text,
            request_digest=request_digest, context_digest=context_digest,
            vector=None if vector is None else np.asarray(vector, np.float32).reshape(-1),
            response_text=response_text, finish_reason=finish_reason, usage=dict(usage or {}),
            created_at=now, expires_at=now + policy.ttl_seconds, created_by="gateway",
            system_fingerprint=fingerprint_or_none(system_fingerprint),
        )
        if not await self.storage.put(entry, max_entries=policy.max_entries):
            return None
        STORES.labels(tenant_id).inc()
        return entry.id

    # --- admin operations ----------------------------------------------------------------------------

    async def tenants(self) -> list[str]:
        return sorted(set(await self.storage.tenants()) | set(self._meta))

    async def stats(self, tenant_id: str) -> dict:
        usage = await self.storage.usage(tenant_id)
        return {
            "tenant": tenant_id, "entries": usage.entries, "bytes": usage.bytes,
            "semantic_entries": len(self._meta.get(tenant_id, {})),
            "threshold_override": self._threshold_overrides.get(tenant_id),
            **self._tenant_stats(tenant_id).snapshot(),
        }

    async def entries(self, tenant_id: str) -> AsyncIterator[CacheEntry]:
        async for entry in self.storage.iter_entries(tenant_id):
            yield entry

    async def get_entry(self, tenant_id: str, entry_id: str) -> CacheEntry | None:
        entry = await self.storage.get(tenant_id, entry_id)
        return entry if entry is not None and entry.tenant == tenant_id else None

    async def delete_entries(self, tenant_id: str, entry_ids: Iterable[str]) -> int:
        return await self.storage.delete(tenant_id, list(entry_ids))

    async def delete_older_than(self, tenant_id: str, seconds: float) -> int:
        cutoff = time.time() - seconds
        ids = [e.id async for e in self.storage.iter_entries(tenant_id) if e.created_at < cutoff]
        return await self.storage.delete(tenant_id, ids) if ids else 0

    async def similar(self, tenant_id: str, text: str, min_similarity: float, limit: int = 100) -> list[tuple[CacheEntry, float]]:
        """Entries of a tenant (all request contexts) whose embedded text is at least `min_similarity`
        (cosine) to `text`, best first. Used by search and delete-by-query."""
        if self.encoder is None:
            raise RuntimeError("no encoder: semantic search is unavailable")
        vector = await self.encoder.embed(text)
        found: list[tuple[int, float]] = []
        for (tenant, _), index in list(self._indexes.items()):
            if tenant == tenant_id:
                found += [(i, s) for i, s in index.search(vector, min(limit, max(len(index), 1))) if s >= min_similarity]
        found.sort(key=lambda pair: -pair[1])
        found = found[:limit]
        entries = await self.storage.get_many(tenant_id, [entry_id_of(i) for i, _ in found])
        return [(e, s) for e, (_, s) in zip(entries, found) if e is not None and e.tenant == tenant_id]

    async def flush(self, tenant_id: str) -> int:
        return await self.storage.flush(tenant_id)

    async def import_entry(self, tenant_id: str, data: object, *, who: str,
                           policy: CachePolicy | None = None) -> str:
        """Import one exported entry into `tenant_id` (the tenant in the data is ignored: an import
        never writes into another tenant). Keeps its vector when it has one, else re-encodes. With the
        tenant's `policy`, its bounds hold as for any stored answer: at most `ttl_seconds` to live, LRU
        eviction past `max_entries`. Raises `BadImportLine` (a ValueError) for a line it refuses."""
        entry = entry_from_line(data, tenant_id)
        entry.exact_key = keys.scoped(tenant_id, entry.request_digest)  # re-scoped: keys are per tenant
        entry.context_key = keys.scoped(tenant_id, entry.context_digest)
        now = time.time()
        if policy is not None:
            entry.expires_at = min(entry.expires_at, now + policy.ttl_seconds)
        if entry.expires_at <= now:
            raise BadImportLine("expires_at: the entry has already expired")
        if entry.vector is None and entry.text and len(entry.text) <= SEMANTIC_MAX_CHARS:
            entry.vector = await self._vector(tenant_id, entry.text, None)  # None: exact hits only
        entry.created_by = who
        if not await self.storage.put(entry, max_entries=policy.max_entries if policy is not None else None):
            raise ConnectionError("cache store unavailable")
        return entry.id

    # --- housekeeping ------------------------------------------------------------------------------

    async def _housekeeping(self) -> None:
        last_sweep = time.monotonic()
        while not self._closed:
            await asyncio.sleep(1.0)
            try:
                if self.storage.name == "redis":
                    REDIS_UP.set(1 if self.storage.healthy else 0)
                gauged = set(self._meta)
                for tenant in self._gauged - gauged:  # flushed or emptied since the last tick
                    ENTRIES.labels(tenant).set(0)
                for tenant, meta in list(self._meta.items()):
                    ENTRIES.labels(tenant).set(len(meta))
                self._gauged = gauged
                if time.monotonic() - last_sweep >= self.sweep_interval:
                    last_sweep = time.monotonic()
                    await self.sweep_expired()
                for index in list(self._indexes.values()):
                    index.schedule_rebuild(self._executor)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - housekeeping must survive anything
                log.warning("cache.housekeeping_failed", error=repr(exc))

    async def sweep_expired(self) -> int:
        """Drop entries whose TTL passed from the indexes (and from the store's bookkeeping)."""
        now = time.time()
        dropped = 0
        for tenant in sorted(set(self._meta) | set(await self.storage.tenants())):
            meta = self._meta.get(tenant, {})
            expired = [i for i, (_, expires_at) in meta.items() if expires_at <= now]
            if expired:
                self._apply(StoreEvent("delete", tenant, ids=expired), self._indexes, self._meta)
                dropped += len(expired)
            await self.storage.forget_expired(tenant, expired)  # entries without a vector too
        return dropped
