"""Gateway-side admission end to end: real HTTP through the real gateway to an upstream (docs/admission.md).

The upstream is the mock (`tests.mock_upstream`'s handlers) behind a gate: every completion request
waits at the upstream until the test releases it by request id, and the gate records the order in
which requests arrived and how many were in flight at once. With that, admission is judged by order
and counters, never by the clock: which request the gateway let through next, and how many at once.
The gateway's own /metrics says how many requests it holds in its queue.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import urllib.request
import warnings

import aiohttp
import pytest
from aiohttp import web

from policies.tokens import counter_for
from tests import mock_upstream
from tests.processes import TENANT_KEYS, Process, gateway_config, start_gateway
from tests.redis_server import free_port

WAIT = 20.0  # seconds any condition may take to come true before the test fails


def gate_app() -> web.Application:
    """The mock upstream's handlers behind a per-request gate. Control: POST /_gate/release with a JSON
    list of request ids (a released id passes now or whenever it arrives); GET /_gate/state;
    POST /_gate/reset_max."""
    state = {"arrivals": [], "in_flight": 0, "max_in_flight": 0}
    opened: set[str] = set()
    events: dict[str, asyncio.Event] = {}

    def event(rid: str) -> asyncio.Event:
        ev = events.get(rid)
        if ev is None:
            ev = events[rid] = asyncio.Event()
            if rid in opened:
                ev.set()
        return ev

    @web.middleware
    async def gate(request: web.Request, handler):
        if request.method != "POST" or request.path.startswith("/_gate"):
            return await handler(request)
        rid = request.headers.get("x-request-id", "")
        state["arrivals"].append(rid)
        state["in_flight"] += 1
        state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
        try:
            await event(rid).wait()
            return await handler(request)
        finally:
            state["in_flight"] -= 1

    async def release(request: web.Request) -> web.Response:
        for rid in await request.json():
            opened.add(rid)
            event(rid).set()
        return web.json_response({})

    async def reset_max(request: web.Request) -> web.Response:
        state["max_in_flight"] = state["in_flight"]
        return web.json_response({})

    async def show(request: web.Request) -> web.Response:
        return web.json_response(state)

    app = web.Application(middlewares=[gate])
    with warnings.catch_warnings():  # the mock's handlers read these plain keys
        warnings.simplefilter("ignore", web.NotAppKeyWarning)
        app["fail"], app["model"] = None, None
    app.router.add_post("/v1/chat/completions", mock_upstream.completions)
    app.router.add_get("/v1/models", mock_upstream.models)
    app.router.add_post("/_gate/release", release)
    app.router.add_post("/_gate/reset_max", reset_max)
    app.router.add_get("/_gate/state", show)
    return app


class GatedUpstream:
    """The gated mock in its own process (`python -m tests.gateway.test_admission --port N`), and its
    controls. Calls are synchronous: loopback, a millisecond each."""

    def __init__(self, tmp) -> None:
        port = free_port()
        self.proc = Process([sys.executable, "-m", "tests.gateway.test_admission", "--port", str(port)], port,
                            "/v1/models", tmp / f"gated-{port}.log")
        self.url = self.proc.url

    def _call(self, path: str, data=None):
        req = urllib.request.Request(self.url + path, method="POST" if data is not None else "GET",
                                     data=json.dumps(data).encode() if data is not None else None)
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    @property
    def arrivals(self) -> list[str]:
        return self._call("/_gate/state")["arrivals"]

    @property
    def in_flight(self) -> int:
        return self._call("/_gate/state")["in_flight"]

    @property
    def max_in_flight(self) -> int:
        return self._call("/_gate/state")["max_in_flight"]

    def release(self, *rids: str) -> None:
        self._call("/_gate/release", list(rids))

    def reset_max(self) -> None:
        self._call("/_gate/reset_max", {})

    def stop(self) -> None:
        self.proc.stop()


MESSAGES = [{"role": "user", "content": "hello there"}]
CAPPED_MAX_TOKENS = 100


def estimate(max_tokens: int) -> int:
    """The gateway's token estimate for a request with MESSAGES: its own counter, plus max_tokens."""
    return counter_for(None).count_messages(MESSAGES) + max_tokens


CAPPED_CAP = 3 * estimate(CAPPED_MAX_TOKENS) + estimate(CAPPED_MAX_TOKENS) // 2  # room for three, not four


