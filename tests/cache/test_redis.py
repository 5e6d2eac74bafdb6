"""Two gateway replicas on one real redis-server: sync, propagation, isolation and outages."""

from __future__ import annotations

import pytest

from cache.service import CacheService
from cache.stores.redis import RedisStore
from tests.cache.conftest import chat, eventually

ANSWER = "Canberra."
USAGE = {"prompt_tokens": 9, "completion_tokens": 3}


async def replica(redis_server, encoder) -> CacheService:
    # A stopped Redis refuses connections at once, so outages are seen without waiting for a timeout;
    # the timeout only has to ride out a loaded CI machine (0.2 s once timed out a put mid-suite).
    svc = CacheService(RedisStore(redis_server.url, op_timeout=1.0, retry_interval=0.1), encoder, sweep_interval=0.5)
    await svc.start()
    assert svc.healthy
    return svc


@pytest.fixture
async def replicas(redis_server, encoder):
    a, b = await replica(redis_server, encoder), await replica(redis_server, encoder)
    yield a, b
    await a.aclose()
    await b.aclose()


async def put(svc, policy, text, tenant="acme"):
    body = chat(text)
    return await svc.store(tenant, policy, "chat", body, await svc.encoder.embed(text), ANSWER, "stop", USAGE, "m")


async def result(svc, policy, text, tenant="acme"):
    return (await svc.lookup(tenant, policy, "chat", chat(text), await svc.encoder.embed(text))).result


async def test_hit_after_insert_on_another_replica(replicas, policy):
    a, b = replicas
    entry_id = await put(a, policy, "What is the capital of Australia?")
    assert await result(b, policy, "What is the capital of Australia?") == "hit-exact"  # read from Redis
    # The semantic index of B learns the vector through pub/sub.
    await eventually(lambda: result(b, policy, "Which city is Australia's capital?"), timeout=5)
    look = await b.lookup("acme", policy, "chat", chat("Which city is Australia's capital?"))
    assert look.result == "hit-semantic" and look.hit.entry_id == entry_id and look.hit.response_text == ANSWER


async def test_a_replica_reads_another_replicas_insert_for_the_guard(replicas, policy):
    """The insert event carries the entry's text, so the replica that did not store it reads it for the
    guard when the insert arrives, not on the hit path of the first request it answers."""
    a, b = replicas
    read_by_b: list[str] = []
    b._prepare_for_guard = lambda tenant, text: read_by_b.append(text)  # this replica's reads only
    entry_id = await put(a, policy, "What is the capital of Australia?")
    text = (await a.get_entry("acme", entry_id)).text
    assert await eventually(lambda: read_by_b, timeout=5) == [text]


async def test_new_replica_rebuilds_its_index_from_redis(redis_server, encoder, policy):
    a = await replica(redis_server, encoder)
    await put(a, policy, "What is the capital of Australia?")
    await put(a, policy, "How do I reverse a list in Python?", tenant="other")
    late = await replica(redis_server, encoder)  # started after the inserts: no pub/sub seen
    try:
        assert late.status()["semantic_entries"] == 2
        assert await result(late, policy, "Which city is Australia's capital?") == "hit-semantic"
    finally:
        await a.aclose()
        await late.aclose()


async def test_delete_and_flush_propagate(replicas, policy):
    a, b = replicas
    first = await put(a, policy, "What is the capital of Australia?")
    await put(a, policy, "How do I reverse a list in Python?")
    await eventually(lambda: b.status()["semantic_entries"] == 2)
    assert await b.delete_entries("acme", [first]) == 1
    await eventually(lambda: a.status()["semantic_entries"] == 1)
    assert await result(a, policy, "Which city is Australia's capital?") == "miss"
    assert await result(a, policy, "What is the capital of Australia?") == "miss"
    assert await a.flush("acme") == 1
    await eventually(lambda: b.status()["semantic_entries"] == 0)
    assert await result(b, policy, "How do I reverse a list in Python?") == "miss"
    assert await b.storage.tenants() == []


async def test_tenant_isolation_on_redis_at_similarity_one(replicas, policy):
    a, b = replicas
    await put(a, policy, "What is the capital of Australia?", tenant="tenant-b")
    await eventually(lambda: b.status()["semantic_entries"] == 1)
    vector = await b.encoder.embed("What is the capital of Australia?")
    from policies.schema import CachePolicy

    anything_goes = CachePolicy(threshold=0.0, verify=False)
    for svc in (a, b):
        look = await svc.lookup("tenant-a", anything_goes, "chat", chat("What is the capital of Australia?"), vector)
        assert look.result == "miss"
        assert [e async for e in svc.entries("tenant-a")] == []
    assert await result(b, policy, "What is the capital of Australia?", tenant="tenant-b") == "hit-exact"


