"""`switchyard replay`: send a trace to an OpenAI-compatible endpoint at its recorded times and
measure what clients see.

Each record becomes one streamed `/v1/completions` request (`stream_options.include_usage`), sent
at `t / time_scale` seconds after the start. Per request: TTFT (first streamed text), TTLT (last
streamed text), end-to-end (stream closed), completion tokens, error. The summary has p50/p95/p99
by size class and overall, completion tokens/s over the run, errors, and, when the target exposes
the engine's `/metrics`, the mean number of running requests (engine utilisation).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from backends.traces.format import SIZE_CLASSES, TraceRecord, size_class

_FILLER = "the quick brown fox jumps over the lazy dog "


@dataclass(slots=True)
class Result:
    index: int
    t: float
    tenant: str
    size: str
    prompt_tokens: int
    max_tokens: int
    sent: float = 0.0
    ttft: float | None = None
    ttlt: float | None = None
    e2e: float | None = None
    completion_tokens: int = 0
    error: str | None = None


def _prompt(rec: TraceRecord):
    if rec.prompt is not None:
        return rec.prompt
    if rec.prompt_ids is not None:
        return rec.prompt_ids
    words = _FILLER * (rec.n_prompt // 9 + 1)
    return " ".join(words.split()[: rec.n_prompt])


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    v = sorted(values)
    k = (len(v) - 1) * q / 100
    lo, hi = math.floor(k), math.ceil(k)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


async def _one(session, url: str, model: str, rec: TraceRecord, res: Result, extra: dict, timeout: float) -> None:
    import aiohttp

    body = {
        "model": model, "prompt": _prompt(rec), "max_tokens": rec.max_tokens, "stream": True,
        "stream_options": {"include_usage": True}, "temperature": 0.0, **extra,
    }
    start = time.perf_counter()
    res.sent = start
    try:
        async with session.post(url, json=body, timeout=aiohttp.ClientTimeout(total=timeout)) as resp:
            if resp.status != 200:
                res.error = f"http {resp.status}"
                await resp.read()
                return
            async for raw in resp.content:
                line = raw.decode("utf-8", "replace").strip()
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                chunk = json.loads(data)
                if "error" in chunk:
                    res.error = str(chunk["error"].get("code") or "stream error")
                    break
                now = time.perf_counter() - start
                if any(c.get("text") for c in chunk.get("choices") or []):
                    if res.ttft is None:
                        res.ttft = now
                    res.ttlt = now
                if chunk.get("usage"):
                    res.completion_tokens = chunk["usage"].get("completion_tokens", 0)
        res.e2e = time.perf_counter() - start
        if res.ttft is None and res.error is None:
            res.ttft = res.ttlt = res.e2e  # an empty completion: first "token" is the end
    except asyncio.TimeoutError:
        res.error = "timeout"
    except Exception as e:  # noqa: BLE001 - any transport failure is a counted error
        res.error = type(e).__name__


async def _utilisation(session, base: str, samples: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            async with session.get(base + "/metrics") as resp:
                text = await resp.text()
            for line in text.splitlines():
                if line.startswith("switchyard_engine_running_requests"):
                    samples.append(float(line.split()[-1]))
        except Exception:  # noqa: BLE001 - utilisation is best effort
            return
        try:
            async with asyncio.timeout(0.5):
                await stop.wait()
        except TimeoutError:
            pass


async def replay(
    records: list[TraceRecord],
    target: str,
    *,
    model: str | None = None,
    time_scale: float = 1.0,
    max_duration: float | None = None,
    extra: dict | None = None,
    request_timeout: float = 300.0,
    progress: bool = True,
    headers: dict | None = None,
) -> tuple[list[Result], dict]:
    import aiohttp
    from tqdm import tqdm

    base = target.rstrip("/")
    if base.endswith("/v1"):
        base = base[:-3]
    url = base + "/v1/completions"
    results = [Result(i, r.t, r.tenant, size_class(r.n_prompt, r.max_tokens), r.n_prompt, r.max_tokens) for i, r in enumerate(records)]
    conn = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=conn, headers=headers or {}) as session:
        if model is None:
            async with session.get(base + "/v1/models") as resp:
                model = (await resp.json())["data"][0]["id"]
        samples: list[float] = []
        stop = asyncio.Event()
        sampler = asyncio.create_task(_utilisation(session, base, samples, stop))
        bar = tqdm(total=len(records), desc="replay", unit="req", disable=not progress)
        t0 = time.perf_counter()
        tasks = []
        for rec, res in zip(records, results, strict=True):
            due = rec.t / time_scale
            if max_duration is not None and due > max_duration:
                res.error = "not sent (max duration)"
                bar.update(1)
                continue
            delay = due - (time.perf_counter() - t0)
            if delay > 0:
                await asyncio.sleep(delay)
            task = asyncio.create_task(_one(session, url, model, rec, res, extra or {}, request_timeout))
            task.add_done_callback(lambda _: bar.update(1))
            tasks.append(task)
        await asyncio.gather(*tasks)
        wall = time.perf_counter() - t0
        stop.set()
        await sampler
        bar.close()
    return results, summarise(results, wall, samples, model=model, target=target, time_scale=time_scale)


def summarise(results: list[Result], wall: float, util_samples: list[float] | None = None, **meta) -> dict:
    def stats(rows: list[Result]) -> dict:
        ok = [r for r in rows if r.error is None]
        out = {"requests": len(rows), "errors": len(rows) - len(ok)}
        for key in ("ttft", "ttlt", "e2e"):
            vals = [getattr(r, key) for r in ok if getattr(r, key) is not None]
            for q in (50, 95, 99):
                p = percentile(vals, q)
                out[f"{key}_p{q}_ms"] = round(p * 1000, 2) if p is not None else None
        return out

    sent = [r for r in results if r.sent]
    first = min((r.sent for r in sent), default=0.0)
    last = max((r.sent + (r.e2e or 0.0) for r in sent), default=0.0)
    span = max(last - first, 1e-9)
    tokens = sum(r.completion_tokens for r in results if r.error is None)
    errors: dict[str, int] = {}
    for r in results:
        if r.error:
            errors[r.error] = errors.get(r.error, 0) + 1
    return {
        **meta,
        "wall_seconds": round(wall, 3),
        "completion_tokens": tokens,
        "tokens_per_second": round(tokens / span, 2),
        "errors": errors,
        "engine_mean_running": round(sum(util_samples) / len(util_samples), 2) if util_samples else None,
        "overall": stats(results),
        "by_size": {c: stats([r for r in results if r.size == c]) for c in SIZE_CLASSES if any(r.size == c for r in results)},
    }


def save(path: str | Path, label: str, results: list[Result], summary: dict) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"label": label, "summary": summary, "requests": [asdict(r) for r in results]}, indent=1))
    return p


def plot(runs: dict[str, list[dict]], out_dir: str | Path, prefix: str = "replay") -> list[Path]:
    """`runs`: label -> per-request dicts. Writes a TTFT CDF (one line per label) and TTFT p50/p99
    by size class (grouped bars, log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, rows in runs.items():
        v = sorted(r["ttft"] * 1000 for r in rows if r.get("ttft") is not None and not r.get("error"))
        if v:
            ax.plot(v, [(i + 1) / len(v) for i in range(len(v))], label=label)
    ax.set_xscale("log")
    ax.set_xlabel("TTFT (ms, log)")
    ax.set_ylabel("fraction of requests")
    ax.set_title("TTFT CDF by scheduling mode")
    ax.grid(True, alpha=0.3)
    ax.legend()
    cdf = out / f"{prefix}_ttft_cdf.png"
    fig.tight_layout()
    fig.savefig(cdf, dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    labels = list(runs)
    width = 0.8 / max(1, len(labels))
    for i, label in enumerate(labels):
        p50s, p99s = [], []
        for c in SIZE_CLASSES:
            v = [r["ttft"] * 1000 for r in runs[label] if r["size"] == c and r.get("ttft") is not None and not r.get("error")]
            p50s.append(percentile(v, 50) or 0.0)
            p99s.append(percentile(v, 99) or 0.0)
        xs = [j + i * width for j in range(len(SIZE_CLASSES))]
        ax.bar(xs, p99s, width, alpha=0.35, label=f"{label} p99")
        ax.bar(xs, p50s, width * 0.6, label=f"{label} p50")
    ax.set_xticks([j + width * (len(labels) - 1) / 2 for j in range(len(SIZE_CLASSES))], SIZE_CLASSES)
    ax.set_yscale("log")
    ax.set_ylabel("TTFT (ms, log)")
    ax.set_title("TTFT by request size class")
    ax.legend(fontsize=7, ncol=2)
    by_size = out / f"{prefix}_ttft_by_size.png"
    fig.tight_layout()
    fig.savefig(by_size, dpi=110)
    plt.close(fig)
    return [cdf, by_size]
