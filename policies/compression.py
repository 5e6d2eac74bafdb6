"""Prompt compression: steps applied in the policy's order until the prompt fits its token budget.

Steps (each switchable in `Budgets.compression.steps`):

* `normalize`  – whitespace runs, trailing spaces and blank-line runs outside code; zero-width characters;
                 boilerplate lines (a line of 30+ characters repeated 3+ times) kept once.
* `dedupe`     – an older turn that is a (near-)duplicate of a later one of the same role (word-trigram
                 Jaccard >= `near_duplicate`) is replaced by a short marker; the later copy stays.
* `fewshot`    – few-shot examples (chat messages named `example_*`, or repeated `Example N:` / `Q:` /
                 `Input:` blocks inside a message) least similar to the question are dropped by embedding
                 similarity; the `fewshot_keep` most similar always stay.
* `extractive` – sentences of long context are dropped, least relevant to the last user turn first (BM25 or
                 embeddings), until the prompt fits; the question itself is never touched.
* `lm_prune`   – the least surprising words under a small causal LM are dropped (LLMLingua-style); skipped
                 when no model directory exists.
* `truncate`   – last resort if listed: the oldest turns are dropped (see policies/truncate.py).

Never touched by any step: system/developer messages (unless `compress_system`, which lets extractive and
lm_prune shorten them; few-shot examples inside them can always go), the question sentences of the last
user turn, tool calls, and non-text content parts. Pure CPU work: call it from an executor thread.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from policies.lmprune import SurprisalPruner
from policies.relevance import (
    Embed,
    Unit,
    cached_embed,
    default_embed,
    embedding_scores,
    jaccard,
    join_units,
    lexical_scores,
    shingles,
    split_units,
)
from policies.schema import Compression
from policies.tokens import ESTIMATE, TokenCounter
from policies.truncate import fewest_to_drop, last_user_index, truncate_messages

Message = dict[str, Any]
DUPLICATE_MARK = "[repeated later in this conversation]"
ELIDED = "…"
_PINNED = ("system", "developer")


@dataclass(slots=True)
class CompressionResult:
    body: dict[str, Any]
    tokens_before: int
    tokens_after: int
    target: int
    steps: list[str] = field(default_factory=list)  # steps that ran, in order
    step_tokens: list[int] = field(default_factory=list)  # tokens after each (estimated while far over)
    skipped: dict[str, str] = field(default_factory=dict)  # step → why it could not run
    dropped_turns: int = 0
    seconds: float = 0.0

    @property
    def fits(self) -> bool:
        return self.tokens_after <= self.target

    @property
    def ratio(self) -> float:
        return self.tokens_before / max(1, self.tokens_after)


@dataclass(slots=True)
class _Prompt:
    """The messages being compressed, and how to count them: exactly, as the backend will (`count`), or
    fast while planning (`estimate`, `costs`).

    A backend tokenizer can take ~10 ms to encode a 4k-token prompt on this CPU, too slow to call after
    every step. Planning therefore uses the fast estimate, scaled by how far it was off on this very
    prompt (`scale` = exact / estimated count of the original), and exact counts are taken only when the
    estimate says the prompt is near the budget, by which time it is small.
    """

    messages: list[Message]
    endpoint: str
    tools: Any
    counter: TokenCounter
    scale: float = 1.0
    version: int = 0  # bumped on every edit, so an exact count is never taken twice of one state
    _exact: tuple[int, int] = (-1, 0)

    def count(self, messages: Sequence[Message] | None = None) -> int:
        if messages is not None:
            return self._count(self.counter, messages)
        if self._exact[0] != self.version:
            self._exact = (self.version, self._count(self.counter, None))
        return self._exact[1]

    def _count(self, counter: TokenCounter, messages: Sequence[Message] | None) -> int:
        msgs = self.messages if messages is None else messages
        if self.endpoint == "chat":
            return counter.count_messages(msgs, self.tools)
        return counter.count_text(msgs[0]["content"])

    def calibrate(self, exact: int) -> None:
        if self.counter.exact:
            self.scale = exact / max(1, self._count(ESTIMATE, None))

    def estimate(self, messages: Sequence[Message] | None = None) -> int:
        if not self.counter.exact:
            return self.count(messages)
        return math.ceil(self.scale * self._count(ESTIMATE, messages))

    def costs(self, texts: Sequence[str]) -> list[float]:
        if not self.counter.exact:
            return list(self.counter.count_texts(texts))
        return [self.scale * c for c in ESTIMATE.count_texts(texts)]

    def settle(self, target: int) -> int:
        """The count to act on: exact when the estimate is within 10% of the budget (or under it), and
        then the estimate is recalibrated on the prompt as it is now."""
        est = self.estimate()
        if not self.counter.exact or est > target * 1.1:
            return est
        exact = self.count()
        self.scale *= exact / max(1, est)
        return exact

    @property
    def last_user(self) -> int | None:
        return last_user_index(self.messages)

    def set_text(self, i: int, text: str) -> None:
        self.messages[i] = {**self.messages[i], "content": text}
        self.version += 1

    def replace(self, messages: list[Message]) -> None:
        self.messages[:] = messages
        self.version += 1


def _text(m: Message) -> str | None:
    c = m.get("content")
    return c if isinstance(c, str) else None


class Compressor:
    """Runs the configured steps. Cheap to build; models are loaded once per process, on first use."""

    def __init__(
        self,
        config: Compression,
        counter: TokenCounter,
        *,
        embed: Embed | None = None,
        pruner: Callable[[str | None], SurprisalPruner | None] = SurprisalPruner.load,
    ) -> None:
        self.config = config
        self.counter = counter
        self.embed = cached_embed(embed or default_embed)
        self._pruner = pruner

    def compress(self, endpoint: str, body: dict[str, Any], target: int, tokens: int | None = None) -> CompressionResult:
        started = time.perf_counter()
        if endpoint == "chat":
            prompt = _Prompt(list(body.get("messages") or []), endpoint, body.get("tools"), self.counter)
        elif isinstance(body.get("prompt"), str):
            prompt = _Prompt([{"role": "user", "content": body["prompt"]}], endpoint, None, self.counter)
        else:  # a batch or token ids: nothing textual to shorten
            n = tokens if tokens is not None else 0
            return CompressionResult(body, n, n, target, skipped={s: "prompt is not one text" for s in self.config.steps})
        before = tokens if tokens is not None else prompt.count()
        prompt.calibrate(before)
        result = CompressionResult(body, before, before, target)
        current = before
        for step in self.config.steps:
            if current <= target:
                break
            why_not = getattr(self, f"_{step}")(prompt, target, current, result)
            if why_not:
                result.skipped[step] = why_not
                continue
            current = prompt.settle(target)
            result.steps.append(step)
            result.step_tokens.append(current)
        if current != before and current > target and prompt.counter.exact:
            current = prompt.count()  # a final estimate over budget: report the exact number
        result.tokens_after = current
        if result.steps:
            new = dict(body)
            if endpoint == "chat":
                new["messages"] = prompt.messages
            else:
                new["prompt"] = prompt.messages[0]["content"]
            result.body = new
        result.seconds = time.perf_counter() - started
        return result

    # --- steps: each edits `prompt` in place and returns None, or returns why it could not run ---------

    def _normalize(self, prompt: _Prompt, target: int, current: int, result: CompressionResult) -> str | None:
        last = prompt.last_user
        seen: Counter[str] = Counter()
        for m in prompt.messages:
            t = _text(m)
            if t:
                seen.update({ln.strip() for ln in t.splitlines() if len(ln.strip()) >= 30})
        boiler = {ln for ln, n in seen.items() if n >= 3}
        kept_once: set[str] = set()
        for i, m in enumerate(prompt.messages):
            t = _text(m)
            if not t:
                continue
            protected = i == last or m.get("role") in _PINNED
            if boiler and not protected:
                lines = []
                for ln in t.split("\n"):
                    key = ln.strip()
                    if key in boiler and key in kept_once:
                        continue
                    kept_once.add(key)
                    lines.append(ln)
                t = "\n".join(lines)
            elif boiler:
                kept_once.update(ln.strip() for ln in t.splitlines() if ln.strip() in boiler)
            new = normalize_whitespace(t)
            if new != m["content"]:
                prompt.set_text(i, new)
        return None

    def _dedupe(self, prompt: _Prompt, target: int, current: int, result: CompressionResult) -> str | None:
        msgs = prompt.messages
        last = prompt.last_user
        older = [i for i in range(last if last is not None else len(msgs))
                 if msgs[i].get("role") not in _PINNED and not msgs[i].get("tool_calls") and _text(msgs[i])]
        if not older:
            return None
        sigs: dict[int, frozenset | None] = {}

        def sig(i: int) -> frozenset | None:  # computed only for messages that are compared
            if i not in sigs:
                t = _text(msgs[i])
                sigs[i] = shingles(t) if t and t != DUPLICATE_MARK and len(t.split()) >= 8 else None
            return sigs[i]

        thr = self.config.near_duplicate
        for i in older:
            a = sig(i)
            if a is None:
                continue
            role = msgs[i].get("role")
            for j in range(i + 1, len(msgs)):
                if msgs[j].get("role") != role or (b := sig(j)) is None:
                    continue
                small, big = sorted((len(a), len(b)))
                if big and small / big < thr:  # Jaccard can't reach thr: skip the set work
                    continue
                if jaccard(a, b) >= thr:
                    prompt.set_text(i, DUPLICATE_MARK)
                    sigs[i] = None
                    break
        return None

    def _fewshot(self, prompt: _Prompt, target: int, current: int, result: CompressionResult) -> str | None:
        examples = find_examples(prompt.messages, prompt.last_user)
        if len(examples) <= max(1, self.config.fewshot_keep):
            return "no few-shot examples found"
        query = question_text(prompt)
        last = prompt.last_user
        in_question = [e.span[1] for e in examples if e.message == last and e.span is not None]
        if in_question:  # examples and question in one text: the question is what follows the examples
            query = (_text(prompt.messages[last]) or "")[max(in_question):].strip() or query
        sims = embedding_scores(query, [e.text for e in examples], self.embed)
        order = np.argsort(-sims, kind="stable")
        removable = [examples[k] for k in order[self.config.fewshot_keep:]][::-1]  # least similar first
        k = fewest_to_drop(len(removable), lambda k: _count_without(prompt, removable[:k]) <= target)
        _apply_example_drops(prompt, removable[:k])
        return None

    def _extractive(self, prompt: _Prompt, target: int, current: int, result: CompressionResult) -> str | None:
        plan = self._units(prompt)
        if not plan.candidates:
            return "no long context to extract from"
        texts = [plan.units[mi][ui].text for mi, ui in plan.candidates]
        query = question_text(prompt, plan.units.get(prompt.last_user))
        if self.config.extractive_scorer == "embedding":
            scores = embedding_scores(query, texts, self.embed)
        else:
            scores = lexical_scores(query, texts)
        costs = prompt.costs(texts)
        # Least relevant first; among equals the oldest goes first.
        order = sorted(range(len(texts)), key=lambda k: (scores[k], plan.candidates[k]))
        pos = 0
        need = current - target
        while need > 0 and pos < len(order):
            while need > 0 and pos < len(order):
                k = order[pos]
                mi, ui = plan.candidates[k]
                plan.keep[mi][ui] = False
                need -= costs[k]
                pos += 1
            plan.apply(prompt)
            need = prompt.settle(target) - target  # separators and templates are not additive: recount
        return None

    def _lm_prune(self, prompt: _Prompt, target: int, current: int, result: CompressionResult) -> str | None:
        pruner = self._pruner(self.config.lm_model)
        if pruner is None:
            return f"no causal LM at {self.config.lm_model or 'backends/models/draft'}"
        plan = self._units(prompt)
        runs = plan.prunable_runs()
        if not runs:
            return "no long context to prune"
        texts = [r[2] for r in runs]
        # The share of the prunable text to drop, with 5% to spare for the words' share of separators.
        fraction = min(1.0, (current - target) / max(1.0, sum(prompt.costs(texts))) * 1.05)
        plan.apply_runs(prompt, runs, pruner.prune(texts, fraction))
        return None

    def _truncate(self, prompt: _Prompt, target: int, current: int, result: CompressionResult) -> str | None:
        if prompt.endpoint != "chat":
            return "completions prompts have no turns"
        messages, dropped, _ = truncate_messages(prompt.messages, target, prompt.count)
        prompt.replace(messages)
        result.dropped_turns += dropped
        return None

    def _units(self, prompt: _Prompt) -> _UnitPlan:
        return _UnitPlan.build(prompt, self.config.compress_system)


# --- question --------------------------------------------------------------------------------------------


def question_units(units: Sequence[Unit]) -> set[int]:
    """Units of the last user turn to keep whole: the question sentences and the opening instruction."""
    if len(units) <= 3:
        return set(range(len(units)))
    asks = [i for i, u in enumerate(units) if "?" in u.text]
    keep = set(asks[-2:]) if asks else {len(units) - 2, len(units) - 1}
    if len(units[0].text) <= 300:  # a short opening line is usually the instruction ("Use the documents…")
        keep.add(0)
    return keep


def question_text(prompt: _Prompt, units: Sequence[Unit] | None = None) -> str:
    """The question of the last user turn (`units`: that turn already split, when at hand)."""
    last = prompt.last_user
    if last is None:
        return ""
    if units is None:
        units = split_units(_text(prompt.messages[last]) or "")
    return " ".join(units[i].text for i in sorted(question_units(units)))


# --- sentence-level plan for extractive and lm_prune -----------------------------------------------------


@dataclass(slots=True)
class _UnitPlan:
    units: dict[int, list[Unit]]
    keep: dict[int, list[bool]]
    protected: dict[int, set[int]]
    candidates: list[tuple[int, int]]

    @classmethod
    def build(cls, prompt: _Prompt, compress_system: bool) -> _UnitPlan:
        last = prompt.last_user
        units, keep, protected, cands = {}, {}, {}, []
        for i, m in enumerate(prompt.messages):
            t = _text(m)
            if not t or t == DUPLICATE_MARK or (m.get("role") in _PINNED and not compress_system):
                continue
            if str(m.get("name", "")).startswith("example"):  # few-shot examples go whole or not at all
                continue
            us = split_units(t)
            prot = question_units(us) if i == last else set()
            units[i], keep[i], protected[i] = us, [True] * len(us), prot
            cands.extend((i, k) for k in range(len(us)) if k not in prot)
        return cls(units, keep, protected, cands)

    def apply(self, prompt: _Prompt) -> None:
        for i, us in self.units.items():
            if all(self.keep[i]):
                continue
            text = join_units(us, self.keep[i]) if any(self.keep[i]) else ELIDED
            if text != prompt.messages[i]["content"]:
                prompt.set_text(i, text)

    def prunable_runs(self) -> list[tuple[int, int, str]]:
        """(message, first unit, text) of each run of unprotected units."""
        runs = []
        for i, us in self.units.items():
            k = 0
            while k < len(us):
                if k in self.protected[i]:
                    k += 1
                    continue
                start = k
                while k < len(us) and k not in self.protected[i]:
                    k += 1
                runs.append((i, start, join_units(us[start:k], [True] * (k - start))))
        return runs

    def apply_runs(self, prompt: _Prompt, runs: list[tuple[int, int, str]], texts: list[str]) -> None:
        by_message: dict[int, dict[int, str]] = {}
        for (i, start, _), new in zip(runs, texts, strict=True):
            by_message.setdefault(i, {})[start] = new
        for i, replaced in by_message.items():
            parts: list[str] = []
            us = self.units[i]
            k = 0
            while k < len(us):
                if k in replaced:
                    parts.append(replaced[k])
                    sep = ""
                    while k < len(us) and k not in self.protected[i]:
                        sep = us[k].sep
                        k += 1
                    parts.append(sep or " ")
                else:
                    parts.append(us[k].text + (us[k].sep or " "))
                    k += 1
            prompt.set_text(i, "".join(parts).strip())


# --- few-shot examples ------------------------------------------------------------------------------------

_MARKER = re.compile(
    r"^[ \t]*(?:#+[ \t]*)?(example|sample|q|question|input|text|review|sentence)[ \t]*\d*[ \t]*[:.)\-]",
    re.I | re.M,
)


@dataclass(slots=True)
class Example:
    text: str
    message: int | None = None  # a whole chat example: these message indices
    indices: tuple[int, ...] = ()
    span: tuple[int, int] | None = None  # an example inside message `message`: this character span


def find_examples(messages: Sequence[Message], last_user: int | None) -> list[Example]:
    out: list[Example] = []
    # Chat examples, OpenAI style: messages named example_user / example_assistant, taken in pairs.
    group: list[int] = []
    for i, m in enumerate(messages):
        if str(m.get("name", "")).startswith("example") and i != last_user:
            if group and m.get("role") != "assistant" and str(m.get("name")) != "example_assistant":
                out.append(Example(" ".join(_text(messages[j]) or "" for j in group), indices=tuple(group)))
                group = []
            group.append(i)
        elif group:
            out.append(Example(" ".join(_text(messages[j]) or "" for j in group), indices=tuple(group)))
            group = []
    if group:
        out.append(Example(" ".join(_text(messages[j]) or "" for j in group), indices=tuple(group)))
    # Examples written into one message's text.
    for i, m in enumerate(messages):
        t = _text(m)
        if t:
            out.extend(_text_examples(t, i, protect_last=i == last_user))
    return out


def _text_examples(text: str, i: int, protect_last: bool) -> list[Example]:
    hits = list(_MARKER.finditer(text))
    if len(hits) < 2:
        return []
    kind = Counter(h.group(1).lower() for h in hits).most_common(1)[0]
    if kind[1] < 2:
        return []
    starts = [h.start() for h in hits if h.group(1).lower() == kind[0]]
    spans = []
    for k, s in enumerate(starts):
        if k + 1 < len(starts):
            e = starts[k + 1]
        else:  # the last block ends at the first blank line (what follows is instructions, not example)
            blank = text.find("\n\n", s)
            e = len(text) if blank < 0 else blank
        spans.append((s, e))
    if protect_last:
        spans = spans[:-1]  # the last block of the user's own turn is the question the examples lead to
    return [Example(text[s:e].strip(), message=i, span=(s, e)) for s, e in spans]


def _drop_examples(messages: list[Message], dropped: Sequence[Example]) -> list[Message]:
    gone = {j for ex in dropped for j in ex.indices}
    spans: dict[int, list[tuple[int, int]]] = {}
    for ex in dropped:
        if ex.span is not None and ex.message is not None:
            spans.setdefault(ex.message, []).append(ex.span)
    out = []
    for i, m in enumerate(messages):
        if i in gone:
            continue
        if i in spans:
            t = m["content"]
            for s, e in sorted(spans[i], reverse=True):
                t = t[:s] + t[e:].lstrip("\n") if e < len(t) else t[:s]
            m = {**m, "content": t.rstrip() if t.strip() else ELIDED}
        out.append(m)
    return out


def _count_without(prompt: _Prompt, dropped: Sequence[Example]) -> int:
    return prompt.count(_drop_examples(prompt.messages, dropped))


def _apply_example_drops(prompt: _Prompt, dropped: Sequence[Example]) -> None:
    prompt.replace(_drop_examples(prompt.messages, dropped))


# --- whitespace ---------------------------------------------------------------------------------------------

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))
_INNER_SPACES = re.compile(r"(?<=\S)[ \t]{2,}")
_TRAILING = re.compile(r"[ \t]+$", re.M)
_BLANK_RUNS = re.compile(r"\n{3,}")
_FENCE = re.compile(r"(```.*?(?:```|\Z))", re.S)


def normalize_whitespace(text: str) -> str:
    """Collapse spacing that carries nothing; keeps indentation, and code blocks except trailing spaces."""
    text = text.translate(_ZERO_WIDTH)
    parts = _FENCE.split(text)
    for k, part in enumerate(parts):
        part = _TRAILING.sub("", part)
        if k % 2 == 0:  # prose; odd parts are code fences
            part = _INNER_SPACES.sub(" ", part)
        parts[k] = _BLANK_RUNS.sub("\n\n", part)
    return "".join(parts).strip()
