"""`switchyard engine serve` as a real subprocess on loopback: OpenAI SDK, raw SSE, errors,
client disconnect, and a failing model load."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time

import aiohttp
import openai
import orjson
import pytest

from tests.engine.conftest import ROOT


def client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0, timeout=60)


def test_health_and_models(engine_server):
    models = client(engine_server).models.list()
    assert sorted(m.id for m in models.data) == ["large", "small"]


def test_openai_sdk_chat_non_streaming(engine_server):
    out = client(engine_server).chat.completions.create(
        model="large", messages=[{"role": "user", "content": "Return the current time."}], max_tokens=32
    )
    assert out.object == "chat.completion"
    assert out.choices[0].message.role == "assistant"
    assert isinstance(out.choices[0].message.content, str)
    assert out.choices[0].finish_reason in ("stop", "length")
    assert out.usage.completion_tokens <= 32 and out.usage.prompt_tokens > 0


def test_openai_sdk_chat_streaming_with_usage(engine_server):
    stream = client(engine_server).chat.completions.create(
        model="large",
        messages=[{"role": "user", "content": "Split the path into parts."}],
        max_tokens=20,
        stream=True,
        stream_options={"include_usage": True},
        extra_body={"ignore_eos": True},
    )
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    content_chunks = [c for c in chunks if c.choices and c.choices[0].delta.content]
    assert content_chunks
    finals = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert len(finals) == 1 and finals[0] is chunks[-2] and finals[0].choices[0].finish_reason == "length"
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 20


def test_openai_sdk_completions(engine_server):
    c = client(engine_server)
    out = c.completions.create(model="small", prompt="class Queue:\n", max_tokens=16, temperature=0)
    assert out.object == "text_completion" and out.usage.completion_tokens <= 16
    streamed = "".join(
        ch.choices[0].text for ch in c.completions.create(model="small", prompt="class Queue:\n", max_tokens=16, temperature=0, stream=True) if ch.choices
    )
    assert streamed == out.choices[0].text  # greedy: the stream spells the same answer


async def test_raw_sse_framing(engine_server):
    body = {"model": "large", "prompt": "for i in range(", "max_tokens": 6, "stream": True}
    async with aiohttp.ClientSession() as s:
        async with s.post(engine_server + "/v1/completions", json=body) as r:
            assert r.status == 200 and r.headers["Content-Type"].startswith("text/event-stream")
            raw = (await r.read()).decode()
    events = [e for e in raw.split("\n\n") if e]
    assert all(e.startswith("data: ") for e in events)
    assert events[-1] == "data: [DONE]"
    assert orjson.loads(events[-2][6:])["choices"][0]["finish_reason"] in ("stop", "length")


@pytest.mark.parametrize(
    "body,status,code,param",
    [
        ({"prompt": "x = 1\n" * 2000}, 400, "context_length_exceeded", "prompt"),
        ({"prompt": "def f():", "max_tokens": 100000}, 400, "context_length_exceeded", "max_tokens"),
        ({"prompt": "def f():", "n": 2}, 400, "unsupported_parameter", "n"),
        ({"prompt": "def f():", "stop": [1, 2]}, 400, "invalid_stop", "stop"),
        ({"prompt": "def f():", "model": "nope"}, 404, "model_not_found", "model"),
    ],
)
async def test_bad_input_gets_openai_errors(engine_server, body, status, code, param):
    async with aiohttp.ClientSession() as s:
        async with s.post(engine_server + "/v1/completions", json={"model": "large", **body}) as r:
            assert r.status == status
            err = (await r.json())["error"]
    assert set(err) == {"message", "type", "param", "code"}
    assert (err["code"], err["param"]) == (code, param)


async def test_invalid_json_is_400(engine_server):
    async with aiohttp.ClientSession() as s:
        async with s.post(engine_server + "/v1/chat/completions", data=b"{nope") as r:
            assert r.status == 400
            assert (await r.json())["error"]["code"] == "invalid_json"


def _metric(text: str, name: str, **labels) -> float:
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name):
            continue
        m = re.match(r"([a-z_]+)(\{[^}]*\})? (\S+)", line)
        if not m or m.group(1) != name:
            continue
        got = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        if all(got.get(k) == v for k, v in labels.items()):
            total += float(m.group(3))
    return total


async def test_client_disconnect_stops_generation(engine_server):
    max_tokens = 450
    async with aiohttp.ClientSession() as s:
        async def metrics():
            async with s.get(engine_server + "/metrics") as r:
                return await r.text()

        before = await metrics()
        body = {"model": "large", "prompt": "def parse(line):\n", "max_tokens": max_tokens, "stream": True, "ignore_eos": True}
        resp = await s.post(engine_server + "/v1/completions", json=body)
        assert resp.status == 200
        await resp.content.readuntil(b"\n\n")
        await resp.content.readuntil(b"\n\n")
        resp.close()  # drop the connection mid-stream

        for _ in range(400):
            after = await metrics()
            cancelled = _metric(after, "switchyard_engine_requests_total", model="large", finish_reason="cancelled")
            running = _metric(after, "switchyard_engine_running_requests")
            if running == 0 and cancelled > _metric(
                before, "switchyard_engine_requests_total", model="large", finish_reason="cancelled"
            ):
                break
            await asyncio.sleep(0.025)
        else:
            pytest.fail("the engine never recorded the cancellation")
        generated = _metric(after, "switchyard_engine_generation_tokens_total", model="large") - _metric(
            before, "switchyard_engine_generation_tokens_total", model="large"
        )
        assert 0 < generated < max_tokens
        await asyncio.sleep(0.2)  # and nothing keeps generating afterwards
        later = await metrics()
        assert _metric(later, "switchyard_engine_generation_tokens_total", model="large") == _metric(
            after, "switchyard_engine_generation_tokens_total", model="large"
        )


def test_metrics_exposed(engine_server):
    import urllib.request

    text = urllib.request.urlopen(engine_server + "/metrics").read().decode()
    for name in (
        "switchyard_engine_generation_tokens_total",
        "switchyard_engine_spec_acceptance_rate",
        "switchyard_engine_queue_depth",
        "switchyard_engine_tokens_per_second",
    ):
        assert name in text


def test_step_metrics_count_every_step(engine_server):
    """Each engine step lands in the step-time histogram (by kind) and the rows histogram; a request
    has at least one step carrying its prompt and one decode-only step after it."""
    import urllib.request

    def scrape() -> str:
        """A snapshot taken between steps: the engine thread observes a step's time and then its rows, so a
        scrape landing between the two (a step of an earlier test's request still running) would count one
        and not the other; retry until every timed step has its rows."""
        for _ in range(500):
            text = urllib.request.urlopen(engine_server + "/metrics").read().decode()
            if _metric(text, "switchyard_engine_step_seconds_count") == _metric(text, "switchyard_engine_step_rows_count"):
                return text
            time.sleep(0.01)
        raise AssertionError("the step histograms never agreed")

    before = scrape()
    body = orjson.dumps({"model": "large", "prompt": "def parse(line):\n", "max_tokens": 8, "ignore_eos": True,
                         "temperature": 0})
    req = urllib.request.Request(engine_server + "/v1/completions", data=body, headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req).read()
    after = scrape()
    steps = {k: _metric(after, "switchyard_engine_step_seconds_count", kind=k)
             - _metric(before, "switchyard_engine_step_seconds_count", kind=k) for k in ("prefill", "decode")}
    assert steps["prefill"] >= 1 and steps["decode"] >= 1, steps
    rows = _metric(after, "switchyard_engine_step_rows_count") - _metric(before, "switchyard_engine_step_rows_count")
    assert rows == steps["prefill"] + steps["decode"]
    assert _metric(after, "switchyard_engine_kv_slots", model="target") >= 1


def test_failing_model_load_names_the_directory(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    proc = subprocess.run(
        [sys.executable, "-m", "backends.engine.cli", "engine", "serve", "--model", str(tmp_path), "--port", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    assert str(tmp_path) in proc.stderr
    assert "model weights" in proc.stderr and "tokenizer" in proc.stderr
