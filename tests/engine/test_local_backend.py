"""LocalEngineBackend: the in-process backend the gateway's embedded default uses."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from backends.base import BackendError, BackendRequest
from backends.engine import metrics
from backends.local import bundled_backends


@pytest.fixture(scope="module")
async def backends():
    b = bundled_backends(device="cpu")
    for backend in b.values():
        await backend.start()
    yield b
    for backend in b.values():
        await backend.aclose()


def chat(content: str, **kw) -> dict:
    return {"model": "large", "messages": [{"role": "user", "content": content}], **kw}


def cancelled_count() -> float:
    return sum(
        s.value
        for m in metrics.REQUESTS.collect()
        for s in m.samples
        if s.name.endswith("_total") and s.labels.get("finish_reason") == "cancelled"
    )


async def wait_idle(engine, rounds: int = 400) -> None:
    for _ in range(rounds):
        if engine.running == 0 and engine.waiting == 0:
            return
        await asyncio.sleep(0.025)
    raise AssertionError("engine still busy")


async def test_non_streaming_chat(backends):
    resp = await backends["large"].send(BackendRequest("chat", chat("Return the sum of a and b.", max_tokens=24), False, "r1"))
    body = orjson.loads(resp.body)
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"]["role"] == "assistant"
    assert isinstance(body["choices"][0]["message"]["content"], str)
    assert body["choices"][0]["finish_reason"] in ("stop", "length")
    assert resp.usage == body["usage"] and body["usage"]["completion_tokens"] <= 24
    assert body["speculative"]["drafter"] == "draft"


async def test_streaming_completion_with_usage(backends):
    req = BackendRequest("completions", {"model": "small", "prompt": "def main():\n", "max_tokens": 12, "ignore_eos": True}, True, "r2")
    resp = await backends["small"].send(req)
    chunks = [orjson.loads(c) async for c in resp.events]
    assert all(c["object"] == "text_completion" for c in chunks)
    assert chunks[-2]["choices"][0]["finish_reason"] == "length"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 12
    text = "".join(c["choices"][0]["text"] for c in chunks[:-1])
    assert text


async def test_streaming_chat_shape(backends):
    resp = await backends["large"].send(BackendRequest("chat", chat("Close the file.", max_tokens=10), True, "r3", want_usage=False))
    chunks = [orjson.loads(c) async for c in resp.events]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chunks[-1]["choices"][0]["finish_reason"] in ("stop", "length")
    assert all("usage" not in c for c in chunks)


async def test_bad_input_is_backend_error_400(backends):
    for body in (chat("hi", n=3), chat("x = 1\n" * 2000), chat("hi", stop={"a": 1})):
        with pytest.raises(BackendError) as e:
            await backends["large"].send(BackendRequest("chat", body, False, "r4"))
        assert e.value.status == 400 and e.value.type == "invalid_request_error"


async def test_aclose_stops_generation(backends):
    engine = backends["large"].engine
    before = cancelled_count()
    resp = await backends["large"].send(BackendRequest("chat", chat("Parse the header.", max_tokens=400, ignore_eos=True), True, "r5"))
    first = [await resp.events.__anext__() for _ in range(3)]
    assert first
    await resp.aclose()
    await wait_idle(engine)
    assert cancelled_count() == before + 1


async def test_cancelling_the_consumer_task_stops_generation(backends):
    engine = backends["large"].engine
    before = cancelled_count()
    resp = await backends["large"].send(BackendRequest("chat", chat("Read the data.", max_tokens=400, ignore_eos=True), True, "r6"))
    got_one = asyncio.Event()
    seen = []

    async def consume():
        async for chunk in resp.events:
            seen.append(chunk)
            got_one.set()

    task = asyncio.create_task(consume())
    await got_one.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_idle(engine)
    assert cancelled_count() == before + 1
    assert len(seen) < 400
