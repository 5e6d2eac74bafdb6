"""CacheService with the in-memory store and the real encoder."""

from __future__ import annotations

import asyncio

import numpy as np
import orjson
import pytest

from cache.render import render_body, render_events, text_pieces
from cache.service import CacheService
from cache.stores.memory import MemoryStore
from policies.schema import CachePolicy
from tests.cache.conftest import chat

ANSWER = "The capital of Australia is Canberra."
USAGE = {"prompt_tokens": 12, "completion_tokens": 8}


@pytest.fixture
async def service(encoder):
    svc = CacheService(MemoryStore(), encoder)
    await svc.start()
    yield svc
    await svc.aclose()


async def store(svc, policy, body, tenant="acme", text=ANSWER, finish="stop", endpoint="chat"):
    vector = await svc.encoder.embed(body["messages"][-1]["content"]) if endpoint == "chat" else None
    return await svc.store(tenant, policy, endpoint, body, vector, text, finish, USAGE, "backend-model")


async def look(svc, policy, body, tenant="acme", endpoint="chat", **options):
    vector = await svc.encoder.embed(body["messages"][-1]["content"]) if endpoint == "chat" else None
    return await svc.lookup(tenant, policy, endpoint, body, vector, **options)


async def test_exact_then_semantic_then_guard(service, policy):
    body = chat("What is the capital of Australia?")
    assert (await look(service, policy, body)).result == "miss"
    entry_id = await store(service, policy, body)
    exact = await look(service, policy, {**body, "stream": True, "user": "bob"})
    assert exact.result == "hit-exact" and exact.hit.entry_id == entry_id and exact.hit.similarity == 1.0
    semantic = await look(service, policy, chat("Which city is Australia's capital?"))
    assert semantic.result == "hit-semantic" and semantic.hit.entry_id == entry_id
    assert policy.threshold <= semantic.hit.similarity < 1.0
    assert semantic.headers == {"x-switchyard-cache": "hit-semantic",
                                "x-switchyard-cache-similarity": f"{semantic.hit.similarity:.4f}",
                                "x-switchyard-cache-entry": entry_id, "age": "0"}
    near_miss = await look(service, policy, chat("What is the capital of Austria?"))
    assert near_miss.result == "miss" and near_miss.reason == "guard:terms"
    stats = await service.stats("acme")
    assert stats["results"] == {"miss": 2, "hit-exact": 1, "hit-semantic": 1}
    assert stats["guard_rejections"] == {"terms": 1}


async def test_a_client_max_age_serves_only_younger_entries(service, policy):
    """`x-switchyard-cache-control: max-age=N` (cache/directives.py): an entry made longer ago than N
    seconds is served neither as an exact nor as a semantic hit; max-age=0 (no-cache) does not look."""
    body = chat("What is the capital of Australia?")
    entry_id = await store(service, policy, body)
    entry = await service.get_entry("acme", entry_id)
    entry.created_at -= 120  # made two minutes ago
    for asked, kind in ((body, "hit-exact"), (chat("Which city is Australia's capital?"), "hit-semantic")):
        young_enough = await look(service, policy, asked, max_age=3600)
        assert young_enough.result == kind and young_enough.hit.entry_id == entry_id
        assert 120 <= int(young_enough.headers["age"]) < 3600
        too_old = await look(service, policy, asked, max_age=60)
        assert too_old.result == "miss" and too_old.hit is None
    assert too_old.reason == "older than max-age"
    exact_only = CachePolicy(threshold=policy.threshold, semantic=False)
    assert (await look(service, exact_only, body, max_age=60)).reason == "older than max-age"
    unlooked = await look(service, policy, body, max_age=0)
    assert (unlooked.result, unlooked.reason) == ("miss", "client no-cache")
    # A policy bypass still wins: the client's directive cannot make a request cacheable.
    assert (await look(service, policy, {**body, "temperature": 0.9}, max_age=0)).result == "bypass"


async def test_without_guard_the_near_miss_would_have_been_served(service):
    """The guard is what refuses the near-miss: the same lookup with verification off is a hit."""
    loose = CachePolicy(threshold=0.65, verify=False)
    await store(service, loose, chat("What is the capital of Australia?"))
    assert (await look(service, loose, chat("What is the capital of Austria?"))).result == "hit-semantic"


async def test_tenant_isolation_even_at_similarity_one(service, policy):
    body = chat("What is the capital of Australia?")
    await store(service, policy, body, tenant="tenant-b")
    # Identical request, identical vector (cosine 1.0): tenant A must not see B's entry, in any layer.
    a = await look(service, policy, body, tenant="tenant-a")
    assert a.result == "miss" and a.hit is None
    b = await look(service, policy, body, tenant="tenant-b")
    assert b.result == "hit-exact"
    vector = await service.encoder.embed("What is the capital of Australia?")
    loose = CachePolicy(threshold=0.0, verify=False)
    a_semantic = await service.lookup("tenant-a", loose, "chat", chat("What is the capital of Australia ?"), vector)
    assert a_semantic.result == "miss"
    assert await service.get_entry("tenant-a", b.hit.entry_id) is None
    assert [e.id async for e in service.entries("tenant-a")] == []
    assert await service.similar("tenant-a", "What is the capital of Australia?", 0.0) == []


