"""The embedded default store: a process-local dict with LRU bounds and per-entry TTLs."""

from __future__ import annotations

import heapq
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence

from cache.entry import CacheEntry
from cache.stores.base import CacheStore, IndexRecord, StoreEvent, StoreListener, TenantUsage


class MemoryStore(CacheStore):
    name = "memory"
    shared = False

    def __init__(self, *, max_entries: int = 100_000, max_bytes: int = 512 * 1024 * 1024) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[str, str], CacheEntry] = OrderedDict()  # global LRU order
        self._tenant_order: dict[str, OrderedDict[str, None]] = {}  # per-tenant LRU order
        self._exact: dict[tuple[str, str], str] = {}
        self._bytes: dict[str, int] = {}
        self._total_bytes = 0
        self._expiry: list[tuple[float, str, str]] = []  # heap of (expires_at, tenant, id); stale items allowed
        self._listener: StoreListener | None = None

    async def start(self, listener: StoreListener) -> None:
        self._listener = listener
        await listener.resync()

    async def aclose(self) -> None:
        self._listener = None

    def _emit(self, event: StoreEvent) -> None:
        if self._listener is not None:
            self._listener.apply(event)

    def _drop(self, tenant: str, entry_id: str) -> CacheEntry | None:
        entry = self._entries.pop((tenant, entry_id), None)
        if entry is None:
            return None
        self._tenant_order.get(tenant, OrderedDict()).pop(entry_id, None)
        if self._exact.get((tenant, entry.exact_key)) == entry_id:
            del self._exact[(tenant, entry.exact_key)]
        size = entry.size_bytes()
        self._bytes[tenant] = self._bytes.get(tenant, 0) - size
        self._total_bytes -= size
        return entry

    async def put(self, entry: CacheEntry, *, max_entries: int | None = None) -> bool:
        tenant = entry.tenant
        previous = self._exact.get((tenant, entry.exact_key))
        evicted: dict[str, list[str]] = {}
        if previous is not None and previous != entry.id:  # the same request answered again: replace
            self._drop(tenant, previous)
            evicted.setdefault(tenant, []).append(previous)
        replaced = self._drop(tenant, entry.id)
        if replaced is not None and replaced.vector is not None and entry.vector is None:
            evicted.setdefault(tenant, []).append(entry.id)  # its old vector leaves the index
        self._entries[(tenant, entry.id)] = entry
        self._tenant_order.setdefault(tenant, OrderedDict())[entry.id] = None
        self._exact[(tenant, entry.exact_key)] = entry.id
        heapq.heappush(self._expiry, (entry.expires_at, tenant, entry.id))
        size = entry.size_bytes()
        self._bytes[tenant] = self._bytes.get(tenant, 0) + size
        self._total_bytes += size
        order = self._tenant_order[tenant]
        while max_entries is not None and len(order) > max_entries:
            oldest = next(iter(order))
            self._drop(tenant, oldest)
            evicted.setdefault(tenant, []).append(oldest)
        while len(self._entries) > self.max_entries or self._total_bytes > self.max_bytes:
            (old_tenant, old_id) = next(iter(self._entries))
            if (old_tenant, old_id) == (tenant, entry.id):
                break
            self._drop(old_tenant, old_id)
            evicted.setdefault(old_tenant, []).append(old_id)
        for old_tenant, ids in evicted.items():
            self._emit(StoreEvent("delete", old_tenant, ids=ids))
        if entry.vector is not None:
            self._emit(StoreEvent("insert", tenant, records=[
                IndexRecord(entry.id, tenant, entry.context_key, entry.vector, entry.expires_at, entry.text)]))
        return True

    async def get(self, tenant: str, entry_id: str) -> CacheEntry | None:
        entry = self._entries.get((tenant, entry_id))
        if entry is None:
            return None
        if entry.expired():
            self._drop(tenant, entry_id)
            self._emit(StoreEvent("delete", tenant, ids=[entry_id]))
            return None
        return entry

    async def get_exact(self, tenant: str, exact_key: str) -> CacheEntry | None:
        entry_id = self._exact.get((tenant, exact_key))
        return None if entry_id is None else await self.get(tenant, entry_id)

    def touch(self, tenant: str, entry_id: str) -> None:
        entry = self._entries.get((tenant, entry_id))
        if entry is None:
            return
        entry.hits += 1
        entry.last_hit_at = time.time()
        self._entries.move_to_end((tenant, entry_id))
        self._tenant_order[tenant].move_to_end(entry_id)

    async def delete(self, tenant: str, entry_ids: Sequence[str]) -> int:
        removed = [i for i in entry_ids if self._drop(tenant, i) is not None]
        if removed:
            self._emit(StoreEvent("delete", tenant, ids=removed))
        return len(removed)

    async def flush(self, tenant: str) -> int:
        ids = list(self._tenant_order.get(tenant, ()))
        for entry_id in ids:
            self._drop(tenant, entry_id)
        self._tenant_order.pop(tenant, None)
        self._bytes.pop(tenant, None)
        self._emit(StoreEvent("flush", tenant))
        return len(ids)

    async def forget_expired(self, tenant: str, entry_ids: Sequence[str] = ()) -> None:
        # Every expired entry, those without a vector (which no index lists) too, and of every tenant
        # (all are past their TTL): popped from a heap of expiry times, so a sweep costs what expired.
        now = time.time()
        heap = self._expiry
        while heap and heap[0][0] <= now:
            _, owner, entry_id = heapq.heappop(heap)
            entry = self._entries.get((owner, entry_id))
            if entry is not None and entry.expired(now):
                self._drop(owner, entry_id)
        if len(heap) > 2 * len(self._entries) + 1024:  # replaced and deleted entries left stale items
            self._expiry = [(e.expires_at, owner, i) for (owner, i), e in self._entries.items()]
            heapq.heapify(self._expiry)

    async def iter_entries(self, tenant: str | None = None) -> AsyncIterator[CacheEntry]:
        now = time.time()
        keys = list(self._entries) if tenant is None else [(tenant, i) for i in self._tenant_order.get(tenant, ())]
        for key in keys:
            entry = self._entries.get(key)
            if entry is not None and not entry.expired(now):
                yield entry

    async def iter_records(self) -> AsyncIterator[IndexRecord]:
        async for entry in self.iter_entries():
            if entry.vector is not None:
                yield IndexRecord(entry.id, entry.tenant, entry.context_key, entry.vector, entry.expires_at)

    async def tenants(self) -> list[str]:
        return sorted(t for t, order in self._tenant_order.items() if order)

    async def usage(self, tenant: str) -> TenantUsage:
        return TenantUsage(entries=len(self._tenant_order.get(tenant, ())), bytes=max(0, self._bytes.get(tenant, 0)))
