"""Admin endpoints over real HTTP on loopback (aiohttp test server), in-memory and Redis stores."""

from __future__ import annotations

import time

import orjson
import pytest
import structlog
import yaml
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from hypothesis import given, settings
from hypothesis import strategies as st

from cache.admin import ADMIN_NAME, admin_routes, body_lines
from cache.service import CacheService
from cache.stores.memory import MemoryStore
from cache.stores.redis import RedisStore
from policies.schema import CachePolicy
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
        ids[question] = await service.store("acme", policy, "chat", chat(question), None, answer, "stop", USAGE, "m",
                                            system_fingerprint="fp_seed")
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
    # As OpenAI answers a 404 (and the gateway's /v1 does): invalid_request_error, with a code saying what
    assert missing["error"]["type"] == "invalid_request_error" and missing["error"]["code"] == "entry_not_found"


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
    assert look.hit.system_fingerprint == "fp_seed"  # kept by the store, the export and the import


async def _exported(client) -> list[dict]:
    return [orjson.loads(line) for line in (await (await client.get("/admin/cache/acme/export")).read()).splitlines()]


@pytest.mark.parametrize("field, value, named", [
    ("usage", {"prompt_tokens": "lots"}, "usage.prompt_tokens"),  # would fail every hit it served
    ("id", "zz", "id"),
    ("id", "ffffffffffffffff", "id"),  # above 2^63: no FAISS id
    ("endpoint", "embeddings", "endpoint"),
    ("finish_reason", "tool_calls", "finish_reason"),  # never stored by the gateway: not replayable
    ("vector", "AAAA", "vector"),
    ("expires_at", None, "expires_at"),
    ("created_at", time.time() + 86400, "created_at"),  # made tomorrow: would pass any client max-age
])
async def test_import_refuses_a_bad_line_naming_the_field(setup, field, value, named, policy):
    client, service, _ = setup
    line = (await _exported(client))[0]
    line[field] = value
    error = await json(await client.post("/admin/cache/warm/import", data=orjson.dumps(line)), 400)
    assert error["error"]["type"] == "invalid_request_error" and error["error"]["code"] == "invalid_import"
    assert named in error["errors"][0]["error"] and named in error["error"]["message"]
    assert [e async for e in service.entries("warm")] == []  # nothing stored for a refused line


async def test_import_keeps_the_tenants_ttl_and_entry_bound(encoder, policy):
    service = CacheService(MemoryStore(), encoder)
    await service.start()
    bounded = CachePolicy(threshold=0.65, ttl_seconds=60, max_entries=2)
    app = web.Application(middlewares=[fake_admin_auth])
    app.add_routes(admin_routes(service, lambda tenant: bounded if tenant == "warm" else None))
    client = TestClient(TestServer(app))
    await client.start_server()
    try:
        for question, answer in QUESTIONS.items():
            await service.store("acme", policy, "chat", chat(question), None, answer, "stop", USAGE, "m")
        lines = await _exported(client)
        for line in lines:
            line["expires_at"] = time.time() + 30 * 86400
        body = b"\n".join(orjson.dumps(line) for line in lines)
        assert (await json(await client.post("/admin/cache/warm/import", data=body)))["imported"] == 3
        kept = [e async for e in service.entries("warm")]
        assert len(kept) == 2 and all(e.expires_at <= time.time() + 60 for e in kept)
    finally:
        await client.close()
        await service.aclose()


@pytest.mark.parametrize("query", ["limit=%C2%B2", "limit=0", "q=capital&limit=0", "q=capital&min_similarity=nan",
                                   "q=capital&min_similarity=7", "q=%20"])
async def test_listing_parameters_are_checked(setup, query):
    client, _, _ = setup
    error = await json(await client.get(f"/admin/cache/acme/entries?{query}"), 400)
    assert error["error"]["type"] == "invalid_request_error" and error["error"]["param"]


class StoreThatFillsUp(MemoryStore):
    """Refuses every put after the first `room` (as a store that went down mid-import does)."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = room

    async def put(self, entry, *, max_entries=None) -> bool:
        self.room -= 1
        return self.room >= 0 and await super().put(entry, max_entries=max_entries)


async def test_an_import_cut_short_by_the_store_is_still_audited(encoder, policy):
    source = CacheService(MemoryStore(), encoder)
    await source.start()
    for question, answer in QUESTIONS.items():
        await source.store("acme", policy, "chat", chat(question), None, answer, "stop", USAGE, "m")
    lines = [orjson.dumps(e.to_dict()) async for e in source.entries("acme")]
    target = CacheService(StoreThatFillsUp(room=1), encoder)
    await target.start()
    client = await make_client(target)
    try:
        with structlog.testing.capture_logs() as logs:
            error = await json(await client.post("/admin/cache/warm/import", data=b"\n".join(lines)), 503)
        assert "line 2" in error["error"]["message"] and "1 entries were imported" in error["error"]["message"]
        audit = [e for e in logs if e["event"] == "cache.admin.import"]
        assert audit and audit[0]["admin"] == "ops-alice" and audit[0]["imported"] == 1
        assert audit[0]["stopped_at_line"] == 2
    finally:
        await client.close()
        await target.aclose()
        await source.aclose()


class _Chunks:
    """A request body as the network hands it over: in chunks of any size."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def iter_any(self):
        for chunk in self.chunks:
            yield chunk


def _read_all(lines) -> list:
    """Drive the line reader without an event loop: over `_Chunks` it never has to wait."""
    async def collect():
        return [line async for line in lines]
    try:
        collect().send(None)
    except StopIteration as done:
        return done.value
    raise AssertionError("the line reader waited")


CAP = 12


@given(body=st.lists(st.sampled_from([b"a", b"b", b"\n", b"\r", b"x" * 7]), max_size=40).map(b"".join),
       cuts=st.lists(st.integers(0, 300), max_size=12))
@settings(max_examples=400, deadline=None)
def test_import_lines_do_not_depend_on_how_the_body_is_split(body, cuts):
    """Every line comes back whole, a line longer than the cap as None, wherever the chunks split it
    (a line just over the cap used to pass when its newline came in the same chunk)."""
    points = sorted({0, len(body), *(c for c in cuts if c < len(body))})
    chunks = [body[a:b] for a, b in zip(points, points[1:])]
    expected = body.split(b"\n")
    if expected[-1] == b"":
        expected.pop()  # a final newline ends the last line; it does not start another
    assert _read_all(body_lines(_Chunks(chunks), CAP)) == [None if len(x) > CAP else x for x in expected]


async def test_the_served_description_names_every_route(setup):
    """GET /admin/cache/openapi.yaml serves the API's description, and it describes exactly the routes
    the module serves (the fuzz test trusts it to find every operation)."""
    client, service, _ = setup
    response = await client.get("/admin/cache/openapi.yaml")
    assert response.status == 200 and response.content_type == "application/yaml"
    spec = yaml.safe_load(await response.read())
    described = {(method.upper(), path) for path, operations in spec["paths"].items()
                 for method in operations if method != "parameters"}
    assert described == {(route.method, route.path) for route in admin_routes(service)}
