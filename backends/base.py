"""The backend interface: one tiny async method, several interchangeable implementations.

Shaped after httpx's transports. The gateway hands a backend a `BackendRequest` (an OpenAI request
body that has already been validated and had its public model name replaced by the backend's own),
and gets a `BackendResponse` back: either a complete JSON body, or an async iterator over the JSON
payloads of the SSE events the client should see, one `chat.completion.chunk` (or `text_completion`
chunk) per item, as raw bytes so a proxy can pass them through without re-serialising.

Implementations: `backends.upstream.OpenAIUpstream` (any OpenAI-compatible HTTP server: vLLM, TGI,
llama.cpp, SGLang, OpenAI), the local engine (`backends.engine`), and test doubles.

Errors: a backend raises `BackendError` *before* its response starts (nothing has reached the client,
so the gateway may retry elsewhere when `retryable`), and raises `StreamInterrupted` from the event
iterator when a stream dies part-way (the gateway then ends the client's stream with an error event).
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Endpoint = Literal["chat", "completions"]


@dataclass(slots=True)
class BackendRequest:
    endpoint: Endpoint
    body: dict[str, Any]
    """The OpenAI request body to send, `model` already rewritten to the backend's own name."""
    stream: bool
    request_id: str
    want_usage: bool = True
    """Whether the backend should produce a final usage chunk when streaming. The gateway always asks
    (it needs token counts for metrics and limits) and drops the chunk if the client did not."""
    headers: dict[str, str] = field(default_factory=dict)
    """Extra headers to forward (e.g. traceparent)."""
    max_tokens_is_cap: bool = False
    """The client set no output bound and the gateway's budget wrote one in: a cap, not a demand. A
    backend that knows its context length generates up to what fits under it, as OpenAI does for an
    omitted `max_tokens`, instead of refusing the request for asking more than the context holds."""


@dataclass(slots=True)
class BackendResponse:
    status: int = 200
    body: bytes | None = None
    """Raw JSON body of a non-streaming response."""
    events: AsyncIterator[bytes] | None = None
    """For streaming responses: the JSON payload of each SSE event, without `data: ` and newlines.
    Ends after the last chunk; `[DONE]` is the gateway's job, not the backend's."""
    backend_name: str = ""
    member: str = ""
    usage: dict[str, int] | None = None
    """Filled by backends that know the usage without it being in the body (e.g. the local engine)."""
    extra_headers: dict[str, str] = field(default_factory=dict)
    release: Callable[[], None] | None = None
    """Called once by `aclose`: return the connection, stop generation, update load counters."""

    async def aclose(self) -> None:
        """Release the underlying connection / cancel generation. The gateway calls it exactly once per
        response, however the response ended (done, client gone, error); safe to call twice."""
        events, self.events = self.events, None
        try:
            if events is not None and hasattr(events, "aclose"):
                await events.aclose()  # type: ignore[union-attr]
        finally:
            release, self.release = self.release, None
            if release is not None:
                release()


class BackendError(Exception):
    """A failure before any byte of the response exists. Mapped to an OpenAI-shaped error."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "upstream_error",
        code: str | None = None,
        param: str | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.retryable = retryable
        self.retry_after = retry_after


class StreamInterrupted(Exception):
    """A streaming response that died after it started. Never cached, never ended with [DONE]."""

    def __init__(self, message: str, *, code: str = "upstream_stream_interrupted") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class Backend(abc.ABC):
    """A thing that answers OpenAI requests. One instance per pool member."""

    name: str = "backend"

    @abc.abstractmethod
    async def send(self, request: BackendRequest) -> BackendResponse:
        """Start the request; return once the response status is known (for streams: once the first
        event is available, so a failure before the first byte can still be retried elsewhere)."""

    async def start(self) -> None:  # noqa: B027 - optional hook
        """Open pools, load models. Called once before the first `send`."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release everything `start` acquired."""

    def outstanding(self) -> int:
        """Requests in flight, for load-aware choice. Backends that track it override this."""
        return 0

    async def health(self) -> bool:
        """Active health check. Default: healthy."""
        return True

    def metrics_snapshot(self) -> dict[str, Any]:
        return {}
