"""An OpenAI-compatible HTTP upstream (vLLM, TGI, llama.cpp's server, SGLang, OpenAI itself).

One pooled aiohttp session per member. Four timeouts, each for its own failure: `connect` (the host is
gone), `first_token` (request sent, nothing back: overloaded or stuck), `idle` (a stream stalls between
events) and `total`. Streams are passed through event by event with no buffering; the first event is
read before `send` returns so a member that fails before producing anything can be retried elsewhere.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator

import aiohttp
import orjson

from backends.base import Backend, BackendError, BackendRequest, BackendResponse, StreamInterrupted
from policies.schema import Timeouts, UpstreamMember

_PATHS = {"chat": "/chat/completions", "completions": "/completions"}


def _upstream_message(status: int, raw: bytes) -> tuple[str, str | None, str | None]:
    """The upstream's own error message when it sent OpenAI's shape, else a generic one."""
    try:
        err = orjson.loads(raw).get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"][:2000], err.get("code") if isinstance(err.get("code"), str) else None, err.get("param")
        if isinstance(err, str):  # TGI's `{"error": "...", "error_type": ...}`
            return err[:2000], None, None
    except (orjson.JSONDecodeError, AttributeError):
        pass
    return f"The upstream model server answered HTTP {status}.", None, None


def map_status(status: int, raw: bytes, retry_after: str | None) -> BackendError:
    """Upstream HTTP errors as the client should see them."""
    message, code, param = _upstream_message(status, raw)
    if status in (400, 404, 413, 422):
        # The request itself is at fault (context too long, bad parameter): the client can fix it.
        return BackendError(400 if status != 413 else 413, message, type="invalid_request_error", code=code,
                            param=param if isinstance(param, str) else None)
    if status in (401, 403):
        # Our credentials for the upstream are wrong: the operator's problem, not the client's.
        return BackendError(502, "The upstream model server refused the gateway's credentials.",
                            code="upstream_auth_failed", retryable=True)
    if status == 429:
        ra = None
        try:
            ra = float(retry_after) if retry_after else None
        except ValueError:
            pass
        return BackendError(429, "The upstream model server is rate limiting; retry later.",
                            type="rate_limit_error", code="upstream_rate_limited", retryable=True, retry_after=ra)
    return BackendError(502, f"The upstream model server failed (HTTP {status}).", code="upstream_error",
                        retryable=True)


class OpenAIUpstream(Backend):
    def __init__(self, name: str, member: UpstreamMember, timeouts: Timeouts, public_model: str | None = None) -> None:
        self.name = name
        self.member = member
        self.timeouts = timeouts
        self.base_url = member.url
        key = os.environ.get(member.api_key_env, "") if member.api_key_env else ""
        self._auth = {"Authorization": f"Bearer {key}"} if key else {}
        self._session: aiohttp.ClientSession | None = None
        self._outstanding = 0

    async def start(self) -> None:
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=self.member.max_connections, keepalive_timeout=60,
                                             enable_cleanup_closed=True)
            self._session = aiohttp.ClientSession(
                connector=connector,
                json_serialize=lambda o: orjson.dumps(o).decode(),
                timeout=aiohttp.ClientTimeout(total=None, connect=self.timeouts.connect),
                skip_auto_headers=("User-Agent",),
                auto_decompress=True,
            )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def outstanding(self) -> int:
        return self._outstanding

    async def health(self) -> bool:
        if self._session is None:
            return False
        try:
            async with self._session.get(self.base_url + "/models", headers=self._auth,
                                         timeout=aiohttp.ClientTimeout(total=self.timeouts.connect + 2)) as resp:
                return resp.status < 500
        except (aiohttp.ClientError, asyncio.TimeoutError):
            return False

    async def send(self, request: BackendRequest) -> BackendResponse:
        if self._session is None:
            await self.start()
        assert self._session is not None
        body = request.body
        if self.member.model is not None and body.get("model") != self.member.model:
            body = {**body, "model": self.member.model}
        if request.stream and request.want_usage:
            body = dict(body)
            so = dict(body.get("stream_options") or {})
            so["include_usage"] = True
            body["stream_options"] = so
        headers = {"Content-Type": "application/json", "x-request-id": request.request_id, **self._auth,
                   **request.headers}
        if request.stream:
            headers["Accept"] = "text/event-stream"
        deadline = time.monotonic() + self.timeouts.total
        self._outstanding += 1
        resp: aiohttp.ClientResponse | None = None
        try:
            try:
                # A non-streaming answer arrives whole, after the last token: only `total` bounds it.
                limit = self.timeouts.total if not request.stream else min(self.timeouts.first_token,
                                                                           self.timeouts.total)
                async with asyncio.timeout(limit):
                    resp = await self._session.post(self.base_url + _PATHS[request.endpoint],
                                                    data=orjson.dumps(body), headers=headers)
                    if resp.status >= 400:
                        raw = await resp.read()
                        raise map_status(resp.status, raw, resp.headers.get("Retry-After"))
                    if not request.stream:
                        raw = await resp.read()
                        resp.release()
                        self._outstanding -= 1
                        return BackendResponse(status=200, body=raw, backend_name=self.name, member=self.base_url)
                    events = self._events(resp, deadline)
                    first = await anext(events)
            except StopAsyncIteration:
                raise BackendError(502, "The upstream model server ended the stream before sending anything.",
                                   code="upstream_empty_stream", retryable=True) from None
            except StreamInterrupted as exc:
                raise BackendError(502, exc.message, code=exc.code, retryable=True) from None
            except TimeoutError:
                raise BackendError(504, "The upstream model server did not answer in time.",
                                   code="upstream_timeout", retryable=True) from None
            except aiohttp.ClientConnectorError:
                raise BackendError(503, "The upstream model server is unavailable.", code="upstream_unavailable",
                                   retryable=True) from None
            except (aiohttp.ClientError, ConnectionError):
                raise BackendError(502, "The connection to the upstream model server failed.",
                                   code="upstream_connection_error", retryable=True) from None
        except BaseException:
            self._outstanding -= 1
            if resp is not None:
                resp.close()
            raise
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self._outstanding -= 1
                resp.close()

        return BackendResponse(status=200, events=_prepend(first, events), backend_name=self.name,
                               member=self.base_url, release=release)

    async def _events(self, resp: aiohttp.ClientResponse, deadline: float) -> AsyncIterator[bytes]:
        """The `data:` payloads of an SSE stream, ending cleanly only at `[DONE]`."""
        content = resp.content
        idle = self.timeouts.idle
        while True:
            try:
                async with asyncio.timeout(min(idle, max(0.0, deadline - time.monotonic()))):
                    line = await content.readline()
            except TimeoutError:
                raise StreamInterrupted("The upstream model server stalled mid-stream.",
                                        code="upstream_idle_timeout") from None
            except (aiohttp.ClientError, ConnectionError):
                raise StreamInterrupted("The upstream model server's connection broke mid-stream.") from None
            if not line:
                raise StreamInterrupted("The upstream model server closed the stream before it was complete.")
            if not line.startswith(b"data:"):
                continue  # blank separators, comments (keep-alives), `event:` lines
            payload = line[5:].strip()
            if payload == b"[DONE]":
                return
            if payload.startswith(b'{"error"'):
                message, code, _ = _upstream_message(500, payload)
                raise StreamInterrupted(message, code=code or "upstream_stream_error")
            yield payload


async def _prepend(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    try:
        yield first
        async for payload in rest:
            yield payload
    finally:
        await rest.aclose()  # type: ignore[attr-defined]
