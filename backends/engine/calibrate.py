"""`switchyard engine calibrate`: measure what the simulator needs from the real engine.

Runs the real worker (`Worker.step_batch`, the engine's batched step) on the real models in the
calling thread and writes JSON with
- prefill cost: seconds for a chunk of n prompt tokens in a step of its own, fitted as
  fixed + per_token * n; `per_token` is also the marginal cost of a chunk riding in a decode step;
- decode step cost by batch size: seconds per step with B sequences decoding in one batched step,
  with speculation (the model's default drafter, adaptive k), with k capped as the engine does
  under load ("capped"), and without ("plain"), and the tokens each sequence gains per step
  (speculative acceptance) -- `step_seconds_by_batch`, `tokens_per_row_by_batch`;
- from those, decode throughput (tokens/s) with and without speculation by batch size, which is
  where the engine's `spec_max_batch` rule comes from (docs/scheduling.md).
"""

from __future__ import annotations

import statistics
import time

from backends.engine.request import GenerationRequest, Submission
from backends.engine.sampling import SamplingParams
from backends.engine.worker import DEFAULT_SPEC_K_UNDER_LOAD, SequenceState, ServedModel, StepItem, Worker

BATCH_SIZES = (1, 2, 4, 6, 8, 12, 16)


def _sub(ids: list[int], max_tokens: int, speculation: str | None = None) -> Submission:
    params = SamplingParams(max_tokens=max_tokens, temperature=0.0, ignore_eos=True)
    return Submission(GenerationRequest("calibrate", "m", ids, params, speculation=speculation), emit=lambda e: None)


def _prompt(served: ServedModel, n: int, seed: int) -> list[int]:
    import inspect
    import json

    ids = served.target.tokenizer.encode(inspect.getsource(json) * 3)
    start = (seed * 613) % (len(ids) - n - 1)
    return ids[start : start + n]


def _decode_steps(worker: Worker, served: ServedModel, b: int, speculation: str | None, steps: int,
                  repeats: int) -> tuple[float, float]:
    """Median seconds per batched decode step with `b` sequences, and tokens per sequence per step."""
    times, toks = [], []
    for rep in range(repeats):
        seqs = [worker.prepare(_sub(_prompt(served, 32, 40 + 7 * rep + i), 10_000, speculation)) for i in range(b)]
        worker.step_batch([StepItem(s) for s in seqs])  # prefill
        worker.step_batch([StepItem(s) for s in seqs])  # first round feeds the draft its prompt
        before = sum(len(s.completion) for s in seqs)
        t = time.perf_counter()
        for _ in range(steps):
            worker.step_batch([StepItem(s) for s in seqs])
        times.append((time.perf_counter() - t) / steps)
        toks.append((sum(len(s.completion) for s in seqs) - before) / steps / b)
        for s in seqs:
            s.close()
    return statistics.median(times), statistics.fmean(toks)


