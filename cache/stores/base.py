"""The one async interface every cache store implements (in-memory, Redis).

A store keeps entries (answer, metadata, vector) with TTLs and a per-tenant LRU bound. It does not
search vectors: the service keeps one FAISS index per namespace and the store tells it about every
change through a `StoreListener` — changes made here *and*, for shared stores, changes made by other
replicas — so every replica's index matches the store.

Failure contract: store methods never raise for a store outage. Reads return None/empty, writes
return False, and `healthy` turns False until the store is back (then the store asks the listener to
`resync`). Only programming errors (bad arguments) raise.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

from cache.entry import CacheEntry


@dataclass(slots=True, frozen=True)
class IndexRecord:
    """What a vector index needs to know about an entry."""

    id: str
    tenant: str
    context_key: str
    vector: np.ndarray
    expires_at: float
    text: str | None = None  # the embedded text, on live inserts (the guard reads it ahead of a hit)


@dataclass(slots=True)
class StoreEvent:
    op: Literal["insert", "delete", "flush"]
    tenant: str
    records: list[IndexRecord] = field(default_factory=list)  # insert
    ids: list[str] = field(default_factory=list)  # delete


class StoreListener(Protocol):
    def apply(self, event: StoreEvent) -> None:
        """Apply one change to the local index (called on the event loop, must not block)."""

    async def resync(self) -> None:
        """Rebuild the local index from the store (after start and after every reconnect)."""


@dataclass(slots=True)
class TenantUsage:
    entries: int
    bytes: int


class CacheStore(abc.ABC):
    name: str = "store"
    shared: bool = False  # True when other replicas see the same entries

    @property
    def healthy(self) -> bool:
        return True

    def status(self) -> dict:
        return {"store": self.name, "healthy": self.healthy}

    @abc.abstractmethod
    async def start(self, listener: StoreListener) -> None:
        """Connect, then call `listener.resync()` once the store can be read."""

    @abc.abstractmethod
    async def aclose(self) -> None: ...

    @abc.abstractmethod
    async def put(self, entry: CacheEntry, *, max_entries: int | None = None) -> bool:
        """Insert (or replace) an entry; evict the tenant's least recently used entries past
        `max_entries`. Tells the listener (and other replicas) about the insert and evictions."""

    @abc.abstractmethod
    async def get(self, tenant: str, entry_id: str) -> CacheEntry | None: ...

    async def get_many(self, tenant: str, entry_ids: Sequence[str]) -> list[CacheEntry | None]:
        return [await self.get(tenant, i) for i in entry_ids]

    @abc.abstractmethod
    async def get_exact(self, tenant: str, exact_key: str) -> CacheEntry | None: ...

    @abc.abstractmethod
    def touch(self, tenant: str, entry_id: str) -> None:
        """Record a hit (LRU position, hit count). Fire-and-forget: never delays a lookup."""

    @abc.abstractmethod
    async def delete(self, tenant: str, entry_ids: Sequence[str]) -> int: ...

    @abc.abstractmethod
    async def flush(self, tenant: str) -> int: ...

    @abc.abstractmethod
    async def forget_expired(self, tenant: str, entry_ids: Sequence[str] = ()) -> None:
        """Drop every entry of `tenant` whose TTL passed, or its bookkeeping where the store expires
        entries itself; `entry_ids` are expired ids the caller knows of. Each replica runs this."""

    @abc.abstractmethod
    def iter_entries(self, tenant: str | None = None) -> AsyncIterator[CacheEntry]:
        """Every live entry (of one tenant, or all), for admin listing, export and rebuilds."""

    @abc.abstractmethod
    def iter_records(self) -> AsyncIterator[IndexRecord]:
        """Every live entry's index record, cheaper than `iter_entries` (no answers)."""

    @abc.abstractmethod
    async def tenants(self) -> list[str]: ...

    @abc.abstractmethod
    async def usage(self, tenant: str) -> TenantUsage: ...
