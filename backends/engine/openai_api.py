"""OpenAI request body -> engine request: validation, chat templating, tokenisation, limits.

Shared by the engine's HTTP server and the in-process backend so both reject the same inputs with
the same OpenAI-shaped errors. Extensions beyond the OpenAI schema (as vLLM does):
`top_k`, `ignore_eos`, `speculation` ("draft" | "ngram" | "none") and `num_speculative_tokens`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from backends.engine.request import GenerationRequest
from backends.engine.sampling import SamplingParams
from backends.engine.worker import ServedModel

MAX_STOP_SEQUENCES = 4
CHAT_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}


class InvalidRequest(Exception):
    """A 400 with OpenAI's error fields."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code
        self.status = 400
        self.type = "invalid_request_error"


@dataclass(slots=True)
class ParsedRequest:
    endpoint: str  # "chat" | "completions"
    generation: GenerationRequest
    stream: bool
    include_usage: bool
    model_name: str


# ------------------------------------------------------------------ field checks


def _number(body: dict, key: str, lo: float, hi: float, default: float, *, lo_open: bool = False) -> float:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidRequest(f"'{key}' must be a number", key, "invalid_type")
    if value < lo or value > hi or (lo_open and value == lo):
        bound = f"({lo}, {hi}]" if lo_open else f"[{lo}, {hi}]"
        raise InvalidRequest(f"'{key}' must be in {bound}, got {value}", key, "invalid_value")
    return float(value)


def _int(body: dict, key: str, lo: int, default: int | None) -> int | None:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequest(f"'{key}' must be an integer", key, "invalid_type")
    if value < lo:
        raise InvalidRequest(f"'{key}' must be >= {lo}, got {value}", key, "invalid_value")
    return value


def _stop(body: dict) -> tuple[str, ...]:
    stop = body.get("stop")
    if stop is None:
        return ()
    if isinstance(stop, str):
        stop = [stop]
    if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
        raise InvalidRequest("'stop' must be a string or a list of strings", "stop", "invalid_stop")
    if len(stop) > MAX_STOP_SEQUENCES:
        raise InvalidRequest(f"'stop' takes at most {MAX_STOP_SEQUENCES} sequences", "stop", "invalid_stop")
    if any(s == "" for s in stop):
        raise InvalidRequest("'stop' sequences must not be empty", "stop", "invalid_stop")
    return tuple(stop)


def _unsupported(body: dict, endpoint: str) -> None:
    """Features this engine does not implement are refused rather than silently ignored."""
    n = body.get("n")
    if n is not None and n != 1:
        raise InvalidRequest("only n=1 is supported", "n", "unsupported_parameter")
    best_of = body.get("best_of")
    if best_of is not None and best_of != 1:
        raise InvalidRequest("only best_of=1 is supported", "best_of", "unsupported_parameter")
    for key in ("presence_penalty", "frequency_penalty"):
        value = body.get(key)
        if value not in (None, 0, 0.0):
            raise InvalidRequest(f"'{key}' is not supported by the local engine", key, "unsupported_parameter")
    if body.get("logit_bias"):
        raise InvalidRequest("'logit_bias' is not supported", "logit_bias", "unsupported_parameter")
    if body.get("logprobs") not in (None, False, 0) or body.get("top_logprobs"):
        raise InvalidRequest("'logprobs' is not supported", "logprobs", "unsupported_parameter")
    if body.get("tools"):
        raise InvalidRequest("tool calling is not supported by the local engine", "tools", "unsupported_parameter")
    fmt = body.get("response_format")
    if fmt is not None and (not isinstance(fmt, dict) or fmt.get("type", "text") != "text"):
        raise InvalidRequest("only response_format type 'text' is supported", "response_format", "unsupported_parameter")
    if endpoint == "completions":
        if body.get("echo"):
            raise InvalidRequest("'echo' is not supported", "echo", "unsupported_parameter")
        if body.get("suffix"):
            raise InvalidRequest("'suffix' is not supported", "suffix", "unsupported_parameter")


# ------------------------------------------------------------------ prompts


def _message_text(message: dict, i: int) -> str:
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise InvalidRequest(
                    "only text content parts are supported", f"messages[{i}].content", "unsupported_content"
                )
            parts.append(part["text"])
        return "".join(parts)
    raise InvalidRequest("message content must be a string or a list of parts", f"messages[{i}].content", "invalid_type")


def _chat_messages(body: dict) -> list[dict[str, str]]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequest("'messages' must be a non-empty list", "messages", "invalid_type")
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in CHAT_ROLES:
            raise InvalidRequest(f"messages[{i}] needs a role in {sorted(CHAT_ROLES)}", f"messages[{i}].role", "invalid_value")
        out.append({"role": m["role"], "content": _message_text(m, i)})
    return out


def render_chat(tokenizer, messages: list[dict[str, str]]) -> list[int]:
    """The tokenizer's chat template when it has one; else the plain transcript fallback."""
    if getattr(tokenizer, "chat_template", None):
        try:
            text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        except Exception as e:  # noqa: BLE001 - templates raise on e.g. non-alternating roles
            raise InvalidRequest(f"the model's chat template rejected the messages: {e}", "messages", "invalid_messages") from e
        # verbose=False: over-long prompts are our 400 to give, not a tokenizer warning in the log.
        return tokenizer.encode(text, add_special_tokens=False, verbose=False)
    text = "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant:"
    return tokenizer.encode(text, add_special_tokens=True, verbose=False)