def calibrate(served: ServedModel, *, repeats: int = 3, batch_sizes: tuple[int, ...] = BATCH_SIZES,
              steps: int = 8, k_under_load: int = DEFAULT_SPEC_K_UNDER_LOAD) -> dict:
    worker = Worker({"m": served})  # speculation never turned down: adaptive k
    capped = Worker({"m": served}, spec_max_batch=0, spec_k_under_load=k_under_load)  # always capped
    ctx = served.target.context_length
    sizes = [n for n in (8, 32, 64, 128, 256, 384) if n < ctx - 16]
    prefill = {}
    for n in sizes:
        times = []
        for r in range(repeats):
            seq = SequenceState(_sub(_prompt(served, n + 1, r), 1), served)
            t = time.perf_counter()
            seq.prefill(n)
            times.append(time.perf_counter() - t)
            seq.close()
        prefill[n] = statistics.median(times)
    xs, ys = list(prefill), list(prefill.values())
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    per_token = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    fixed = max(0.0, my - per_token * mx)

    # None: the model's default speculation; "capped": k <= k_under_load (the rule under load)
    kinds = {"plain": ("none", worker), "spec": (None, worker), "capped": (None, capped)}
    if k_under_load == 0:  # capped to nothing is plain decoding: copied below, not measured twice
        del kinds["capped"]
    step_s: dict[str, dict[str, float]] = {k: {} for k in kinds}
    per_row: dict[str, dict[str, float]] = {k: {} for k in kinds}
    for b in batch_sizes:
        for kind, (speculation, w) in kinds.items():
            s, tpr = _decode_steps(w, served, b, speculation, steps, repeats)
            step_s[kind][str(b)], per_row[kind][str(b)] = round(s, 6), round(tpr, 4)
    if "capped" not in kinds:
        step_s["capped"], per_row["capped"] = dict(step_s["plain"]), dict(per_row["plain"])
        kinds["capped"] = kinds["plain"]
    throughput = {kind: {b: round(int(b) * per_row[kind][b] / step_s[kind][b], 1) for b in step_s[kind]} for kind in kinds}
    best_off = [int(b) for b in throughput["spec"] if throughput["spec"][b] < throughput["plain"][b]]
    import torch

    return {
        "device": str(served.target.device),
        "torch_threads": torch.get_num_threads(),
        "speculation": served.default_speculation,
        "context_length": ctx,
        "prefill_seconds": {str(k): round(v, 6) for k, v in prefill.items()},
        "prefill_fixed_s": round(fixed, 6),
        "prefill_per_token_s": round(per_token, 8),
        "step_seconds_by_batch": step_s,
        "tokens_per_row_by_batch": per_row,
        "decode_tokens_per_second_by_batch": throughput,
        "speculation_loses_from_batch": min(best_off) if best_off else None,
        "k_under_load": k_under_load,
        # single-sequence summary (the old keys, read by older tools)
        "decode_round_s": step_s["spec"][str(batch_sizes[0])],
        "tokens_per_round": per_row["spec"][str(batch_sizes[0])],
    }


def step_cost(cal: dict, decoding: int, prefill_tokens: int, speculate: bool | str) -> tuple[float, float]:
    """Seconds for one engine step with `decoding` sequences decoding and `prefill_tokens` prompt
    tokens of prefill chunks, and the tokens each decoding sequence gains (simulator model:
    batched decode step cost interpolated by batch size, plus per-token prefill cost)."""
    per_tok = cal["prefill_per_token_s"]
    if decoding == 0:
        return cal["prefill_fixed_s"] + per_tok * prefill_tokens, 0.0
    kind = speculate if isinstance(speculate, str) else ("spec" if speculate else "plain")
    if kind not in cal.get("step_seconds_by_batch", {"spec": 0, "plain": 0}):
        kind = "spec"  # a calibration without the capped measurement
    if "step_seconds_by_batch" not in cal:  # an old calibration file: per-sequence steps
        return decoding * cal["decode_round_s"] + per_tok * prefill_tokens, cal["tokens_per_round"] if kind != "plain" else 1.0
    table, worst = {}, 0.0
    for b, v in sorted((int(b), v) for b, v in cal["step_seconds_by_batch"][kind].items()):
        worst = max(worst, v)  # a bigger batch never costs less (smooths measurement noise)
        table[b] = worst
    tpr = {int(b): v for b, v in cal["tokens_per_row_by_batch"][kind].items()}
    return _interp(table, decoding) + per_tok * prefill_tokens, _interp(tpr, decoding)


def _interp(table: dict[int, float], x: int) -> float:
    xs = sorted(table)
    if x in table:
        return table[x]
    if x <= xs[0]:
        return table[xs[0]]
    if x >= xs[-1]:  # extrapolate on the last segment's slope
        a, b = xs[-2], xs[-1]
        return table[b] + (table[b] - table[a]) / (b - a) * (x - b)
    hi = next(v for v in xs if v > x)
    lo = max(v for v in xs if v < x)
    return table[lo] + (table[hi] - table[lo]) * (x - lo) / (hi - lo)
