"""Token counting: the backend's own tokenizer when Switchyard knows it, a fast estimate otherwise.

A request is counted once (`count_request`) and the count is shared through `RequestContext.prompt_tokens`.

* `HFTokenCounter` loads a Hugging Face tokenizer directory (or hub name already in the local cache) and,
  when the tokenizer has a chat template, counts chat requests the way the backend will see them: the
  template rendered with `add_generation_prompt=True`, then encoded without adding special tokens again.
* `EstimateCounter` needs nothing: a linear model over character classes that Python counts in C
  (`bytes.count`, `bytes.translate`), fitted by `bench/token_estimate.py` against a modern byte-level BPE
  tokenizer (Mistral's 131k-vocabulary Tekken, the same family as cl100k/o200k). The fitted numbers and
  its error are in docs/budgets.md.
"""

from __future__ import annotations

import functools
import json
import math
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

REPO = Path(__file__).resolve().parents[1]
BUNDLED = {"bundled:target": REPO / "backends/models/target", "bundled:draft": REPO / "backends/models/draft"}

# Non-text content parts have no text to tokenize; these are the fixed costs OpenAI documents for a
# low-detail image and that most servers are near. An estimate either way.
IMAGE_TOKENS = 85
AUDIO_TOKENS = 100


class TokenCounter(Protocol):
    name: str
    exact: bool

    def count_text(self, text: str) -> int: ...

    def count_texts(self, texts: Sequence[str]) -> list[int]: ...

    def count_messages(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict] | None = None) -> int: ...


# --- message flattening (shared by both counters) ----------------------------------------------------


def content_text(content: Any) -> tuple[str, int]:
    """(text, fixed extra tokens) of an OpenAI message `content`: a string, None, or a list of parts."""
    if content is None:
        return "", 0
    if isinstance(content, str):
        return content, 0
    texts: list[str] = []
    extra = 0
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            texts.append(part.get("text") or "")
        elif kind in ("image_url", "image", "input_image"):
            extra += IMAGE_TOKENS
        elif kind in ("input_audio", "audio"):
            extra += AUDIO_TOKENS
        elif kind == "refusal":
            texts.append(part.get("refusal") or "")
    return "\n".join(texts), extra


def _tool_calls_text(message: dict[str, Any]) -> str:
    calls = message.get("tool_calls") or []
    parts = []
    for call in calls:
        fn = call.get("function") or {}
        parts.append(f"{fn.get('name', '')}({fn.get('arguments', '')})")
    if message.get("function_call"):
        fn = message["function_call"]
        parts.append(f"{fn.get('name', '')}({fn.get('arguments', '')})")
    return "\n".join(parts)


# --- the estimate ------------------------------------------------------------------------------------

_DIGITS = b"0123456789"
_PUNCT = string.punctuation.encode()

# Fitted by `python bench/token_estimate.py` (least squares on relative error over 2,000 text chunks of English prose,
# Python source, JSON and non-English text) against Tekken; see docs/budgets.md for the error.
_W_CHAR = 0.2424  # any character
_W_SPACE = -0.1316  # a space mostly merges into the next word's token
_W_NEWLINE = 0.0218  # newlines
_W_DIGIT = 1.2042  # digits: split one per token by modern tokenizers
_W_PUNCT = 0.2831  # ASCII punctuation
_W_WIDE = 0.2050  # extra UTF-8 bytes (non-ASCII text is split finer)
_PER_MESSAGE = 4  # role + separators, as in OpenAI's published chat accounting
_PER_NAME = 1
_REPLY_PRIMING = 3  # the assistant header the template opens for the answer


class EstimateCounter:
    """Fast, dependency-free token estimate (about 4 characters a token for English prose)."""

    name = "estimate"
    exact = False

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        # All counting on the UTF-8 bytes: bytes.translate/count are table-driven C loops (~10 µs for
        # a 4k-token prompt; the str equivalents take tens of times longer).
        raw = text.encode("utf-8")
        n = len(text)
        wide = len(raw) - n
        digits = len(raw) - len(raw.translate(None, _DIGITS))
        punct = len(raw) - len(raw.translate(None, _PUNCT))
        est = (_W_CHAR * n + _W_SPACE * raw.count(b" ") + _W_NEWLINE * raw.count(b"\n") + _W_DIGIT * digits
               + _W_PUNCT * punct + _W_WIDE * wide)
        return max(1, math.ceil(est))

    def count_texts(self, texts: Sequence[str]) -> list[int]:
        return [self.count_text(t) for t in texts]

    def count_messages(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict] | None = None) -> int:
        total = _REPLY_PRIMING
        for m in messages:
            text, extra = content_text(m.get("content"))
            total += _PER_MESSAGE + extra + self.count_text(text)
            if m.get("name"):
                total += _PER_NAME + self.count_text(m["name"])
            if m.get("tool_calls") or m.get("function_call"):
                total += self.count_text(_tool_calls_text(m))
        if tools:
            total += self.count_text(json.dumps(tools, separators=(",", ":")))
        return total


