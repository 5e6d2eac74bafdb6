"""`switchyard trace synth`: a seeded, realistic mixed trace.

Arrivals are Poisson at `rate` per second with bursts (every `burst_every` seconds on average,
`burst_size` requests within 100 ms). Sizes: mostly short chat turns (log-normal prompt around 30
tokens, output around 24), and a heavy tail (`long_fraction`) of long prompts and/or long outputs.
Prompt text is cut from the Python standard library's source (what every machine has), about four
characters per token; `prompt_tokens` records the intended size.
"""

from __future__ import annotations

import inspect
import random

from backends.traces.format import TraceRecord


def _corpus() -> str:
    import argparse
    import collections
    import json
    import pathlib
    import textwrap

    return "".join(inspect.getsource(m) for m in (json, argparse, collections, pathlib, textwrap))


def synth(
    n: int = 200,
    *,
    seed: int = 0,
    rate: float = 4.0,
    long_fraction: float = 0.15,
    burst_every: float = 10.0,
    burst_size: int = 6,
    max_context: int = 4096,
    tenants: tuple[str, ...] = ("acme", "globex", "initech"),
    chars_per_token: float = 4.0,
) -> list[TraceRecord]:
    rng = random.Random(seed)
    corpus = _corpus()
    records: list[TraceRecord] = []
    t = 0.0
    next_burst = rng.expovariate(1 / burst_every) if burst_every > 0 else float("inf")
    while len(records) < n:
        if t >= next_burst:
            arrivals = sorted(next_burst + rng.uniform(0, 0.1) for _ in range(burst_size))
            next_burst += rng.expovariate(1 / burst_every)
        else:
            arrivals = [t]
        for at in arrivals:
            if len(records) >= n:
                break
            if rng.random() < long_fraction:
                kind = rng.choice(("long_prompt", "long_output", "both"))
                p = int(rng.paretovariate(1.5) * 160) if kind != "long_output" else int(rng.lognormvariate(3.4, 0.5))
                o = int(rng.paretovariate(1.5) * 96) if kind != "long_prompt" else int(rng.lognormvariate(3.0, 0.5))
            else:
                p, o = int(rng.lognormvariate(3.4, 0.6)), int(rng.lognormvariate(3.2, 0.5))
            p = max(4, min(p, max_context * 3 // 4))
            o = max(1, min(o, max_context - p - 8, 1024))
            start = rng.randrange(0, len(corpus) - int(p * chars_per_token) - 1)
            text = corpus[start : start + int(p * chars_per_token)]
            records.append(TraceRecord(t=round(at, 4), tenant=rng.choice(tenants), prompt=text, prompt_tokens=p, max_tokens=o))
        t += rng.expovariate(rate)
    records.sort(key=lambda r: r.t)
    t0 = records[0].t
    for r in records:
        r.t = round(r.t - t0, 4)
    return records
