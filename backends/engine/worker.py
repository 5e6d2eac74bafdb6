"""The worker executes: it runs model passes for one sequence at a time and knows nothing of HTTP,
queues or which request should go next (that is the scheduler's job).

Per sequence the worker keeps the invariant: the target's KV cache holds every token but the last
one (the "pending" token). A round feeds [pending, d1..dk] to the target in one pass, verifies the
drafts, rolls the cache back past the first rejection and appends the accepted drafts plus one
token from the target, so every round yields at least one token.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from backends.engine.detok import IncrementalDetokenizer, StopMatcher
from backends.engine.drafters import Drafter, ModelDrafter, PromptLookupDrafter
from backends.engine.loader import LoadedModel
from backends.engine.request import Delta, Finished, GenerationRequest, Started, Submission
from backends.engine.runner import SequenceCache, forward
from backends.engine.sampling import make_generator, probs
from backends.engine.speculative import AdaptiveK, SpecStats, verify_greedy, verify_sampling


@dataclass(slots=True)
class ServedModel:
    """A public model name: a target, and optionally a draft model for speculative decoding."""

    name: str
    target: LoadedModel
    draft: LoadedModel | None = None
    label: str = ""
    """Short name for metric labels (defaults to `name`)."""

    def __post_init__(self) -> None:
        self.label = self.label or self.name

    @property
    def default_speculation(self) -> str:
        return "draft" if self.draft is not None else "ngram"

    @property
    def draft_cost(self) -> float:
        """Estimated draft pass cost / target pass cost. On small models a pass costs mostly
        per-layer overhead plus a fixed part, hence layer counts (+1.5 for embeddings, head and
        the call itself) rather than parameter counts."""
        if self.draft is None:
            return 0.0
        return (self.draft.num_layers + 1.5) / (self.target.num_layers + 1.5)


class SequenceState:
    """One request being generated: token ids, caches, drafter, RNG, text and stop state."""

    def __init__(self, sub: Submission, served: ServedModel) -> None:
        req: GenerationRequest = sub.request
        self.sub = sub
        self.served = served
        self.target = served.target
        self.params = req.params
        self.ids = list(req.prompt_ids)
        self.prompt_len = len(req.prompt_ids)
        self.completion: list[int] = []
        self.cache = SequenceCache(self.target)
        self.gen = make_generator(req.params.seed, self.target.device)
        self.detok = IncrementalDetokenizer(self.target.tokenizer, req.prompt_ids)
        self.stops = StopMatcher(req.params.stop)
        self.eos = frozenset() if req.params.ignore_eos else self.target.eos_token_ids
        self.drafter: Drafter | None = self._drafter(req)
        self.stats = SpecStats(drafter=self.drafter.name if self.drafter else "none")
        self.k = AdaptiveK(
            draft_cost=self.drafter.cost if self.drafter else 0.0,
            fixed=req.num_speculative_tokens,
            k_max=12 if isinstance(self.drafter, ModelDrafter) else 10,
        )
        self.prefilled = False
        self.finished: str | None = None
        self.decode_started = 0.0

    def _drafter(self, req: GenerationRequest) -> Drafter | None:
        kind = req.speculation or self.served.default_speculation
        if req.num_speculative_tokens == 0 or kind == "none":
            return None
        if kind == "draft" and self.served.draft is not None:
            return ModelDrafter(self.served.draft, self.target.vocab_size, self.served.draft_cost)
        if kind == "ngram":
            return PromptLookupDrafter()
        return None  # "draft" asked of a model without one: plain decoding (validated upstream)

    @property
    def prefill_remaining(self) -> int:
        """Prompt tokens still to feed before decoding can start (all but the last one)."""
        return 0 if self.prefilled else max(0, len(self.ids) - 1 - self.cache.length)

    def prefill(self, max_tokens: int | None = None) -> int:
        """Feed the next prompt chunk (everything when `max_tokens` is None); return how many
        tokens were fed. Everything but the last prompt token goes in; the first round feeds that
        one (keeps the invariant). A chunked prefill leaves the same cache as a whole one."""
        end = len(self.ids) - 1
        start = self.cache.length
        if max_tokens is not None:
            end = min(end, start + max(1, max_tokens))
        if end > start:
            with self.target.lock:
                forward(self.target, self.cache, self.ids[start:end], keep=1)
        self.prefilled = self.cache.length >= len(self.ids) - 1
        return max(0, end - start)

    def round(self) -> list[int]:
        """One target pass; returns the new tokens (accepted drafts + one target token)."""
        remaining = self.params.max_tokens - len(self.completion)
        room = self.target.context_length - len(self.ids)
        k = max(0, min(self.k.next_k(), remaining - 1, room))
        drafts, q = ([], None)
        if self.drafter is not None and k > 0:
            drafts, q = self.drafter.propose(self.ids, k, self.params, self.gen)
        with self.target.lock:
            logits = forward(self.target, self.cache, [self.ids[-1]] + drafts)
        if self.params.greedy:
            n, nxt = verify_greedy(logits, drafts)
        else:
            n, nxt = verify_sampling(probs(logits, self.params), q, drafts, self.gen)
        self.cache.rollback(len(drafts) - n)
        new = drafts[:n] + [nxt]
        self.ids.extend(new)
        if self.drafter is not None:
            self.drafter.commit(self.ids)
            if drafts:
                self.k.update(len(drafts), n)
        self.stats.target_passes += 1
        if drafts:
            self.stats.proposed += len(drafts)
            self.stats.accepted += n
            self.stats.rounds_with_drafts += 1
        return new


class Worker:
    """Executes steps for sequences the scheduler hands it. One step = prefill, or one round."""

    def __init__(self, models: dict[str, ServedModel]) -> None:
        self.models = models

    def prepare(self, sub: Submission) -> SequenceState:
        return SequenceState(sub, self.models[sub.request.model])

    def step(self, seq: SequenceState, prefill_tokens: int | None = None) -> bool:
        """Advance `seq`; emit its events; return True once it has finished. While prefilling,
        `prefill_tokens` caps the prompt chunk fed this step (None: the whole prompt at once)."""
        emit = seq.sub.emit
        if not seq.prefilled:
            seq.prefill(prefill_tokens)
            if not seq.prefilled:
                return False
            emit(Started(prompt_tokens=seq.prompt_len))
            seq.decode_started = time.perf_counter()
            return False
        for token in seq.round():
            if token in seq.eos:
                return self._finish(seq, "stop")
            seq.completion.append(token)
            text, stopped = seq.stops.push(seq.detok.push(token))
            if text or stopped:
                emit(Delta(text=text, token_ids=[token]))
            if stopped:
                return self._finish(seq, "stop", flush=False)
            if len(seq.completion) >= seq.params.max_tokens or len(seq.ids) >= seq.target.context_length:
                return self._finish(seq, "length")
        return False

    def _finish(self, seq: SequenceState, reason: str, flush: bool = True) -> bool:
        if flush:
            rest = seq.stops.flush()
            if rest:
                seq.sub.emit(Delta(text=rest, token_ids=[]))
        seq.finished = reason
        seq.sub.emit(self.finished_event(seq, reason))
        return True

    @staticmethod
    def finished_event(seq: SequenceState, reason: str) -> Finished:
        return Finished(
            reason=reason,  # type: ignore[arg-type]
            prompt_tokens=seq.prompt_len,
            completion_tokens=len(seq.completion),
            spec=seq.stats.as_dict(),
            decode_seconds=time.perf_counter() - seq.decode_started if seq.decode_started else 0.0,
        )

    def run(self, sub: Submission) -> SequenceState:
        """Run one request to completion in the calling thread (benchmarks, tests, calibration)."""
        seq = self.prepare(sub)
        while not self.step(seq):
            pass
        return seq
