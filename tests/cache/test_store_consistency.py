"""Races and faults between replicas on one real redis-server: what the store must keep consistent
(bounds, deletes, flushes, hit counts, expiry) and what must never stop a replica's sync.

Fixed random unit vectors stand in for the encoder: these tests are about the store, not similarity.
Every test here but `test_hits_are_counted` (which keeps the new hit counter honest) failed on the code
before this change.
"""

from __future__ import annotations

import asyncio
import dataclasses

import numpy as np
import pytest
import redis.asyncio as aioredis

from cache.guard import Verdict
from cache.service import CacheService
from cache.stores.memory import MemoryStore
from cache.stores.redis import RedisStore
from policies.schema import CachePolicy
from tests.cache.conftest import chat, eventually

POLICY = CachePolicy(threshold=0.5, verify=False)


def vector(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
    return v / np.linalg.norm(v)


def accept(query: str, cached: str) -> Verdict:
    return Verdict(True)


async def replica(server) -> CacheService:
    # A generous call timeout: these tests are about consistency, not outages (80 concurrent stores
    # queue for the store's pooled connections on a busy 2-core CI machine).
    svc = CacheService(RedisStore(server.url, op_timeout=5.0, retry_interval=0.1), None, verifier=accept,
                       sweep_interval=0.3)
    await svc.start()
    assert svc.healthy
    return svc


@pytest.fixture
async def two(redis_server):
    a, b = await replica(redis_server), await replica(redis_server)
    raw = aioredis.Redis.from_url(redis_server.url)
    yield a, b, raw
    await raw.aclose()
    await a.aclose()
    await b.aclose()


async def store(svc: CacheService, text: str, seed: int, policy: CachePolicy = POLICY, answer: str = "ans",
                tenant: str = "acme") -> str | None:
    return await svc.store(tenant, policy, "chat", chat(text), vector(seed), answer, "stop", None, "m")


async def test_a_malformed_event_is_skipped_and_sync_goes_on(two):
    a, b, raw = two
    channel = b.storage.channel
    for junk in (b'{"op": "insert", "t": "acme", "r": [{"id": "x"}]}', b'{"op": "delete", "ids": 5}',
                 b'[1, 2]', b'not json', b'{"op": "insert", "t": "acme", "r": [{"id": "not-hex", "c": "c", '
                                          b'"v": "00", "e": 1e12}]}'):
        await raw.publish(channel, junk)
    await store(a, "What is the capital of Australia?", 1)
    await eventually(lambda: b.status()["semantic_entries"] == 1)  # B still applies A's insert
    assert not b.storage._supervisor.done()


async def test_concurrent_stores_keep_the_lru_bound_and_no_stray_vector(two):
    a, b, raw = two
    bounded = CachePolicy(threshold=0.5, verify=False, max_entries=5)
    await asyncio.gather(*(store(a if i % 2 else b, f"question {i}", i, bounded) for i in range(80)))
    lru = {m.decode() for m in await raw.zrange(a.storage._lru_key("acme"), 0, -1)}
    live = [e.id async for e in a.storage.iter_entries("acme")]
    assert len(lru) == 5 and set(live) == lru  # every live entry is still evictable
    for svc in (a, b):
        await eventually(lambda svc=svc: set(svc._meta.get("acme", {})) == lru)  # no vector without entry


async def test_a_hit_racing_a_delete_does_not_bring_the_entry_back(two):
    a, b, raw = two
    for i in range(40):
        body = chat(f"q{i}")
        entry_id = await a.store("acme", POLICY, "chat", body, vector(i), "ans", "stop", None, "m")

        async def hit():
            return await a.lookup("acme", POLICY, "chat", body, vector(i))

        async def delete(delay=(i % 5) * 0.0002, entry_id=entry_id):
            await asyncio.sleep(delay)
            return await b.delete_entries("acme", [entry_id])

        await asyncio.gather(hit(), delete())
        await asyncio.sleep(0.02)  # the hit's fire-and-forget touch
        assert not await raw.exists(a.storage._entry_key("acme", entry_id)), i
        assert await a.get_entry("acme", entry_id) is None


async def test_hits_are_counted(two):
    a, b, _ = two
    entry_id = await store(a, "What is the capital of Australia?", 1)
    for _ in range(3):
        assert (await b.lookup("acme", POLICY, "chat", chat("What is the capital of Australia?"))).result == "hit-exact"
    entry = await eventually(lambda: _entry_with_hits(a, entry_id, 3))
    assert entry.last_hit_at is not None


async def _entry_with_hits(svc, entry_id, hits):
    entry = await svc.get_entry("acme", entry_id)
    return entry if entry is not None and entry.hits == hits else None


async def test_an_entry_stored_during_a_flush_stays_listed_evictable_and_flushable(two):
    a, b, raw = two
    for round_ in range(10):
        for i in range(30):
            await store(a, f"old {i}", i)
        racer = asyncio.create_task(store(b, f"stored during flush {round_}", 999))
        await asyncio.sleep(round_ * 0.0005)
        await a.flush("acme")
        racer_id = await racer
        survivors = [e.id async for e in a.storage.iter_entries("acme")]
        assert set(survivors) <= {racer_id}
        if survivors:  # the store landed after the flush had read the tenant's ids
            assert await a.storage.tenants() == ["acme"]
            assert await raw.zscore(a.storage._lru_key("acme"), racer_id) is not None
        assert await a.flush("acme") == len(survivors)
        assert [k async for k in raw.scan_iter(match="sy:cache:t:*")] == []
        await eventually(lambda: not a._meta.get("acme") and not b._meta.get("acme"))


async def test_expired_entries_without_a_vector_are_swept(two):
    a, _, raw = two
    short = CachePolicy(threshold=0.5, verify=False, ttl_seconds=1)
    long_text = "x " * 600  # past SEMANTIC_MAX_CHARS: stored for exact hits only, no vector
    await a.store("acme", short, "chat", chat(long_text), None, "ans", "stop", None, "m")
    assert await raw.zcard(a.storage._lru_key("acme")) == 1
    await eventually(lambda: _zcards(raw, a.storage, "acme"), timeout=10)


async def _zcards(raw, storage, tenant):
    return await raw.zcard(storage._lru_key(tenant)) == 0 and await raw.zcard(storage._exp_key(tenant)) == 0


async def test_memory_store_sweeps_expired_entries_without_a_vector():
    svc = CacheService(MemoryStore(), None, verifier=accept, sweep_interval=0.3)
    await svc.start()
    try:
        short = CachePolicy(threshold=0.5, verify=False, ttl_seconds=1)
        await svc.store("acme", short, "chat", chat("x " * 600), None, "ans", "stop", None, "m")
        assert (await svc.storage.usage("acme")).entries == 1
        await eventually(lambda: _no_entries(svc), timeout=10)
        assert await svc.storage.tenants() == []
    finally:
        await svc.aclose()


async def _no_entries(svc):
    return (await svc.storage.usage("acme")).entries == 0


async def test_an_error_reply_is_not_an_outage(two):
    a, _, raw = two
    await store(a, "cached question", 1)
    used = int((await raw.info("memory"))["used_memory"])
    await raw.config_set("maxmemory-policy", "noeviction")
    await raw.config_set("maxmemory", used + 20_000)
    refused, results = 0, set()
    for i in range(10):  # Redis refuses writes (OOM) once full; reads go on serving
        refused += await store(a, f"new {i}", 100 + i, answer="y" * 5000) is None
        results.add((await a.lookup("acme", POLICY, "chat", chat("cached question"))).result)
    assert refused > 0
    assert results == {"hit-exact"}
    assert a.healthy and a.storage.outages == 0


async def test_an_exact_pointer_never_serves_another_requests_entry(two):
    a, _, _ = two
    first = await store(a, "What is 2+2?", 1)
    entry = await a.get_entry("acme", first)
    # Another request's answer written under the same id (as an import of a hand-edited export could)
    entry.exact_key, entry.context_key, entry.response_text = "0" * 64, "1" * 64, "a joke"
    assert await a.storage.put(entry)
    look = await a.lookup("acme", POLICY, "chat", chat("What is 2+2?"), vector(1))
    assert look.result == "miss"


async def test_a_flush_keeps_the_vector_of_an_entry_stored_during_it(two):
    a, b, raw = two
    for round_ in range(6):
        for i in range(20):
            await store(a, f"old {i}", i)
        new_id = (await asyncio.gather(a.flush("acme"), store(b, f"new {round_}", 500 + round_)))[1]
        if await raw.exists(a.storage._entry_key("acme", new_id)):  # it outlived the flush: both index it
            for svc in (a, b):
                await eventually(lambda svc=svc: new_id in svc._meta.get("acme", {}))
        await a.flush("acme")


async def memory_service(**kwargs) -> CacheService:
    svc = CacheService(MemoryStore(), None, verifier=accept, sweep_interval=0.3, **kwargs)
    await svc.start()
    return svc


async def test_emptied_namespaces_and_tenants_are_freed():
    svc = await memory_service()
    try:
        short = CachePolicy(threshold=0.5, verify=False, ttl_seconds=1)
        for i in range(50):  # one namespace per system prompt, as conversations make them
            await svc.store("acme", short, "chat", chat("hi", system=f"prompt {i}"), vector(i), "a", "stop", None, "m")
        assert svc.status()["namespaces"] == 50
        await eventually(lambda: svc.status()["namespaces"] == 0, timeout=10)
        assert svc._meta == {}
        from cache.metrics import ENTRIES
        await eventually(lambda: ENTRIES.labels("acme")._value.get() == 0, timeout=5)
    finally:
        await svc.aclose()


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_replacing_an_entry_by_one_without_a_vector_takes_the_old_vector_out(kind, request):
    svc = await memory_service() if kind == "memory" else await replica(request.getfixturevalue("redis_server"))
    try:
        entry_id = await store(svc, "How do I delete my account?", 1, answer="Settings > delete account.")
        entry = dataclasses.replace(await svc.get_entry("acme", entry_id), vector=None, text="x " * 600,
                                    response_text="another answer")  # as an import of that id would
        assert await svc.storage.put(entry)
        look = await svc.lookup("acme", POLICY, "chat", chat("How can I delete my account?"), vector(1))
        assert look.result == "miss"
        assert svc.status()["semantic_entries"] == 0
    finally:
        await svc.aclose()


@pytest.mark.parametrize("bad", [np.ones(768, np.float32) / 28, np.ones(100, np.float32), np.full(384, np.nan)])
async def test_a_vector_of_the_wrong_shape_costs_the_semantic_layer_only(bad):
    svc = await memory_service()
    try:
        entry_id = await svc.store("acme", POLICY, "chat", chat("q"), bad, "a", "stop", None, "m")
        assert entry_id is not None and svc.status()["semantic_entries"] == 0  # stored for exact hits
        assert (await svc.lookup("acme", POLICY, "chat", chat("q"))).result == "hit-exact"
        await store(svc, "another question", 2)
        look = await svc.lookup("acme", POLICY, "chat", chat("yet another"), bad)
        assert (look.result, look.reason) == ("miss", "no vector")
    finally:
        await svc.aclose()


@pytest.mark.parametrize("ivf_min", [None, 8])
async def test_threshold_one_serves_the_same_vector(ivf_min):
    svc = await memory_service(ivf_min=ivf_min)  # 8: an IVF index from a handful of entries
    try:
        exact_only = CachePolicy(threshold=1.0, verify=False)
        for i in range(40):
            await store(svc, f"q{i}", i, exact_only)
        for index in svc._indexes.values():
            await index.rebuild(svc._executor)
        hits = [(await svc.lookup("acme", exact_only, "chat", chat(f"q{i}?"), vector(i))).result for i in range(40)]
        assert set(hits) == {"hit-semantic"}, hits
    finally:
        await svc.aclose()