@pytest.fixture(scope="module")
def gated(tmp_path_factory):
    up = GatedUpstream(tmp_path_factory.mktemp("gated"))
    yield up
    up.stop()


@pytest.fixture(scope="module")
def gw(tmp_path_factory, gated):
    urls = [gated.url]
    config = gateway_config({"serial": urls, "capped": urls, "tight": urls, "brief": urls})
    long_timeouts = {"connect": 2, "first_token": 60, "idle": 30, "total": 60}
    admission = {
        # cap 1: every request is above it, so each runs alone — the queue order is all there is to see
        "serial": {"max_outstanding_tokens": 1, "aging_tokens_per_second": 0, "max_bypass": 3},
        "capped": {"max_outstanding_tokens": CAPPED_CAP},
        "tight": {"max_outstanding_tokens": 1, "max_queued": 1, "retry_after": 2},
        "brief": {"max_outstanding_tokens": 1, "queue_timeout": 0.3},
    }
    for name, adm in admission.items():
        config["pools"][name]["admission"] = adm
        config["pools"][name]["timeouts"] = long_timeouts
    config["tenants"]["acme"]["cache"] = {"enabled": False}
    config["tenants"]["globex"]["cache"] = {"enabled": False}
    proc = start_gateway(tmp_path_factory.mktemp("admission"), config)
    yield proc
    proc.stop()


@pytest.fixture
async def session():
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=90)) as s:
        yield s


async def post(session, gw, rid: str, pool: str, *, tenant: str = "acme", max_tokens: int = 10,
               stream: bool = False, mock: dict | None = None):
    body = {"model": pool, "messages": MESSAGES, "max_tokens": max_tokens, "stream": stream}
    if mock:
        body["mock"] = mock
    headers = {"Authorization": f"Bearer {TENANT_KEYS[tenant]}", "x-request-id": rid}
    try:
        async with session.post(gw.url + "/v1/chat/completions", json=body, headers=headers) as resp:
            return resp.status, dict(resp.headers), await resp.read()
    except Exception as exc:
        # A status of 0, never an exception: a background request's error must not wait, unretrieved,
        # for the garbage collector (its traceback would be formatted at a random moment).
        return 0, {}, repr(exc).encode()


async def until(cond, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


async def metric(session, gw, name: str, **labels) -> float:
    async with session.get(gw.url + "/metrics") as resp:
        text = await resp.text()
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


async def until_metric(session, gw, name: str, value: float, **labels) -> None:
    deadline = time.monotonic() + WAIT
    while True:
        got = await metric(session, gw, name, **labels)
        if got == value:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"{name}{labels} is {got}, waited for {value}")
        await asyncio.sleep(0.01)


async def until_queued(session, gw, pool: str, n: int) -> None:
    await until_metric(session, gw, "switchyard_admission_queued_requests", n, pool=pool)


def arrived(gated, prefix: str) -> list[str]:
    return [r for r in list(gated.arrivals) if r.startswith(prefix)]


def log_lines(gw, rid: str) -> list[dict]:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        lines = [json.loads(x) for x in gw.log_text().splitlines() if x.startswith("{")]
        found = [x for x in lines if x.get("event") == "request" and x.get("request_id") == rid]
        if found:
            return found
        time.sleep(0.05)
    return []


async def hold(session, gw, gated, rid: str, pool: str, **kw) -> asyncio.Task:
    """A request admitted on the fast path and held at the upstream: the member is now busy."""
    task = asyncio.create_task(post(session, gw, rid, pool, **kw))
    await until(lambda: rid in gated.arrivals, f"{rid} at the upstream")
    return task


async def queue(session, gw, rid: str, pool: str, expect_queued: int, **kw) -> asyncio.Task:
    """A request that waits in the gateway's queue (checked: the queue grows to `expect_queued`)."""
    task = asyncio.create_task(post(session, gw, rid, pool, **kw))
    await until_queued(session, gw, pool, expect_queued)
    return task