async def test_redis_outage_fails_soft_then_recovers(redis_server, replicas, policy):
    a, b = replicas
    await put(a, policy, "What is the capital of Australia?")
    await eventually(lambda: b.status()["semantic_entries"] == 1)
    redis_server.stop()
    # Requests keep working, uncached: no exception, "bypass" once the outage is seen.
    outcomes = {await result(a, policy, "What is the capital of Australia?") for _ in range(3)}
    assert outcomes <= {"bypass"}, outcomes
    assert await put(a, policy, "How do I reverse a list in Python?") is None
    await eventually(lambda: not b.healthy)
    assert await result(b, policy, "Which city is Australia's capital?") == "bypass"
    status = a.status()
    assert status["healthy"] is False and status["store"] == "redis" and status["last_error"]
    assert await a.delete_entries("acme", ["0123456789abcdef"]) == 0
    assert await a.flush("acme") == 0

    redis_server.start()  # same port, empty (no persistence): replicas reconnect and resync
    await eventually(lambda: a.healthy and b.healthy, timeout=15)
    assert a.status()["semantic_entries"] == 0  # the stale vectors are gone with the data
    await put(a, policy, "What is the capital of Australia?")
    await eventually(lambda: result(b, policy, "Which city is Australia's capital?"), timeout=5)
    assert await result(b, policy, "Which city is Australia's capital?") == "hit-semantic"
    assert a.storage.outages >= 1 and a.storage.resyncs >= 2


async def test_redis_down_at_start_is_not_fatal(encoder, policy):
    from tests.redis_server import RedisServer

    server = RedisServer()  # not started yet
    svc = CacheService(RedisStore(server.url, op_timeout=0.2, retry_interval=0.1), encoder)
    await svc.storage.start(svc, wait=0.3)
    try:
        assert not svc.healthy
        assert await result(svc, policy, "What is the capital of Australia?") == "bypass"
        server.start()
        await eventually(lambda: svc.healthy, timeout=15)
        await put(svc, policy, "What is the capital of Australia?")
        assert await result(svc, policy, "Which city is Australia's capital?") == "hit-semantic"
    finally:
        await svc.storage.aclose()
        server.stop()


async def test_a_slow_redis_is_not_an_outage(redis_server, encoder, policy):
    """Writes stall far past the call timeout (CLIENT PAUSE WRITE) while Redis still answers: the store
    that timed out is lost, but the store stays up (no outage, no resync of the index) and reads go on
    serving hits; once writes resume, stores work again."""
    import redis.asyncio as aioredis

    svc = CacheService(RedisStore(redis_server.url, op_timeout=0.2, retry_interval=0.1), encoder)
    await svc.start()
    admin = aioredis.Redis(port=redis_server.port)
    try:
        await put(svc, policy, "What is the capital of Australia?")
        await admin.execute_command("CLIENT", "PAUSE", 3000, "WRITE")
        assert await put(svc, policy, "How do I reverse a list in Python?") is None  # timed out
        assert svc.healthy
        assert await result(svc, policy, "What is the capital of Australia?") == "hit-exact"
        assert await result(svc, policy, "Which city is Australia's capital?") == "hit-semantic"
        status = svc.storage.status()
        assert status["slow_calls"] >= 1 and status["outages"] == 0 and status["resyncs"] == 1
        await admin.execute_command("CLIENT", "UNPAUSE")
        assert await put(svc, policy, "How do I boil an egg?") is not None
        assert svc.storage.status()["outages"] == 0
    finally:
        await admin.aclose()
        await svc.aclose()


async def test_a_burst_of_stores_queues_for_pooled_connections(redis_server, encoder, policy):
    """200 stores at once through a pool of 4 connections: every one is stored, the store stays up, and
    Redis never sees more than the pool's connections (an unbounded pool opened one per store, and a
    burst of connects on a busy host could time out and mark the store down)."""
    import asyncio

    import redis.asyncio as aioredis

    svc = CacheService(RedisStore(redis_server.url, op_timeout=1.0, retry_interval=0.1, max_connections=4), encoder)
    await svc.start()
    admin = aioredis.Redis(port=redis_server.port)
    questions = [f"How many moons does planet number {i} have?" for i in range(200)]
    vectors = svc.encoder.embed_many(questions)
    try:
        ids = await asyncio.gather(*(svc.store("acme", policy, "chat", chat(q), v, ANSWER, "stop", USAGE, "m")
                                     for q, v in zip(questions, vectors)))
        assert all(ids) and len(set(ids)) == 200
        assert svc.healthy and svc.storage.status()["outages"] == 0
        clients = await admin.client_list()
        assert len(clients) <= 4 + 1, clients  # the pool's connections (pub/sub included) + this one
        assert (await svc.storage.usage("acme")).entries == 200
    finally:
        await admin.aclose()
        await svc.aclose()


async def test_expired_entries_leave_every_replica(replicas):
    from policies.schema import CachePolicy

    short = CachePolicy(threshold=0.7, ttl_seconds=1)
    a, b = replicas
    await put(a, short, "What is the capital of Australia?")
    await eventually(lambda: b.status()["semantic_entries"] == 1)
    await eventually(lambda: a.status()["semantic_entries"] == 0 and b.status()["semantic_entries"] == 0, timeout=10)
    assert await result(b, short, "What is the capital of Australia?") == "miss"
