"""Admin endpoints over real HTTP on loopback (aiohttp test server), in-memory and Redis stores."""

from __future__ import annotations

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from cache.admin import ADMIN_NAME, admin_routes
from cache.service import CacheService
from cache.stores.memory import MemoryStore
from cache.stores.redis import RedisStore
from tests.cache.conftest import chat

USAGE = {"prompt_tokens": 9, "completion_tokens": 3}
QUESTIONS = {
    "What is the capital of Australia?": "Canberra.",
    "How do I reverse a list in Python?": "Use list.reverse() or reversed().",
    "Why is the sky blue?": "Rayleigh scattering.",
}


@web.middleware
async def fake_admin_auth(request, handler):
    # Stands in for the gateway's admin-key middleware: it names the admin for the audit log.
    request[ADMIN_NAME] = "ops-alice"
    return await handler(request)


async def make_client(service) -> TestClient:
    app = web.Application(middlewares=[fake_admin_auth])
    app.add_routes(admin_routes(service))
    client = TestClient(TestServer(app))
    await client.start_server()
    return client


@pytest.fixture(params=["memory", "redis"])
async def setup(request, encoder, policy):
    if request.param == "memory":
        store = MemoryStore()
    else:
        server = request.getfixturevalue("redis_server")
        store = RedisStore(server.url)
    service = CacheService(store, encoder)
    await service.start()
    ids = {}
    for question, answer in QUESTIONS.items():
        ids[question] = await service.store("acme", policy, "chat", chat(question), None, answer, "stop", USAGE, "m")
    await service.store("globex", policy, "chat", chat("What is the capital of Australia?"), None,
                        "Canberra (globex).", "stop", USAGE, "m")
    client = await make_client(service)
    yield client, service, ids
    await client.close()
    await service.aclose()


async def json(response, status=200):
    assert response.status == status, await response.text()
    return orjson.loads(await response.read())


async def test_stats_list_get(setup, policy):
    client, service, ids = setup
    await service.lookup("acme", policy, "chat", chat("Which city is Australia's capital?"))
    stats = await json(await client.get("/admin/cache/acme/stats"))
    assert stats["entries"] == 3 and stats["bytes"] > 0
    assert stats["results"] == {"hit-semantic": 1} and stats["hit_ratio"]["semantic"] == 1.0
    assert stats["lookup_latency_ms"]["p50"] is not None
    tenants = await json(await client.get("/admin/cache/tenants"))
    assert {t["tenant"] for t in tenants["tenants"]} == {"acme", "globex"}
    listed = await json(await client.get("/admin/cache/acme/entries?limit=2"))
    assert len(listed["data"]) == 2 and all(e["tenant"] == "acme" for e in listed["data"])
    contains = await json(await client.get("/admin/cache/acme/entries?contains=python"))
    assert [e["id"] for e in contains["data"]] == [ids["How do I reverse a list in Python?"]]
    search = await json(await client.get("/admin/cache/acme/entries", params={"q": "Australia capital city",
                                                                            "min_similarity": "0.6"}))
    assert [e["id"] for e in search["data"]] == [ids["What is the capital of Australia?"]]
    assert search["data"][0]["similarity"] >= 0.6
    one = await json(await client.get(f"/admin/cache/acme/entries/{ids['Why is the sky blue?']}"))
    assert one["response_text"] == "Rayleigh scattering." and "vector" not in one
    # Another tenant's entry id is not found under this tenant.
    other = [e async for e in service.entries("globex")][0]
    missing = await json(await client.get(f"/admin/cache/acme/entries/{other.id}"), 404)
    assert missing["error"]["type"] == "not_found_error"


async def test_deletes_flush_and_threshold(setup):
    client, service, ids = setup
    victim = ids["Why is the sky blue?"]
    assert (await json(await client.delete(f"/admin/cache/acme/entries/{victim}")))["deleted"] == 1
    await json(await client.delete(f"/admin/cache/acme/entries/{victim}"), 404)
    by_query = await json(await client.post("/admin/cache/acme/delete",
                                            json={"query": "capital city of Australia", "min_similarity": 0.6}))
    assert by_query["ids"] == [ids["What is the capital of Australia?"]] and by_query["deleted"] == 1
    by_age = await json(await client.post("/admin/cache/acme/delete", json={"older_than_seconds": 0}))
    assert by_age["deleted"] == 1
    assert (await json(await client.get("/admin/cache/acme/stats")))["entries"] == 0
    assert (await json(await client.get("/admin/cache/globex/stats")))["entries"] == 1  # untouched
    assert (await json(await client.delete("/admin/cache/globex")))["deleted"] == 1

    put = await json(await client.put("/admin/cache/acme/threshold", json={"threshold": 0.95}))
    assert put["threshold_override"] == 0.95 and service.threshold_overrides() == {"acme": 0.95}
    assert (await json(await client.get("/admin/cache/acme/threshold")))["threshold_override"] == 0.95
    await json(await client.delete("/admin/cache/acme/threshold"))
    assert service.threshold_overrides() == {}


async def test_bad_requests_are_openai_shaped(setup):
    client, _, _ = setup
    for method, path, body in [
        ("put", "/admin/cache/acme/threshold", {"threshold": 2}),
        ("post", "/admin/cache/acme/delete", {}),
        ("post", "/admin/cache/acme/delete", {"ids": ["nope"]}),
        ("post", "/admin/cache/acme/delete", {"ids": [], "older_than_seconds": 5}),
    ]:
        error = await json(await getattr(client, method)(path, json=body), 400)
        assert set(error["error"]) == {"message", "type", "param", "code"}
    error = await json(await client.post("/admin/cache/acme/delete", data=b"{not json"), 400)
    assert error["error"]["type"] == "invalid_request_error"
    await json(await client.get("/admin/cache/acme/entries/xyz"), 400)


async def test_export_import_roundtrip_into_another_tenant(setup, policy):
    client, service, ids = setup
    response = await client.get("/admin/cache/acme/export")
    assert response.status == 200 and response.content_type == "application/x-ndjson"
    lines = (await response.read()).splitlines()
    assert len(lines) == 3 and all(orjson.loads(line)["vector"] for line in lines)
    imported = await json(await client.post("/admin/cache/warm/import", data=b"\n".join(lines) + b"\nnot json\n"))
    assert imported["imported"] == 3 and imported["error_count"] == 1 and imported["errors"][0]["line"] == 4
    assert (await json(await client.get("/admin/cache/warm/stats")))["entries"] == 3
    look = await service.lookup("warm", policy, "chat", chat("Which city is Australia's capital?"))
    assert look.result == "hit-semantic" and look.hit.entry.tenant == "warm"
    assert look.hit.entry.created_by == "ops-alice"
