"""The worker executes: it runs the model passes for the sequences the scheduler picked for a step
and knows nothing of HTTP, queues or which request should go next (that is the scheduler's job).

`Worker.step_batch` runs one engine step: the decode rounds, speculative verify windows and prefill
chunks of every sequence in it go through ONE batched forward pass of the target (runner.py), after
one batched pass of the draft model per draft position. Speculation is turned down (k capped at
`spec_k_under_load`, 0: off) in a step with more than `spec_max_batch` decoding sequences (it
costs compute and step time when the batch is full).

Per sequence the worker keeps the invariant: the target's KV cache holds every token but the last
one (the "pending" token). A round feeds [pending, d1..dk] to the target in one pass, verifies the
drafts, rolls the cache back past the first rejection and appends the accepted drafts plus one
token from the target, so every round yields at least one token.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from backends.engine.detok import IncrementalDetokenizer, StopMatcher
from backends.engine.drafters import Drafter, ModelDrafter, PromptLookupDrafter, propose_batch
from backends.engine.loader import LoadedModel
from backends.engine.request import Delta, Finished, GenerationRequest, Started, Submission
from backends.engine.runner import Row, SequenceCache, forward_batch
from backends.engine.sampling import make_generator, probs
from backends.engine.speculative import AdaptiveK, SpecStats, verify_greedy, verify_sampling


DEFAULT_SPEC_MAX_BATCH = 4
"""Speculate freely (adaptive k) only in steps with at most this many decoding sequences; above it
k is capped at DEFAULT_SPEC_K_UNDER_LOAD (measured on the shipped models: docs/scheduling.md,
"Speculation under load")."""
DEFAULT_SPEC_K_UNDER_LOAD = 0
"""The most drafts per sequence in a step above `spec_max_batch` decoding sequences (0: off)."""


def speculation_cap(spec_max_batch: int | None, spec_k_under_load: int, decoding: int,
                    prefilling: bool) -> tuple[int | None, str | None]:
    """The speculation rule for one step, shared by the worker and the simulator: (None, None) for
    adaptive k, else the most drafts per sequence and why. Above `spec_max_batch` decoding
    sequences the step is under load; a step that carries prefill work is what new requests wait
    on for their first token, so drafting must not lengthen it either. `spec_max_batch` None turns
    both off."""
    if spec_max_batch is None:
        return None, None
    if decoding > spec_max_batch:
        return spec_k_under_load, "load"
    if prefilling:
        return spec_k_under_load, "prefill"
    return None, None


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

    def _chunk(self, max_tokens: int | None) -> tuple[list[int], bool]:
        """The next prompt chunk to feed (at most `max_tokens`; everything when None) and whether
        it completes the prefill. Everything but the last prompt token goes in; the first round
        feeds that one (keeps the invariant)."""
        end = len(self.ids) - 1
        start = self.cache.length
        if max_tokens is not None:
            end = min(end, start + max(1, max_tokens))
        return self.ids[start:end], end >= len(self.ids) - 1

    def prefill(self, max_tokens: int | None = None) -> int:
        """Feed the next prompt chunk alone (everything when `max_tokens` is None); return how
        many tokens were fed. A chunked prefill leaves the same cache as a whole one."""
        chunk, completes = self._chunk(max_tokens)
        if chunk:
            with self.target.lock:
                forward_batch(self.target, [Row(self.cache, chunk, 0)])
        self.prefilled = completes
        return len(chunk)

    def next_k(self, cap: int | None = None) -> int:
        """Drafts to propose this round (0: plain decoding), at most `cap` when given."""
        if self.drafter is None or cap == 0:
            return 0
        remaining = self.params.max_tokens - len(self.completion)
        room = self.target.context_length - len(self.ids)
        k = self.k.next_k() if cap is None else min(self.k.next_k(), cap)
        return max(0, min(k, remaining - 1, room))

    def accept(self, logits, drafts: list[int], q) -> list[int]:
        """Verify `drafts` against the target's logits for [pending, d1..dk]; roll the cache back
        past the first rejection; return the new tokens (accepted drafts + one target token)."""
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

    def close(self) -> None:
        """Give the KV cache slots back (the sequence is finished)."""
        self.cache.close()
        if isinstance(self.drafter, ModelDrafter):
            self.drafter.cache.close()


@dataclass(slots=True)
class StepItem:
    """One sequence's part of an engine step."""

    seq: SequenceState
    prefill_tokens: int | None = None
    """While prefilling: the most prompt tokens to feed this step (None: all)."""
    decode_after_prefill: bool = False
    """Run the first decode round in the step that completes the prefill (same forward pass)."""


