"""Per-turn token budgets: a pure decision over one request, given its counted input.

    decision = evaluate(endpoint, body, tenant.budgets, prompt_tokens, counter)

* Input over `max_input_tokens` (or so large that not one output token fits under `max_total_tokens`)
  is `reject`ed (400 naming the budget and the count), `truncate`d (oldest turns dropped, never a system
  prompt or the last user turn) or `compress`ed, as the policy says. Exact: a limit of N passes N tokens
  and refuses N+1.
* The output is clamped to `max_output_tokens` and to what `max_total_tokens` leaves; an unbounded
  request gets the bound written in. The decision says so for the `x-switchyard-max-tokens-clamped`
  header.

`evaluate` does CPU work only when it truncates or compresses; `evaluate_async` runs those cases in an
executor thread and the common case inline.
"""

from __future__ import annotations

import asyncio
import functools
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Literal

from prometheus_client import Counter, Histogram

from policies.compression import Compressor
from policies.schema import Budgets
from policies.tokens import TokenCounter
from policies.truncate import truncate_messages

Action = Literal["pass", "truncate", "compress", "reject"]

DECISIONS = Counter("switchyard_budget_decisions_total", "Budget decisions on requests over or within budget",
                    ["action"])
CLAMPS = Counter("switchyard_max_tokens_clamped_total", "Requests whose max_tokens the budget lowered or set")
COMPRESSION_RATIO = Histogram("switchyard_compression_ratio", "Prompt tokens before / after compression",
                              buckets=(1, 1.1, 1.25, 1.5, 2, 2.5, 3, 4, 6, 8, 12, 20))
COMPRESSION_STEPS = Counter("switchyard_compression_steps_total", "Compression steps that ran", ["step"])
COMPRESSION_SECONDS = Histogram("switchyard_compression_seconds", "Time spent compressing one prompt",
                                buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5))


@dataclass(slots=True)
class BudgetDecision:
    action: Action
    body: dict[str, Any]
    """The body to send: the request's own object when nothing changed, else a new dict."""
    tokens_before: int
    tokens_after: int
    max_output_tokens: int | None
    """Output bound per choice after clamping; None when neither request nor budget bounds it."""
    requested_max_tokens: int | None = None
    clamped_to: int | None = None
    """Set when the budget lowered the requested max_tokens or filled in a missing one."""
    choices: int = 1
    steps: tuple[str, ...] = ()
    skipped: dict[str, str] = field(default_factory=dict)
    dropped_turns: int = 0
    compress_seconds: float = 0.0
    budget: str | None = None
    """The budget that bound the input ("max_input_tokens" / "max_total_tokens"), when one did."""
    limit: int | None = None
    message: str | None = None

    @property
    def rejected(self) -> bool:
        return self.action == "reject"

    @property
    def ratio(self) -> float:
        return self.tokens_before / max(1, self.tokens_after)

    def reservation(self, default_output: int) -> int:
        """Tokens to reserve at rate-limit admission: the input plus the most output this request may
        produce, or `default_output` per choice (`Limits.reserve_output_tokens`) when nothing bounds it."""
        out = self.max_output_tokens if self.max_output_tokens is not None else default_output
        return self.tokens_after + self.choices * out

    def error(self) -> dict[str, Any]:
        """What the gateway's 400 says when rejected (OpenAI error fields)."""
        return {"status": 400, "message": self.message, "type": "invalid_request_error",
                "param": "messages" if "messages" in self.body else "prompt", "code": "input_budget_exceeded"}

    def headers(self) -> dict[str, str]:
        h: dict[str, str] = {}
        if self.clamped_to is not None:
            h["x-switchyard-max-tokens-clamped"] = str(self.clamped_to)
        if self.action == "compress" and self.steps:
            h["x-switchyard-compression"] = (
                f"ratio={self.ratio:.2f}; steps={','.join(self.steps)}; tokens={self.tokens_before}->{self.tokens_after}"
            )
        if self.dropped_turns:
            h["x-switchyard-truncated-turns"] = str(self.dropped_turns)
        return h

    def log_fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"budget_action": self.action, "prompt_tokens_counted": self.tokens_before}
        if self.tokens_after != self.tokens_before:
            out["prompt_tokens_sent"] = self.tokens_after
            out["compression_ratio"] = round(self.ratio, 3)
        if self.steps:
            out["compression_steps"] = list(self.steps)
            out["compression_ms"] = round(self.compress_seconds * 1000, 2)
        if self.dropped_turns:
            out["truncated_turns"] = self.dropped_turns
        if self.clamped_to is not None:
            out["max_tokens_clamped"] = self.clamped_to
        return out

    def observe(self) -> None:
        """Record this decision in the Prometheus metrics."""
        DECISIONS.labels(self.action).inc()
        if self.clamped_to is not None:
            CLAMPS.inc()
        if self.steps:
            COMPRESSION_RATIO.observe(self.ratio)
            COMPRESSION_SECONDS.observe(self.compress_seconds)
            for s in self.steps:
                COMPRESSION_STEPS.labels(s).inc()


