"""Engine events -> OpenAI wire objects (chunks for streams, one body otherwise).

Shared by the HTTP server and the in-process backend. Whoever stops consuming (client gone,
`aclose()`, task cancelled) cancels generation: every path out goes through `handle.cancel()`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from backends import wire
from backends.engine.engine import RequestHandle
from backends.engine.openai_api import ParsedRequest
from backends.engine.request import Delta, Failed, Finished, Started


class GenerationFailed(Exception):
    """The engine reported a failure for this request."""


@dataclass(slots=True)
class Meta:
    id: str
    created: int
    model: str


def spec_extra(finished: Finished) -> dict:
    return {"speculative": finished.spec} if finished.spec else {}


async def wait_started(handle: RequestHandle) -> Started:
    """Wait for prefill, so a failure before the first byte can still become a clean error."""
    try:
        event = await handle.next_event()
    except BaseException:
        handle.cancel()
        raise
    if isinstance(event, Failed):
        raise GenerationFailed(event.message)
    if not isinstance(event, Started):  # the engine always starts with Started
        handle.cancel()
        raise GenerationFailed(f"unexpected first event {type(event).__name__}")
    return event


async def stream_chunks(
    handle: RequestHandle, parsed: ParsedRequest, meta: Meta, include_usage: bool
) -> AsyncIterator[bytes]:
    """The JSON payload of every SSE event after `wait_started`: the role chunk (chat), one chunk
    per text delta, the finish chunk, then the usage chunk when asked. Raises GenerationFailed."""
    chat = parsed.endpoint == "chat"
    try:
        if chat:
            yield wire.chat_chunk(meta.id, meta.model, meta.created, role="assistant", content="")
        while True:
            event = await handle.next_event()
            if isinstance(event, Delta):
                if not event.text:
                    continue
                if chat:
                    yield wire.chat_chunk(meta.id, meta.model, meta.created, content=event.text)
                else:
                    yield wire.completion_chunk(meta.id, meta.model, meta.created, text=event.text)
            elif isinstance(event, Finished):
                reason = "length" if event.reason == "length" else "stop"
                if chat:
                    yield wire.chat_chunk(meta.id, meta.model, meta.created, finish_reason=reason)
                else:
                    yield wire.completion_chunk(meta.id, meta.model, meta.created, finish_reason=reason)
                if include_usage:
                    use = wire.usage(event.prompt_tokens, event.completion_tokens)
                    yield wire.usage_chunk(
                        parsed.endpoint, meta.id, meta.model, meta.created, use, extra=spec_extra(event)
                    )
                return
            elif isinstance(event, Failed):
                raise GenerationFailed(event.message)
    finally:
        handle.cancel()  # no-op when finished; stops generation when the consumer went away


async def collect(handle: RequestHandle, parsed: ParsedRequest, meta: Meta) -> tuple[bytes, Finished]:
    """The whole answer as one chat.completion / text_completion body."""
    parts: list[str] = []
    try:
        while True:
            event = await handle.next_event()
            if isinstance(event, Delta):
                parts.append(event.text)
            elif isinstance(event, Finished):
                break
            elif isinstance(event, Failed):
                raise GenerationFailed(event.message)
    finally:
        handle.cancel()
    reason = "length" if event.reason == "length" else "stop"
    use = wire.usage(event.prompt_tokens, event.completion_tokens)
    text = "".join(parts)
    build = wire.chat_completion if parsed.endpoint == "chat" else wire.text_completion
    return build(meta.id, meta.model, meta.created, text, reason, use, extra=spec_extra(event)), event
