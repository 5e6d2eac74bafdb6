"""`switchyard engine calibrate`: measure what the simulator needs from the real engine.

Runs the real worker on the real models in the calling thread and writes JSON with
- prefill cost: seconds for a chunk of n prompt tokens, fitted as fixed + per_token * n;
- decode round cost: seconds per decode round (one target pass plus its drafting) and tokens per
  round (speculative acceptance), for greedy requests with the model's default speculation;
- step cost by batch size: seconds per scheduler tick with B sequences decoding (the runner has no
  multi-sequence forward pass, so this grows about linearly in B; measured, not assumed).
"""

from __future__ import annotations

import statistics
import time

from backends.engine.request import GenerationRequest, Submission
from backends.engine.sampling import SamplingParams
from backends.engine.worker import SequenceState, ServedModel, Worker


def _sub(ids: list[int], max_tokens: int) -> Submission:
    params = SamplingParams(max_tokens=max_tokens, temperature=0.0, ignore_eos=True)
    return Submission(GenerationRequest("calibrate", "m", ids, params), emit=lambda e: None)


def _prompt(served: ServedModel, n: int, seed: int) -> list[int]:
    import inspect
    import json

    ids = served.target.tokenizer.encode(inspect.getsource(json) * 3)
    start = (seed * 613) % (len(ids) - n - 1)
    return ids[start : start + n]


def calibrate(served: ServedModel, *, repeats: int = 3, decode_requests: int = 6, decode_tokens: int = 64,
              batch_sizes: tuple[int, ...] = (1, 2, 4, 8)) -> dict:
    worker = Worker({"m": served})
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
        prefill[n] = statistics.median(times)
    xs, ys = list(prefill), list(prefill.values())
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    per_token = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    fixed = max(0.0, my - per_token * mx)

    round_times, tokens = [], []
    for r in range(decode_requests):
        seq = worker.prepare(_sub(_prompt(served, 24 + 8 * r, 10 + r), decode_tokens))
        worker.step(seq)  # prefill
        while True:
            before = len(seq.completion)
            t = time.perf_counter()
            done = worker.step(seq)
            round_times.append(time.perf_counter() - t)
            tokens.append(len(seq.completion) - before + (1 if done and seq.finished == "stop" else 0))
            if done:
                break
    tick = {}
    for b in batch_sizes:
        seqs = [worker.prepare(_sub(_prompt(served, 32, 40 + i), 10_000)) for i in range(b)]
        for s in seqs:
            worker.step(s)
            worker.step(s)  # first round feeds the draft its prompt; measure steady state
        t = time.perf_counter()
        ticks = 8
        for _ in range(ticks):
            for s in seqs:
                worker.step(s)
        tick[b] = (time.perf_counter() - t) / ticks
    import torch

    return {
        "device": str(served.target.device),
        "torch_threads": torch.get_num_threads(),
        "speculation": served.default_speculation,
        "context_length": ctx,
        "prefill_seconds": {str(k): round(v, 6) for k, v in prefill.items()},
        "prefill_fixed_s": round(fixed, 6),
        "prefill_per_token_s": round(per_token, 8),
        "decode_round_s": round(statistics.fmean(round_times), 6),
        "tokens_per_round": round(sum(tokens) / len(tokens), 4),
        "tick_seconds_by_batch": {str(k): round(v, 6) for k, v in tick.items()},
    }