ESTIMATE = EstimateCounter()


# --- the backend's own tokenizer ---------------------------------------------------------------------


class HFTokenCounter:
    """Counts with a Hugging Face tokenizer; chat requests through its chat template when it has one."""

    exact = True

    def __init__(self, source: str | Path) -> None:
        from transformers import AutoTokenizer  # heavy import, only when a tokenizer is configured

        path = BUNDLED.get(str(source), source)
        self.name = str(source)
        self.tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        backend = getattr(self.tokenizer, "backend_tokenizer", None)
        if backend is None:
            raise ValueError(f"{source}: only fast (tokenizers-backed) tokenizers are supported")
        # A private copy: some tokenizer.json files carry truncation/padding meant for training.
        from tokenizers import Tokenizer

        self._fast = Tokenizer.from_str(backend.to_str())
        self._fast.no_truncation()
        self._fast.no_padding()
        self.has_template = bool(getattr(self.tokenizer, "chat_template", None))

    def count_text(self, text: str) -> int:
        return len(self._fast.encode(text, add_special_tokens=False).ids) if text else 0

    def count_texts(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        return [len(e.ids) for e in self._fast.encode_batch(list(texts), add_special_tokens=False)]

    def render_chat(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict] | None = None) -> str:
        """The prompt text the backend's template makes of these messages (raises if the template does)."""
        flat = []
        for m in messages:
            text, _ = content_text(m.get("content"))
            flat.append({**m, "content": text})
        return self.tokenizer.apply_chat_template(
            flat, tools=list(tools) if tools else None, add_generation_prompt=True, tokenize=False
        )

    def count_messages(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict] | None = None) -> int:
        extra = sum(content_text(m.get("content"))[1] for m in messages)
        if self.has_template:
            try:
                return extra + self.count_text(self.render_chat(messages, tools))
            except Exception:  # noqa: BLE001 - a template that rejects the shape (e.g. role order) counts as below
                pass
        # No template (or it refused): the text itself plus the usual per-message framing.
        texts = []
        for m in messages:
            texts.append(content_text(m.get("content"))[0])
            if m.get("tool_calls") or m.get("function_call"):
                texts.append(_tool_calls_text(m))
        if tools:
            texts.append(json.dumps(tools, separators=(",", ":")))
        framing = _REPLY_PRIMING + _PER_MESSAGE * len(messages)
        return extra + framing + sum(self.count_texts(texts))


@functools.lru_cache(maxsize=16)
def counter_for(tokenizer: str | None) -> TokenCounter:
    """The counter for a backend: its HF tokenizer (loaded once per process) or the estimate.

    `tokenizer` is a directory, a name in the local HF cache, or `bundled:target` / `bundled:draft`.
    A bundled model that is not there yet falls back to the estimate rather than failing requests.
    """
    if tokenizer is None:
        return ESTIMATE
    bundled = BUNDLED.get(tokenizer)
    if bundled is not None and not (bundled / "tokenizer.json").exists() and not (bundled / "tokenizer_config.json").exists():
        return ESTIMATE
    return HFTokenCounter(tokenizer)


# --- a whole request ---------------------------------------------------------------------------------


def count_prompt(prompt: Any, counter: TokenCounter) -> int:
    """A completions `prompt`: a string, a list of strings, a token-id list, or a list of those."""
    if prompt is None:
        return 0
    if isinstance(prompt, str):
        return counter.count_text(prompt)
    if prompt and all(isinstance(p, int) for p in prompt):
        return len(prompt)
    total = 0
    strings = [p for p in prompt if isinstance(p, str)]
    if strings:
        total += sum(counter.count_texts(strings))
    total += sum(len(p) for p in prompt if isinstance(p, list))
    return total


def count_request(endpoint: str, body: dict[str, Any], counter: TokenCounter) -> int:
    """Input tokens of an OpenAI request body (`endpoint` is "chat" or "completions")."""
    if endpoint == "chat":
        return counter.count_messages(body.get("messages") or [], body.get("tools"))
    return count_prompt(body.get("prompt"), counter)