async def test_short_requests_pass_a_queued_long_one(session, gw, gated):
    first = await hold(session, gw, gated, "sp-hold", "serial")
    tasks = [await queue(session, gw, "sp-long", "serial", 1, max_tokens=900)]
    for i in range(3):
        tasks.append(await queue(session, gw, f"sp-short{i}", "serial", 2 + i, max_tokens=5))
    gated.release("sp-hold", "sp-long", "sp-short0", "sp-short1", "sp-short2")
    results = await asyncio.gather(first, *tasks)
    assert [r[0] for r in results] == [200] * 5
    assert arrived(gated, "sp-") == ["sp-hold", "sp-short0", "sp-short1", "sp-short2", "sp-long"]
    # The long request's wait is its queue time: in its header, its log line and the pool's histogram.
    assert float(results[1][1]["x-switchyard-queue-ms"]) > 0
    assert float(results[0][1]["x-switchyard-queue-ms"]) == 0  # the first had room
    line = log_lines(gw, "sp-long")[0]
    assert line["queue_ms"] > 0 and line["status"] == 200
    assert line["overhead_ms"] < line["queue_ms"] + line["total_ms"]
    assert log_lines(gw, "sp-hold")[0]["queue_ms"] == 0
    assert await metric(session, gw, "switchyard_admission_queue_seconds_sum", pool="serial") > 0
    assert await metric(session, gw, "switchyard_admission_queue_seconds_count", pool="serial") >= 4
    assert await metric(session, gw, "switchyard_admission_immediate_total", pool="serial") >= 1


async def test_long_request_is_served_after_at_most_max_bypass_shorts(session, gw, gated):
    """Aging with a bound: under a sustained stream of short requests, the long one goes after
    max_bypass (3 in this pool) of them have passed it, not never."""
    first = await hold(session, gw, gated, "ag-hold", "serial")
    tasks = [first, await queue(session, gw, "ag-long", "serial", 1, max_tokens=900)]
    for i in range(2):
        tasks.append(await queue(session, gw, f"ag-s{i}", "serial", 2 + i, max_tokens=5))
    # Keep short requests coming: before each admitted request finishes, another short one arrives.
    admitted = ["ag-hold"]
    n = 2
    while "ag-long" not in admitted and n < 12:
        queued_now = len(tasks) - len(admitted)  # posted, minus those that reached the upstream
        tasks.append(await queue(session, gw, f"ag-s{n}", "serial", queued_now + 1, max_tokens=5))
        n += 1
        gated.release(admitted[-1])
        await until(lambda: len(arrived(gated, "ag-")) > len(admitted), "the next admission")
        admitted = arrived(gated, "ag-")
    assert admitted == ["ag-hold", "ag-s0", "ag-s1", "ag-s2", "ag-long"]
    gated.release(*[f"ag-s{i}" for i in range(n)], "ag-long")
    results = await asyncio.gather(*tasks)
    assert all(r[0] == 200 for r in results)


async def test_a_flooding_tenant_does_not_starve_another(session, gw, gated):
    first = await hold(session, gw, gated, "fair-hold", "serial")
    tasks = [first]
    for i in range(6):
        tasks.append(await queue(session, gw, f"fair-acme{i}", "serial", 1 + i))
    for i in range(2):
        tasks.append(await queue(session, gw, f"fair-globex{i}", "serial", 7 + i, tenant="globex"))
    gated.release("fair-hold", *[f"fair-acme{i}" for i in range(6)], "fair-globex0", "fair-globex1")
    results = await asyncio.gather(*tasks)
    assert all(r[0] == 200 for r in results)
    order = arrived(gated, "fair-")[1:]
    # Arrival order would serve globex 7th and 8th; its fair share serves it alternately with acme.
    assert order.index("fair-globex0") <= 1 and order.index("fair-globex1") <= 3, order


async def test_outstanding_tokens_never_exceed_the_member_cap(session, gw, gated):
    est = estimate(CAPPED_MAX_TOKENS)
    gated.reset_max()
    rids = [f"cap-{i}" for i in range(10)]
    tasks = [asyncio.create_task(post(session, gw, r, "capped", max_tokens=CAPPED_MAX_TOKENS)) for r in rids]
    await until_queued(session, gw, "capped", 7)
    await until(lambda: len(arrived(gated, "cap-")) == 3, "three requests at the upstream")
    assert await metric(session, gw, "switchyard_admission_outstanding_tokens", pool="capped") == 3 * est
    assert await metric(session, gw, "switchyard_admission_queued_tokens", pool="capped") == 7 * est
    assert await metric(session, gw, "switchyard_admission_capacity_tokens", pool="capped") == CAPPED_CAP
    # Finish them one at a time: each completion lets exactly one more in.
    for k in range(10):
        seen = arrived(gated, "cap-")
        gated.release(seen[k])
        if k < 7:
            await until(lambda: len(arrived(gated, "cap-")) == len(seen) + 1, "the next admission")
        assert gated.in_flight <= 3
    results = await asyncio.gather(*tasks)
    assert [r[0] for r in results] == [200] * 10
    assert gated.max_in_flight == 3
    await until_metric(session, gw, "switchyard_admission_outstanding_tokens", 0, pool="capped")


