"""`switchyard simulate`: a discrete-event model of the local engine.

The real scheduler classes decide (same code as the engine: admission, micro-batches, budgets,
chunked prefill); only model execution is replaced by costs from `switchyard engine calibrate`.
One scheduler tick is one batched engine step: its cost is the measured batched decode step for
the number of sequences decoding in it (with or without speculation, by the engine's
rule, `worker.speculation_cap`) plus per-token prefill cost for the prompt chunks riding in it; a decoding
sequence gains the measured tokens per step for that batch size. Everything in a tick lands at the
tick's end, as in the engine. In `continuous` mode, requests arriving during a speculative step's
draft phase join it (late join), as in the engine. Network and HTTP overheads are not modelled.
"""

from __future__ import annotations

from backends.engine.request import GenerationRequest, Submission
from backends.engine.sampling import SamplingParams
from backends.engine.calibrate import step_cost
from backends.engine.scheduler import make_scheduler
from backends.engine.worker import DEFAULT_SPEC_K_UNDER_LOAD, DEFAULT_SPEC_MAX_BATCH, speculation_cap
from backends.traces.format import TraceRecord, size_class
from backends.traces.replay import Result, summarise


class _SimSeq:
    """What the scheduler reads of a running sequence."""

    def __init__(self, sub: Submission, prompt_len: int) -> None:
        self.sub = sub
        self.left = max(0, prompt_len - 1)
        self.prefilled = False
        self.produced = 0.0

    @property
    def prefill_remaining(self) -> int:
        return 0 if self.prefilled else self.left


def simulate(records: list[TraceRecord], cal: dict, mode: str = "continuous", *, step_token_budget: int = 256,
             batch_threshold: int = 256, max_running: int | None = None,
             spec_max_batch: int | None = DEFAULT_SPEC_MAX_BATCH,
             spec_k_under_load: int = DEFAULT_SPEC_K_UNDER_LOAD) -> tuple[list[Result], dict]:
    now = 0.0
    sched = make_scheduler(mode, max_running=max_running, step_token_budget=step_token_budget,
                           batch_threshold=batch_threshold)
    if hasattr(sched, "clock"):
        sched.clock = lambda: now
    results = [Result(i, r.t, r.tenant, size_class(r.n_prompt, r.max_tokens), r.n_prompt, r.max_tokens, sent=r.t)
               for i, r in enumerate(records)]
    by_sub: dict[Submission, int] = {}
    subs = []
    for i, r in enumerate(records):
        params = SamplingParams(max_tokens=r.max_tokens, temperature=0.0, ignore_eos=True)
        subs.append(Submission(GenerationRequest(str(i), "m", [0] * max(1, r.n_prompt), params), emit=None))
        by_sub[subs[-1]] = i
    nxt, done = 0, 0

    def arrive(until: float) -> None:
        nonlocal nxt
        while nxt < len(records) and records[nxt].t <= until:
            sched.add(subs[nxt])
            nxt += 1

    while done < len(records):
        arrive(now)
        plan = sched.schedule()
        if not plan:
            wait = getattr(sched, "wait_timeout", lambda: None)()
            targets = [t for t in (records[nxt].t if nxt < len(records) else None,
                                   now + wait if wait is not None else None) if t is not None]
            now = max(now, min(targets)) + 1e-9
            continue
        decoding: list[_SimSeq] = []
        prefill_tokens = 0
        for item in plan:
            sub = item if isinstance(item, Submission) else item.sub
            seq = item if isinstance(item, _SimSeq) else None
            if seq is None:
                seq = _SimSeq(sub, len(sub.request.prompt_ids))
                sched.started(sub, seq)
            if not seq.prefilled:
                chunk = sched.prefill_chunk(sub)
                n = seq.left if chunk is None else min(seq.left, max(1, chunk))
                prefill_tokens += n
                seq.left -= n
                seq.prefilled = seq.left == 0
                if not (seq.prefilled and sched.decode_after_prefill(sub)):
                    continue
            decoding.append(seq)
        cap, _ = speculation_cap(spec_max_batch, spec_k_under_load, len(decoding), prefill_tokens > 0)
        kind = "spec" if cap is None else "capped" if cap > 0 else "plain"
        cost, per_row = step_cost(cal, len(decoding), prefill_tokens, kind)
        joined: list[_SimSeq] = []
        if kind == "spec" and decoding and hasattr(sched, "late_join"):
            # late join: what arrives while the step drafts rides in its target pass. The draft
            # phase is taken as the step's cost above a plain step (an upper bound: it also holds
            # the longer verify pass).
            arrive(now + cost - step_cost(cal, len(decoding), prefill_tokens, "plain")[0])
            for sub in sched.late_join():
                seq = _SimSeq(sub, len(sub.request.prompt_ids))
                sched.started(sub, seq)
                cost += cal["prefill_per_token_s"] * seq.left
                seq.left, seq.prefilled = 0, True
                joined.append(seq)
        now += cost
        for seq in decoding + joined:
            res, rec = results[by_sub[seq.sub]], records[by_sub[seq.sub]]
            seq.produced += 1.0 if seq in joined else max(1.0, per_row)
            if res.ttft is None:
                res.ttft = now - rec.t
            if seq.produced >= rec.max_tokens:
                res.ttlt = res.e2e = now - rec.t
                res.completion_tokens = rec.max_tokens
                sched.finish(seq)
                done += 1
    return results, summarise(results, now, mode=mode, step_token_budget=step_token_budget, batch_threshold=batch_threshold)


def sweep(records: list[TraceRecord], cal: dict, modes=("fifo", "token", "continuous"),
          budgets=(64, 128, 256, 512), thresholds=(128, 256, 512)) -> list[dict]:
    rows = []
    for mode in modes:
        settings = [(256, 256)] if mode == "fifo" else [(b, t) for b in budgets for t in (thresholds if mode == "token" else (256,))]
        for budget, threshold in settings:
            _, s = simulate(records, cal, mode, step_token_budget=budget, batch_threshold=threshold)
            rows.append({"mode": mode, "step_token_budget": budget if mode != "fifo" else None,
                         "batch_threshold": threshold if mode == "token" else None,
                         "ttft_p50_ms": s["overall"]["ttft_p50_ms"], "ttft_p99_ms": s["overall"]["ttft_p99_ms"],
                         "e2e_p50_ms": s["overall"]["e2e_p50_ms"], "tokens_per_second": s["tokens_per_second"]})
    return rows