async def test_bypass_rules(service, policy):
    body = chat("What is the capital of Australia?")
    await store(service, policy, body)
    random = {**body}
    del random["temperature"]
    assert (await look(service, policy, random)).result == "bypass"
    assert (await look(service, policy, {**body, "temperature": 0.8})).result == "bypass"
    assert (await look(service, policy, {**body, "temperature": 0.8, "seed": 3})).result == "miss"
    assert (await look(service, CachePolicy(enabled=False), body)).result == "bypass"
    assert (await look(service, CachePolicy(only_deterministic=False), random)).result == "miss"
    assert not service.cacheable(policy, random) and service.cacheable(policy, body)
    assert await store(service, policy, random) is None  # never stored either


async def test_semantic_scope_is_the_request_context(service, policy):
    await store(service, policy, chat("What is the capital of Australia?"))
    for other in (chat("Which city is Australia's capital?", system="Answer in French."),
                  chat("Which city is Australia's capital?", model="other-model"),
                  chat("Which city is Australia's capital?", max_tokens=5)):
        assert (await look(service, policy, other)).result == "miss"
    assert (await look(service, CachePolicy(threshold=0.7, semantic=False),
                       chat("Which city is Australia's capital?"))).result == "miss"


async def test_only_complete_answers_are_stored(service, policy):
    assert await store(service, policy, chat("Call the weather tool"), finish="tool_calls") is None
    assert await store(service, policy, chat("Say something bad"), finish="content_filter") is None
    assert await store(service, policy, chat("Count to a million"), text="1, 2, 3", finish="length") is not None


async def test_threshold_override_at_run_time(service, policy):
    await store(service, policy, chat("What is the capital of Australia?"))
    paraphrase = chat("Which city is Australia's capital?")
    assert (await look(service, policy, paraphrase)).result == "hit-semantic"
    service.set_threshold("acme", 0.999)
    assert (await look(service, policy, paraphrase)).result == "miss"
    service.set_threshold("acme", None)
    assert (await look(service, policy, paraphrase)).result == "hit-semantic"
    with pytest.raises(ValueError):
        service.set_threshold("acme", 1.5)


async def test_ttl_expiry_and_lru_bound(service, policy):
    short = CachePolicy(threshold=0.7, ttl_seconds=1)
    body = chat("What is the capital of Australia?")
    await store(service, short, body)
    assert (await look(service, short, body)).result == "hit-exact"
    await asyncio.sleep(1.2)
    assert (await look(service, short, body)).result == "miss"
    assert (await look(service, short, chat("Which city is Australia's capital?"))).result == "miss"
    await service.sweep_expired()
    assert service.status()["semantic_entries"] == 0

    bounded = CachePolicy(threshold=0.7, max_entries=2)
    questions = ["What is the capital of Peru?", "What is the capital of Chile?", "What is the capital of Kenya?"]
    ids = [await store(service, bounded, chat(q), tenant="small") for q in questions]
    assert (await look(service, bounded, chat(questions[0]), tenant="small")).result == "miss"  # evicted
    assert [e.id async for e in service.entries("small")] == ids[1:]
    assert service.status()["semantic_entries"] == 2


async def test_admin_operations(service, policy):
    ids = [await store(service, policy, chat(q)) for q in
           ["What is the capital of Australia?", "How do I reverse a list in Python?", "Why is the sky blue?"]]
    found = await service.similar("acme", "capital city of Australia", 0.6)
    assert [e.id for e, _ in found] == [ids[0]]
    assert await service.delete_entries("acme", [ids[0]]) == 1
    assert (await look(service, policy, chat("What is the capital of Australia?"))).result == "miss"
    assert await service.delete_older_than("acme", 3600) == 0
    assert await service.delete_older_than("acme", 0) == 2
    assert await service.flush("acme") == 0