def requested_max_tokens(endpoint: str, body: dict[str, Any]) -> int | None:
    if endpoint == "chat" and body.get("max_completion_tokens") is not None:
        return body["max_completion_tokens"]
    return body.get("max_tokens")


def choices(body: dict[str, Any]) -> int:
    n = body.get("n")
    return n if isinstance(n, int) and n > 0 else 1


def input_limit(budgets: Budgets, n: int = 1) -> tuple[str, int] | None:
    """(budget name, most input tokens allowed): the tighter of max_input and what max_total leaves
    for at least one output token per choice."""
    limits = []
    if budgets.max_input_tokens is not None:
        limits.append(("max_input_tokens", budgets.max_input_tokens))
    if budgets.max_total_tokens is not None:
        limits.append(("max_total_tokens", budgets.max_total_tokens - n))
    return min(limits, key=lambda x: x[1]) if limits else None


def over_budget(budgets: Budgets, body: dict[str, Any], prompt_tokens: int) -> bool:
    lim = input_limit(budgets, choices(body))
    return lim is not None and prompt_tokens > lim[1]


def evaluate(
    endpoint: str,
    body: dict[str, Any],
    budgets: Budgets,
    prompt_tokens: int,
    counter: TokenCounter,
    compressor: Compressor | None = None,
) -> BudgetDecision:
    n = choices(body)
    requested = requested_max_tokens(endpoint, body)
    decision = BudgetDecision("pass", body, prompt_tokens, prompt_tokens, requested, requested, choices=n)
    lim = input_limit(budgets, n)
    if lim is not None and prompt_tokens > lim[1]:
        decision.budget, decision.limit = lim
        _fit_input(decision, endpoint, budgets, counter, compressor)
        if decision.rejected:
            return decision
    _clamp_output(decision, endpoint, budgets)
    return decision


async def evaluate_async(
    endpoint: str,
    body: dict[str, Any],
    budgets: Budgets,
    prompt_tokens: int,
    counter: TokenCounter,
    compressor: Compressor | None = None,
    executor: Executor | None = None,
) -> BudgetDecision:
    """`evaluate`, with truncation and compression (tokenizer and model work) off the event loop."""
    if budgets.on_input_over == "reject" or not over_budget(budgets, body, prompt_tokens):
        return evaluate(endpoint, body, budgets, prompt_tokens, counter, compressor)
    call = functools.partial(evaluate, endpoint, body, budgets, prompt_tokens, counter, compressor)
    return await asyncio.get_running_loop().run_in_executor(executor, call)


def _fit_input(d: BudgetDecision, endpoint: str, budgets: Budgets, counter: TokenCounter,
               compressor: Compressor | None) -> None:
    assert d.limit is not None
    limit, name, before = d.limit, d.budget, d.tokens_before
    over = f"This request has {before} input tokens, over the budget {name}={_budget_value(budgets, name)}"
    if name == "max_total_tokens":
        over += f" (at most {limit} input tokens leave room for output)"
    policy = budgets.on_input_over
    if policy == "reject":
        d.action, d.message = "reject", over + "."
        return
    if policy == "truncate":
        if endpoint != "chat":
            d.action, d.message = "reject", over + "; truncation drops chat turns and this is a completions prompt."
            return
        msgs = d.body.get("messages") or []

        def count(m):
            return counter.count_messages(m, d.body.get("tools"))

        kept, dropped, after = truncate_messages(msgs, limit, count)
        if after > limit:
            d.action = "reject"
            d.message = (f"{over}; without its {dropped} earlier turns it still has {after} "
                         "(the system prompt and the last user turn are never dropped).")
            return
        d.action, d.body, d.tokens_after, d.dropped_turns = "truncate", {**d.body, "messages": kept}, after, dropped
        return
    comp = compressor or Compressor(budgets.compression, counter)
    res = comp.compress(endpoint, d.body, limit, before)
    d.steps, d.skipped, d.compress_seconds, d.dropped_turns = tuple(res.steps), res.skipped, res.seconds, res.dropped_turns
    if not res.fits:
        d.action = "reject"
        d.tokens_after = res.tokens_after
        ran = ", ".join(res.steps) or "no step could run"
        d.message = f"{over}; compression ({ran}) left {res.tokens_after}."
        return
    d.action, d.body, d.tokens_after = "compress", res.body, res.tokens_after


def _budget_value(budgets: Budgets, name: str | None) -> int | None:
    return getattr(budgets, name) if name else None


def _clamp_output(d: BudgetDecision, endpoint: str, budgets: Budgets) -> None:
    caps = []
    if budgets.max_output_tokens is not None:
        caps.append(budgets.max_output_tokens)
    if budgets.max_total_tokens is not None:
        caps.append((budgets.max_total_tokens - d.tokens_after) // d.choices)
    if not caps:
        return
    allowed = min(caps)
    requested = d.requested_max_tokens
    if requested is not None and requested <= allowed:
        return
    body = dict(d.body)
    fields = [f for f in ("max_completion_tokens", "max_tokens") if body.get(f) is not None]
    if endpoint != "chat":
        fields = ["max_tokens"]
    for f in fields or ["max_tokens"]:
        body[f] = allowed
    d.body, d.max_output_tokens, d.clamped_to = body, allowed, allowed
