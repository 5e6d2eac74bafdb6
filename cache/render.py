"""A cache hit rendered in the shape the client asked for, with the `backends.wire` builders.

- `render_body`: one `chat.completion` / `text_completion` JSON body.
- `render_events`: the JSON payloads of a streamed answer (role chunk, content chunks, finish chunk,
  and the usage chunk when `stream_options.include_usage` asked for it). The gateway writes each as
  `data: <payload>\\n\\n` and ends with `data: [DONE]\\n\\n`; `sse_bytes` does exactly that.

Every rendering gets a fresh response id and creation time: a cached answer is a new response. The
`system_fingerprint` is the stored one: the backend configuration that made the answer.
The `usage` is the stored one (the tokens the answer consists of), so clients that count tokens
see the same numbers as on the original call; a semantic hit answers another wording, so the caller
passes that request's own `prompt_tokens`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from backends import wire
from cache.entry import CacheHit

_PIECES = re.compile(r"\s*\S+")
WORDS_PER_CHUNK = 4  # like a fast model: a few words per event, so clients render progressively


def _usage(hit: CacheHit, prompt_tokens: int | None = None) -> dict[str, int]:
    use = hit.usage or {}
    prompt = prompt_tokens if prompt_tokens is not None else int(use.get("prompt_tokens") or 0)
    completion = int(use.get("completion_tokens") or 0)
    return wire.usage(prompt, completion)


def _fingerprint(hit: CacheHit) -> dict[str, str] | None:
    """The answer's `system_fingerprint` as the backend reported it (none: the field is left out)."""
    return {"system_fingerprint": hit.system_fingerprint} if hit.system_fingerprint is not None else None


def render_body(hit: CacheHit, endpoint: str, *, model: str | None = None, prompt_tokens: int | None = None) -> bytes:
    model = model or hit.model
    if endpoint == "chat":
        return wire.chat_completion(wire.new_id("chat"), model, wire.now(), hit.response_text,
                                    hit.finish_reason, _usage(hit, prompt_tokens), extra=_fingerprint(hit))
    return wire.text_completion(wire.new_id("completions"), model, wire.now(), hit.response_text,
                                hit.finish_reason, _usage(hit, prompt_tokens), extra=_fingerprint(hit))


def text_pieces(text: str, words_per_chunk: int = WORDS_PER_CHUNK) -> list[str]:
    """Split keeping every character (whitespace included): joined, the pieces are the text."""
    words = _PIECES.findall(text)
    pieces = ["".join(words[i:i + words_per_chunk]) for i in range(0, len(words), words_per_chunk)]
    tail = text[sum(len(p) for p in pieces):]  # trailing whitespace
    if tail:
        if pieces:
            pieces[-1] += tail
        else:
            pieces = [tail]
    return pieces


def render_events(hit: CacheHit, endpoint: str, *, model: str | None = None, include_usage: bool = False,
                  words_per_chunk: int = WORDS_PER_CHUNK, prompt_tokens: int | None = None) -> list[bytes]:
    model = model or hit.model
    created = wire.now()
    pieces = text_pieces(hit.response_text, words_per_chunk)
    extra = _fingerprint(hit)  # on every chunk, as OpenAI sends it
    events: list[bytes] = []
    if endpoint == "chat":
        rid = wire.new_id("chat")
        events.append(wire.chat_chunk(rid, model, created, role="assistant", content="", extra=extra))
        events += [wire.chat_chunk(rid, model, created, content=p, extra=extra) for p in pieces]
        events.append(wire.chat_chunk(rid, model, created, finish_reason=hit.finish_reason, extra=extra))
    else:
        rid = wire.new_id("completions")
        events += [wire.completion_chunk(rid, model, created, text=p, extra=extra) for p in pieces]
        events.append(wire.completion_chunk(rid, model, created, finish_reason=hit.finish_reason, extra=extra))
    if include_usage:
        events.append(wire.usage_chunk(endpoint, rid, model, created, _usage(hit, prompt_tokens), extra=extra))
    return events


def sse_bytes(events: Iterable[bytes]) -> bytes:
    return b"".join(b"data: " + e + b"\n\n" for e in events) + b"data: [DONE]\n\n"