def test_render_non_streaming_bodies(encoder):
    from cache.entry import CacheEntry, CacheHit

    entry = CacheEntry(id="00000000000000ff", tenant="t", endpoint="chat", request_model="m", model="backend",
                       exact_key="k", context_key="c", text="q", vector=None, response_text=ANSWER,
                       finish_reason="stop", usage=USAGE, expires_at=2e9)
    hit = CacheHit("semantic", 0.93, entry)
    body = orjson.loads(render_body(hit, "chat", model="public-name"))
    assert body["object"] == "chat.completion" and body["model"] == "public-name"
    assert body["choices"][0]["message"]["content"] == ANSWER and body["choices"][0]["finish_reason"] == "stop"
    assert body["usage"] == {"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20}
    text = orjson.loads(render_body(hit, "completions"))
    assert text["object"] == "text_completion" and text["choices"][0]["text"] == ANSWER
    events = [orjson.loads(e) for e in render_events(hit, "chat", include_usage=True)]
    assert events[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert "".join(e["choices"][0]["delta"].get("content", "") for e in events[:-1]) == ANSWER
    assert events[-2]["choices"][0]["finish_reason"] == "stop" and events[-1]["choices"] == []
    assert len({e["id"] for e in events}) == 1
    assert "".join(text_pieces("  a b\n c d e f g  ")) == "  a b\n c d e f g  "


async def test_vector_is_shared_not_recomputed(service, policy):
    """With the vector from the encode step the service does not encode again."""
    body = chat("What is the capital of Australia?")
    vector = await service.encoder.embed("What is the capital of Australia?")
    before = service.encoder.batcher.items
    await service.store("acme", policy, "chat", body, vector, ANSWER, "stop", USAGE, "m")
    await service.lookup("acme", policy, "chat", chat("Which city is Australia's capital?"), np.asarray(vector))
    assert service.encoder.batcher.items == before


async def test_vector_is_computed_only_when_the_semantic_layer_searches(service, policy):
    """Given an encode function, the lookup calls it only after an exact miss in a namespace that has
    entries: an exact hit, or a first request, never waits for the encoder."""
    calls: list[str] = []

    def embed_text(text):
        async def compute():
            calls.append(text)
            return await service.encoder.embed(text)
        return compute

    question, reworded = "What is the capital of Australia?", "Which city is Australia's capital?"
    first = await service.lookup("acme", policy, "chat", chat(question), embed_text(question))
    assert first.result == "miss" and calls == []  # nothing stored yet: nothing to search
    await service.store("acme", policy, "chat", chat(question), await service.encoder.embed(question),
                        ANSWER, "stop", USAGE, "m")
    exact = await service.lookup("acme", policy, "chat", chat(question), embed_text(question))
    assert exact.result == "hit-exact" and calls == []
    semantic = await service.lookup("acme", policy, "chat", chat(reworded), embed_text(reworded))
    assert semantic.result == "hit-semantic" and calls == [reworded]


async def test_a_failing_encoder_costs_the_semantic_layer_not_the_request(encoder, policy):
    """An encoder that raises (given as the request's encode function, or as the service's own):
    the lookup is a miss, the answer is still stored for exact hits, and nothing raises."""

    class Broken:
        async def embed(self, text):
            raise RuntimeError("onnxruntime: input too long")

    async def broken_request_vector():
        raise RuntimeError("onnxruntime: input too long")

    svc = CacheService(MemoryStore(), encoder)
    await svc.start()
    try:
        await store(svc, policy, chat("What is the capital of Australia?"))  # a vector to search
        reworded = chat("Which city is Australia's capital?")
        looked = await svc.lookup("acme", policy, "chat", reworded, broken_request_vector)
        assert looked.result == "miss" and looked.reason == "no vector"
        svc.encoder = Broken()  # no vector given: the service's own encoder is asked, and fails
        assert (await svc.lookup("acme", policy, "chat", reworded)).result == "miss"
        entry_id = await svc.store("acme", policy, "chat", reworded, None, ANSWER, "stop", USAGE, "m")
        assert entry_id is not None and (await svc.storage.get("acme", entry_id)).vector is None
        assert (await svc.lookup("acme", policy, "chat", reworded)).result == "hit-exact"
    finally:
        await svc.aclose()


async def test_a_failing_guard_costs_a_miss_not_the_request(encoder, policy):
    """Doubt resolves to a miss: if the guard raises on some text, the lookup is a miss (reason
    guard:error, counted with the guard's rejections) and the next lookup works as before."""
    calls = []

    def broken(query: str, cached: str):
        calls.append(query)
        raise IndexError("list index out of range")

    svc = CacheService(MemoryStore(), encoder, verifier=broken)
    await svc.start()
    try:
        await store(svc, policy, chat("What is the capital of Australia?"))
        looked = await look(svc, policy, chat("Which city is Australia's capital?"))
        assert looked.result == "miss" and looked.reason == "guard:error" and calls
        assert (await svc.stats("acme"))["guard_rejections"] == {"error": 1}
        assert (await look(svc, policy, chat("What is the capital of Australia?"))).result == "hit-exact"
    finally:
        await svc.aclose()


async def test_a_stored_entry_is_read_for_the_guard_when_stored(service, policy):
    """The guard reads an entry's text when the entry is stored (after the answer went out), so a later
    hit on it analyses only the query: the analyses of the stored text are already in the guard's caches."""
    from cache import guard
    from cache.facts import analyse
    from cache.shapes import shape_of

    guard.clear_text_caches()
    entry_id = await store(service, policy, chat("What is the capital of Australia?"))
    text = (await service.get_entry("acme", entry_id)).text
    for read in (analyse, shape_of):
        before = read.cache_info()
        read(text)
        after = read.cache_info()
        assert (after.hits, after.misses) == (before.hits + 1, before.misses), read.__name__


async def test_a_failing_guard_read_at_store_keeps_the_entry(service, policy, monkeypatch):
    from cache import guard

    def broken(text: str, **options) -> None:
        raise IndexError("list index out of range")

    monkeypatch.setattr(guard, "prepare", broken)
    body = chat("What is the capital of Australia?")
    entry_id = await store(service, policy, body)
    assert entry_id is not None and (await service.get_entry("acme", entry_id)) is not None
    assert (await look(service, policy, body)).result == "hit-exact"
