"""A real HTTP server speaking OpenAI's wire format, standing in for vLLM/TGI in tests and benchmarks.

Run: `python -m tests.mock_upstream --port 9000 [--fail 503] [--model NAME]`.

The answer is deterministic: `n_tokens` words `w0 w1 ...` (default 8), cut at the first stop sequence.
A request can steer it with an extra body field the gateway passes through:
  "mock": {"tokens": N, "first_delay_ms": X, "token_delay_ms": Y, "die_after": K, "hang": true,
           "status": 500, "error_after": K, "tool_call": "fn", "refuse_as": "small"}
("tool_call": the answer is a call of that function, with finish_reason "stop", as OpenAI answers when
`tool_choice` names the function; "refuse_as": requests for that model name are answered with a refusal.)
`GET /_stats` reports requests seen, streams completed and streams cancelled by the client, so tests
can prove a disconnect reached the upstream.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import orjson
from aiohttp import web

STATS = {"requests": 0, "completed": 0, "cancelled": 0, "ids": []}


def _words(n: int) -> list[str]:
    return [f" w{i}" if i else f"w{i}" for i in range(n)]


def _cut(words: list[str], stop: object) -> tuple[list[str], str]:
    """The words up to the first stop sequence (the stop itself excluded), as a real server does."""
    stops = [stop] if isinstance(stop, str) else list(stop or [])
    text = ""
    for i, w in enumerate(words):
        candidate = text + w
        hits = [candidate.index(s) for s in stops if s in candidate]
        if hits:
            tail = candidate[len(text):min(hits)] if min(hits) > len(text) else ""
            return words[:i] + ([tail] if tail else []), "stop"
        text = candidate
    return words, "length"


def _prompt_tokens(body: dict) -> int:
    if "messages" in body:
        return sum(len(str(m.get("content", "")).split()) + 4 for m in body["messages"])
    return len(str(body.get("prompt", "")).split())


async def completions(request: web.Request) -> web.StreamResponse:
    chat = request.path.endswith("/chat/completions")
    body = orjson.loads(await request.read())
    STATS["requests"] += 1
    STATS["ids"].append(request.headers.get("x-request-id"))
    del STATS["ids"][:-50]
    fail = request.app["fail"]
    mock = body.get("mock") or {}
    status = mock.get("status") or fail
    if status:
        return web.Response(status=status, content_type="application/json",
                            body=orjson.dumps({"error": {"message": f"mock failure {status}", "type": "server_error",
                                                         "param": None, "code": None}}))
    if mock.get("first_delay_ms"):
        await asyncio.sleep(mock["first_delay_ms"] / 1000)
    if mock.get("hang"):
        await asyncio.sleep(3600)
    n = int(mock.get("tokens", body.get("max_tokens") or body.get("max_completion_tokens") or 8))
    n = min(n, int(body.get("max_tokens") or body.get("max_completion_tokens") or n))
    words, finish = _cut(_words(n), body.get("stop"))
    if mock.get("refuse_as") is not None and mock["refuse_as"] == body.get("model"):
        words, finish = ["I'm sorry, ", "but I can't ", "help with that."], "stop"
    if len(words) == n and finish == "stop":
        finish = "length"
    model = request.app["model"] or body["model"]
    rid = ("chatcmpl-" if chat else "cmpl-") + "mock"
    created = int(time.time())
    usage = {"prompt_tokens": _prompt_tokens(body), "completion_tokens": len(words),
             "total_tokens": _prompt_tokens(body) + len(words)}
    # OpenAI names the backend configuration on every answer and chunk; the mock does when asked to.
    fingerprint = {"system_fingerprint": mock["system_fingerprint"]} if mock.get("system_fingerprint") else {}
    call = None
    if chat and mock.get("tool_call"):
        call = {"index": 0, "id": "call_mock", "type": "function",
                "function": {"name": mock["tool_call"], "arguments": '{"city": "Paris"}'}}
        words, finish = [], "stop"
    if not body.get("stream"):
        text = "".join(words)
        message = {"role": "assistant", "content": text} if call is None else {
            "role": "assistant", "content": None, "tool_calls": [{k: v for k, v in call.items() if k != "index"}]}
        choice = ({"index": 0, "message": message, "finish_reason": finish}
                  if chat else {"index": 0, "text": text, "finish_reason": finish, "logprobs": None})
        return web.Response(body=orjson.dumps({"id": rid, "object": "chat.completion" if chat else "text_completion",
                                               "created": created, "model": model, "choices": [choice],
                                               "usage": usage, **fingerprint}),
                            content_type="application/json")
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await resp.prepare(request)
    obj = "chat.completion.chunk" if chat else "text_completion"

    def chunk(delta_text: str | None, finish_reason: str | None, role: bool = False) -> bytes:
        if chat:
            delta: dict = {"role": "assistant"} if role else {}
            if delta_text is not None:
                delta["content"] = delta_text
            choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        else:
            choice = {"index": 0, "text": delta_text or "", "finish_reason": finish_reason}
        return b"data: " + orjson.dumps({"id": rid, "object": obj, "created": created, "model": model,
                                         "choices": [choice], **fingerprint}) + b"\n\n"

    try:
        if chat:
            await resp.write(chunk("", None, role=True))
        if call is not None:
            await resp.write(b"data: " + orjson.dumps({"id": rid, "object": obj, "created": created, "model": model,
                                                       "choices": [{"index": 0, "delta": {"tool_calls": [call]},
                                                                    "finish_reason": None}]}) + b"\n\n")
        for i, w in enumerate(words):
            if mock.get("die_after") is not None and i == mock["die_after"]:
                request.transport.close()  # the upstream process "dies" mid-stream
                return resp
            if mock.get("error_after") is not None and i == mock["error_after"]:
                await resp.write(b'data: {"error": {"message": "mock engine error", "type": "server_error"}}\n\n')
                return resp
            if mock.get("token_delay_ms"):
                await asyncio.sleep(mock["token_delay_ms"] / 1000)
            await resp.write(chunk(w, None))
        await resp.write(chunk(None if chat else "", finish))
        so = body.get("stream_options") or {}
        if so.get("include_usage"):
            await resp.write(b"data: " + orjson.dumps({"id": rid, "object": obj, "created": created, "model": model,
                                                       "choices": [], "usage": usage}) + b"\n\n")
        await resp.write(b"data: [DONE]\n\n")
        STATS["completed"] += 1
    except (ConnectionResetError, asyncio.CancelledError):
        STATS["cancelled"] += 1
        raise
    return resp


async def models(request: web.Request) -> web.Response:
    return web.json_response({"object": "list", "data": [{"id": request.app["model"] or "mock", "object": "model"}]})


async def stats(request: web.Request) -> web.Response:
    return web.json_response(STATS)


def make_app(fail: int | None = None, model: str | None = None) -> web.Application:
    app = web.Application()
    app["fail"] = fail
    app["model"] = model
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_post("/v1/completions", completions)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/_stats", stats)
    return app


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--fail", type=int, default=None, help="answer every request with this HTTP status")
    p.add_argument("--model", default=None)
    args = p.parse_args()
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    web.run_app(make_app(args.fail, args.model), host=args.host, port=args.port, access_log=None,
                handler_cancellation=True, print=lambda *a: print("ready", flush=True))


if __name__ == "__main__":
    main()