@dataclass(slots=True)
class _Work:
    seq: SequenceState
    feed: list[int] = field(default_factory=list)
    completes: bool = False
    decode: bool = False
    drafts: list[int] = field(default_factory=list)
    q: object = None


class Worker:
    """Executes steps for sequences the scheduler hands it. One step = prefill, or one round."""

    def __init__(self, models: dict[str, ServedModel], spec_max_batch: int | None = None,
                 spec_k_under_load: int = 0) -> None:
        self.models = models
        self.spec_max_batch = spec_max_batch
        """Speculate freely only in steps with at most this many decoding sequences (None: always)."""
        self.spec_k_under_load = spec_k_under_load
        """Above `spec_max_batch`: the most drafts per sequence (0: no speculation)."""
        self.steps = 0
        self.spec_off_steps = 0  # steps in which speculation was turned down by the rule
        self.prefill_capped_steps = 0  # steps held to `spec_k_under_load` because they carry prefill

    def prepare(self, sub: Submission) -> SequenceState:
        return SequenceState(sub, self.models[sub.request.model])

    def step(self, seq: SequenceState, prefill_tokens: int | None = None) -> bool:
        """Advance `seq` alone (a step of one); see `step_batch`."""
        return self.step_batch([StepItem(seq, prefill_tokens)])[0]

    def step_batch(self, items: list[StepItem], join: Callable[[], list[StepItem]] | None = None) -> list[bool]:
        """One engine step over distinct sequences: a prefilling sequence feeds its next chunk (and,
        if that completes its prefill and `decode_after_prefill`, its first round in the same row);
        a decoding one runs one round (drafts + verify). All rows of one target model go through
        one forward pass. Emits each sequence's events; returns, per item, whether it finished.

        `join`, when given, is asked once drafting is done (the draft passes take a large part of a
        speculative step) for new sequences that arrived meanwhile; they are appended to `items` and
        their prefill rides in this step's target pass instead of waiting for the next step."""
        work = [self._work(it) for it in items]
        decoding = [w for w in work if w.decode]
        cap, why = speculation_cap(self.spec_max_batch, self.spec_k_under_load, len(decoding),
                                   any(w.feed for w in work))
        self.steps += 1
        if why is not None and any(w.seq.drafter is not None for w in decoding):
            if why == "load":
                self.spec_off_steps += 1
            else:
                self.prefill_capped_steps += 1
        # drafting: prompt lookup row by row (free), draft models in batched passes
        by_model = []
        for w in decoding:
            k = w.seq.next_k(cap)
            if k <= 0:
                continue
            if isinstance(w.seq.drafter, ModelDrafter):
                by_model.append((w, k))
            else:
                w.drafts, w.q = w.seq.drafter.propose(w.seq.ids, k, w.seq.params, w.seq.gen)
        if by_model:
            proposals = propose_batch([(w.seq.drafter, w.seq.ids, k, w.seq.params, w.seq.gen) for w, k in by_model])
            for (w, _), (drafts, q) in zip(by_model, proposals, strict=True):
                w.drafts, w.q = drafts, q
            if join is not None:
                joined = join()
                items.extend(joined)
                work.extend(self._work(it) for it in joined)
        # one target pass per target model
        logits: dict[int, object] = {}
        groups: dict[int, list[_Work]] = {}
        for w in work:
            groups.setdefault(id(w.seq.target), []).append(w)
        for ws in groups.values():
            lm = ws[0].seq.target
            rows = []
            for w in ws:
                if w.decode:
                    rows.append(Row(w.seq.cache, w.feed + [w.seq.ids[-1]] + w.drafts, 1 + len(w.drafts)))
                else:
                    rows.append(Row(w.seq.cache, w.feed, 0))
            with lm.lock:
                out = forward_batch(lm, rows)
            for w, o in zip(ws, out, strict=True):
                logits[id(w)] = o
        done = []
        for w in work:
            seq = w.seq
            if not seq.prefilled:
                seq.prefilled = w.completes
                if w.completes:
                    seq.sub.emit(Started(prompt_tokens=seq.prompt_len))
                    seq.decode_started = time.perf_counter()
                if not w.decode:
                    done.append(False)
                    continue
            done.append(self._emit_tokens(seq, seq.accept(logits[id(w)], w.drafts, w.q)))
        return done

    @staticmethod
    def _work(it: StepItem) -> _Work:
        w = _Work(it.seq)
        if not it.seq.prefilled:
            w.feed, w.completes = it.seq._chunk(it.prefill_tokens)
            w.decode = w.completes and it.decode_after_prefill
        else:
            w.decode = True
        return w

    def _emit_tokens(self, seq: SequenceState, tokens: list[int]) -> bool:
        emit = seq.sub.emit
        for token in tokens:
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