def _completion_prompt(tokenizer, body: dict) -> list[int]:
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], (str, list)):
        prompt = prompt[0]  # a batch of one
    if isinstance(prompt, str):
        ids = tokenizer.encode(prompt, add_special_tokens=True, verbose=False)
    elif isinstance(prompt, list) and prompt and all(isinstance(t, int) and not isinstance(t, bool) for t in prompt):
        vocab = len(tokenizer)
        if any(t < 0 or t >= vocab for t in prompt):
            raise InvalidRequest(f"prompt token ids must be in [0, {vocab})", "prompt", "invalid_value")
        ids = list(prompt)
    elif isinstance(prompt, list) and len(prompt) > 1:
        raise InvalidRequest("batched prompts are not supported; send one prompt per request", "prompt", "unsupported_parameter")
    else:
        raise InvalidRequest("'prompt' must be a string or a list of token ids", "prompt", "invalid_type")
    if not ids:
        bos = tokenizer.bos_token_id
        if bos is None:
            raise InvalidRequest("'prompt' is empty", "prompt", "invalid_value")
        ids = [bos]
    return ids


# ------------------------------------------------------------------ entry point


def parse_request(endpoint: str, body: Any, served: ServedModel, request_id: str, *,
                  fit_max_tokens: bool = False) -> ParsedRequest:
    """The engine's reading of an OpenAI request. `fit_max_tokens`: the body's max_tokens is a cap the
    gateway wrote into a request that set none (`BackendRequest.max_tokens_is_cap`), so a prompt that
    leaves less room generates what fits instead of being refused; a client's own bound is still held
    to the context, as OpenAI does."""
    if not isinstance(body, dict):
        raise InvalidRequest("the request body must be a JSON object", None, "invalid_json")
    _unsupported(body, endpoint)
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise InvalidRequest("'stream' must be a boolean", "stream", "invalid_type")
    options = body.get("stream_options")
    if options is not None:
        if not stream:
            raise InvalidRequest("'stream_options' is only allowed when 'stream' is true", "stream_options", "invalid_value")
        if not isinstance(options, dict):
            raise InvalidRequest("'stream_options' must be an object", "stream_options", "invalid_type")
    include_usage = bool((options or {}).get("include_usage", False))

    tokenizer = served.target.tokenizer
    if endpoint == "chat":
        prompt_ids = render_chat(tokenizer, _chat_messages(body))
        prompt_param = "messages"
    else:
        prompt_ids = _completion_prompt(tokenizer, body)
        prompt_param = "prompt"

    context = served.target.context_length
    if len(prompt_ids) >= context:
        raise InvalidRequest(
            f"This model's maximum context length is {context} tokens, but the prompt is {len(prompt_ids)} "
            "tokens (at least one token must be left to generate). Shorten the prompt.",
            prompt_param,
            "context_length_exceeded",
        )
    max_key = "max_completion_tokens" if body.get("max_completion_tokens") is not None else "max_tokens"
    max_tokens = _int(body, max_key, 1, None)
    if max_tokens is None:
        max_tokens = context - len(prompt_ids)
    elif fit_max_tokens:
        max_tokens = min(max_tokens, context - len(prompt_ids))
    elif len(prompt_ids) + max_tokens > context:
        raise InvalidRequest(
            f"This model's maximum context length is {context} tokens. However, you requested "
            f"{len(prompt_ids) + max_tokens} tokens ({len(prompt_ids)} in the prompt, {max_tokens} in the "
            f"completion). Reduce the prompt or '{max_key}'.",
            max_key,
            "context_length_exceeded",
        )

    top_k = _int(body, "top_k", -1, 0)
    ignore_eos = body.get("ignore_eos", False)
    if not isinstance(ignore_eos, bool):
        raise InvalidRequest("'ignore_eos' must be a boolean", "ignore_eos", "invalid_type")
    params = SamplingParams(
        max_tokens=max_tokens,
        temperature=_number(body, "temperature", 0.0, 2.0, 1.0),
        top_p=_number(body, "top_p", 0.0, 1.0, 1.0, lo_open=True),
        top_k=max(0, top_k or 0),
        seed=_int(body, "seed", -(2**63), None),
        stop=_stop(body),
        ignore_eos=ignore_eos,
    )
    speculation = body.get("speculation")
    if speculation not in (None, "draft", "ngram", "none"):
        raise InvalidRequest("'speculation' must be one of 'draft', 'ngram', 'none'", "speculation", "invalid_value")
    if speculation == "draft" and served.draft is None:
        raise InvalidRequest(f"model '{served.name}' has no draft model", "speculation", "invalid_value")
    k = _int(body, "num_speculative_tokens", 0, None)
    if k is not None and k > 16:
        raise InvalidRequest("'num_speculative_tokens' must be <= 16", "num_speculative_tokens", "invalid_value")
    model_name = body.get("model") if isinstance(body.get("model"), str) else served.name
    return ParsedRequest(
        endpoint=endpoint,
        generation=GenerationRequest(
            request_id=request_id,
            model=served.name,
            prompt_ids=prompt_ids,
            params=params,
            speculation=speculation,
            num_speculative_tokens=k,
        ),
        stream=stream,
        include_usage=include_usage,
        model_name=model_name,
    )