async def test_queue_timeout_is_a_503_with_retry_after(session, gw, gated):
    first = await hold(session, gw, gated, "to-hold", "brief")
    status, headers, raw = await post(session, gw, "to-waiter", "brief")
    assert status == 503
    assert headers["Retry-After"] == "1"
    err = json.loads(raw)["error"]
    assert set(err) == {"message", "type", "param", "code"}
    assert err["code"] == "admission_queue_timeout" and err["type"] == "server_overloaded"
    assert "to-waiter" not in gated.arrivals  # never reached the backend
    line = log_lines(gw, "to-waiter")[0]
    assert line["status"] == 503 and line["error"] == "admission_queue_timeout" and line["queue_ms"] > 0
    gated.release("to-hold")
    assert (await first)[0] == 200
    assert await metric(session, gw, "switchyard_admission_rejected_total", pool="brief",
                        reason="admission_queue_timeout") == 1


async def test_full_queue_is_a_503_at_once(session, gw, gated):
    first = await hold(session, gw, gated, "full-hold", "tight")
    waiting = await queue(session, gw, "full-waiting", "tight", 1)
    status, headers, raw = await post(session, gw, "full-over", "tight")
    assert status == 503 and headers["Retry-After"] == "2"
    assert json.loads(raw)["error"]["code"] == "admission_queue_full"
    assert not waiting.done()  # the one already queued keeps its place
    gated.release("full-hold", "full-waiting")
    assert [(await first)[0], (await waiting)[0]] == [200, 200]
    assert "full-over" not in gated.arrivals


async def test_client_disconnect_while_queued_frees_its_place(session, gw, gated):
    first = await hold(session, gw, gated, "dc-hold", "serial")
    leaver = await queue(session, gw, "dc-leaver", "serial", 1)
    stayer = await queue(session, gw, "dc-stayer", "serial", 2)
    leaver.cancel()  # the client hangs up
    with pytest.raises(asyncio.CancelledError):
        await leaver
    await until_queued(session, gw, "serial", 1)
    gated.release("dc-hold", "dc-stayer")
    assert (await first)[0] == 200 and (await stayer)[0] == 200
    assert "dc-leaver" not in gated.arrivals
    line = log_lines(gw, "dc-leaver")[0]
    assert line["status"] == 499 and line["queue_ms"] > 0


async def test_slots_come_back_after_errors_and_streams(session, gw, gated):
    """However a response ends — an upstream error, a stream, a client that leaves mid-stream — the
    member's tokens come back (else the cap-1 pool would queue the next request forever)."""
    gated.release("sl-err", "sl-stream", "sl-after")
    status, _, _ = await post(session, gw, "sl-err", "serial", mock={"status": 500})
    assert status >= 500
    status, _, raw = await post(session, gw, "sl-stream", "serial", stream=True)
    assert status == 200 and raw.endswith(b"data: [DONE]\n\n")
    # A stream whose client leaves after the first event.
    gated.release("sl-gone")
    body = {"model": "serial", "messages": MESSAGES, "max_tokens": 50, "stream": True,
            "mock": {"token_delay_ms": 50}}
    headers = {"Authorization": f"Bearer {TENANT_KEYS['acme']}", "x-request-id": "sl-gone"}
    async with session.post(gw.url + "/v1/chat/completions", json=body, headers=headers) as resp:
        await resp.content.readline()
        resp.close()
    await until(lambda: gated.in_flight == 0, "the abandoned stream to end upstream")
    status, headers, _ = await post(session, gw, "sl-after", "serial")
    assert status == 200 and float(headers["x-switchyard-queue-ms"]) == 0
    await until_metric(session, gw, "switchyard_admission_outstanding_tokens", 0, pool="serial")
    assert await metric(session, gw, "switchyard_admission_outstanding_requests", pool="serial") == 0


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    web.run_app(gate_app(), host="127.0.0.1", port=parser.parse_args().port, access_log=None,
                handler_cancellation=True, print=lambda *a: None)
