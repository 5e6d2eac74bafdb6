"""Scheduling modes side by side: one synthetic mixed trace replayed against the real local engine
in `fifo`, `token` and `continuous` modes, in one run.

    python bench/batching.py                      # 200 requests, seed 0, 2 rounds, ~6 min on a 2-core CPU
    python bench/batching.py --requests 80 --rate 6 --modes fifo,continuous

For each mode a fresh `switchyard engine serve --schedule MODE` subprocess (shipped models, one
torch thread) receives the same trace at its recorded times (streamed /v1/completions, greedy,
ignore_eos so every mode generates the same tokens), in `--repeats` interleaved rounds whose requests
are pooled. The trace's clock is scaled by this host's calibrated speed against `--reference-step-ms`,
so the engine sees the same load on a fast or a slow hour of a shared machine. Prints one table (TTFT p50/p99, e2e p50,
completion tokens/s per mode, ratios to fifo) and writes bench/out/batching.json and the PNGs
bench/out/batching_ttft_cdf.png and bench/out/batching_ttft_by_size.png.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from backends.engine.worker import DEFAULT_SPEC_K_UNDER_LOAD, DEFAULT_SPEC_MAX_BATCH  # noqa: E402
from backends.traces import replay as rp  # noqa: E402
from backends.traces.synth import synth  # noqa: E402


REFERENCE_STEP_MS = 8.3
"""The shipped target's batched decode step (8 sequences, no speculation) as calibrated on the quiet
development machine the trace's default rate was chosen on (docs/scheduling.md). The same 2 cores
have since calibrated anywhere from 6 to 14 ms from hour to hour (shared host): at a fixed
arrival rate the engine's load, and with it every latency, would follow the neighbours."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_engine(mode: str, port: int, args) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "backends.engine.cli", "engine", "serve", "--schedule", mode, "--port", str(port),
           "--device", "cpu", "--threads", "1", "--step-token-budget", str(args.step_token_budget),
           "--max-running", str(args.max_running), "--spec-max-batch", str(args.spec_max_batch),
           "--spec-k-under-load", str(args.spec_k_under_load)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"engine ({mode}) exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                return proc
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("engine did not become healthy")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rate", type=float, default=5.0,
                    help="mean arrivals/s outside bursts, for an engine as fast as --reference-step-ms")
    ap.add_argument("--reference-step-ms", type=float, default=REFERENCE_STEP_MS,
                    help="the calibrated B=8 plain decode step the trace's rate is meant for; arrivals are sped up or "
                         "slowed down by reference / measured so every host sees the same load (0: replay as synthesised)")
    ap.add_argument("--long-fraction", type=float, default=0.15)
    ap.add_argument("--modes", default="fifo,token,continuous")
    ap.add_argument("--step-token-budget", type=int, default=256)
    ap.add_argument("--max-running", type=int, default=32, help="same for every mode (fifo: the batch size)")
    ap.add_argument("--spec-max-batch", type=int, default=DEFAULT_SPEC_MAX_BATCH,
                    help="engine: speculate only in steps with at most N decoding sequences (-1: always)")
    ap.add_argument("--spec-k-under-load", type=int, default=DEFAULT_SPEC_K_UNDER_LOAD,
                    help="engine: above --spec-max-batch, the most drafts per sequence and step (0: off)")
    ap.add_argument("--repeats", type=int, default=2,
                    help="rounds over all modes, interleaved; the table pools every round's requests")
    ap.add_argument("--saturate", type=float, default=0.0,
                    help="also replay the trace this many times faster (over capacity) to compare throughput; 0: skip")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    args = ap.parse_args()

    records = synth(args.requests, seed=args.seed, rate=args.rate, long_fraction=args.long_fraction,
                    burst_every=8.0, burst_size=6, max_context=500)
    # exact prompt sizes for the shipped tokenizer: the text cut to `prompt_tokens` token ids
    from transformers import AutoTokenizer

    from backends.models import bundled_models

    tok = AutoTokenizer.from_pretrained(str(bundled_models()["target"]))
    for r in records:
        ids = tok.encode(r.prompt)
        while len(ids) < r.prompt_tokens:
            ids = ids + ids
        r.prompt_ids, r.prompt = ids[: r.prompt_tokens], None
    print(f"trace: {len(records)} requests over {records[-1].t:.1f} s, seed {args.seed}, "
          f"{sum(r.n_prompt for r in records)} prompt tokens, {sum(r.max_tokens for r in records)} output tokens")
    # the simulator's prediction for the same trace, from costs measured here first
    import torch

    from backends.engine import ServedModel, load_model
    from backends.engine.calibrate import calibrate
    from backends.engine.simulate import simulate

    torch.set_num_threads(1)
    shipped = bundled_models()
    cal = calibrate(k_under_load=args.spec_k_under_load, served=ServedModel("m", load_model(shipped["target"], device="cpu"), load_model(shipped["draft"], device="cpu")))
    print(f"calibration: prefill {cal['prefill_fixed_s'] * 1000:.2f} ms + {cal['prefill_per_token_s'] * 1e6:.1f} us/token; "
          f"batched decode step ms (tokens/s) by batch size, speculation adaptive k | k <= {cal['k_under_load']} | off:")
    for b in cal["step_seconds_by_batch"]["spec"]:
        print(f"  B={b:>2}: " + " | ".join(f"{cal['step_seconds_by_batch'][k][b] * 1000:6.2f} ms ({cal['decode_tokens_per_second_by_batch'][k][b]:6.1f})"
                                          for k in ("spec", "capped", "plain")))
    step_ms = cal["step_seconds_by_batch"]["plain"]["8"] * 1000
    speed = args.reference_step_ms / step_ms if args.reference_step_ms > 0 else 1.0
    for r in records:  # the same trace on this host's clock: same load per unit of engine work
        r.t = round(r.t / speed, 4)
    against = f"the reference {args.reference_step_ms:.2f} ms" if args.reference_step_ms > 0 else "no reference (not scaled)"
    print(f"host speed: B=8 plain step {step_ms:.2f} ms against {against} -> "
          f"arrivals x{speed:.2f} (rate {args.rate * speed:.2f}/s, trace over {records[-1].t:.1f} s)")
    spec_max_batch = None if args.spec_max_batch < 0 else args.spec_max_batch
    predicted = {m: simulate(records, cal, m, step_token_budget=args.step_token_budget, max_running=args.max_running,
                             spec_max_batch=spec_max_batch, spec_k_under_load=args.spec_k_under_load)[1]
                 for m in args.modes.split(",")}
    modes = args.modes.split(",")
    saturated: dict[str, dict] = {}
    pooled: dict[str, list] = {m: [] for m in modes}
    rounds: dict[str, list[dict]] = {m: [] for m in modes}
    # Rounds interleave the modes (fifo, token, continuous, fifo, ...): load that comes and goes on a
    # shared machine then lands on every mode alike, and the pooled percentiles are not one run's luck.
    for rnd in range(args.repeats):
        for mode in modes:
            port = free_port()
            proc = start_engine(mode, port, args)
            try:
                results, summary = asyncio.run(rp.replay(records, f"http://127.0.0.1:{port}", model="large",
                                                         extra={"ignore_eos": True}, progress=sys.stderr.isatty()))
                if args.saturate > 0 and rnd == 0:  # the same trace, arrivals compressed: the engine is the bottleneck
                    _, saturated[mode] = asyncio.run(rp.replay(records, f"http://127.0.0.1:{port}", model="large",
                                                               time_scale=args.saturate, extra={"ignore_eos": True},
                                                               progress=False))
            finally:
                proc.terminate()
                proc.wait(30)
            pooled[mode].extend(results)
            rounds[mode].append(summary)
            o = summary["overall"]
            print(f"  round {rnd + 1} {mode}: done in {summary['wall_seconds']:.1f} s, TTFT p50 {o['ttft_p50_ms']:.1f} "
                  f"p99 {o['ttft_p99_ms']:.1f} ms, errors {o['errors']}", flush=True)
    summaries, runs = {}, {}
    for mode in modes:
        summary = rp.summarise(pooled[mode], sum(r["wall_seconds"] for r in rounds[mode]), model="large")
        # each round's throughput over its own span, averaged (the rounds' clocks do not line up)
        summary["tokens_per_second"] = round(sum(r["tokens_per_second"] for r in rounds[mode]) / len(rounds[mode]), 2)
        summary["rounds"] = [r["overall"] | {"tokens_per_second": r["tokens_per_second"]} for r in rounds[mode]]
        summaries[mode] = summary
        runs[mode] = [rp.asdict(r) for r in pooled[mode]]

    base = summaries.get("fifo")
    head = f"{'mode':<12}{'TTFT p50 ms':>12}{'TTFT p99 ms':>12}{'e2e p50 ms':>12}{'tokens/s':>10}{'p50 vs fifo':>13}{'p99 vs fifo':>13}{'tok/s vs fifo':>15}{'errors':>8}"
    print()
    print(head)
    print("-" * len(head))
    for mode, s in summaries.items():
        o = s["overall"]
        r50 = r99 = rt = "-"
        if base:
            b = base["overall"]
            r50 = f"{b['ttft_p50_ms'] / o['ttft_p50_ms']:.2f}x lower"
            r99 = f"{b['ttft_p99_ms'] / o['ttft_p99_ms']:.2f}x lower"
            rt = f"{s['tokens_per_second'] / base['tokens_per_second']:.2f}x"
        print(f"{mode:<12}{o['ttft_p50_ms']:>12.1f}{o['ttft_p99_ms']:>12.1f}{o['e2e_p50_ms']:>12.1f}"
              f"{s['tokens_per_second']:>10.1f}{r50:>13}{r99:>13}{rt:>15}{o['errors']:>8}")
    if args.repeats > 1 and "fifo" in summaries:
        print()
        print("per round (each mode's own percentiles; ratios to fifo in the same round):")
        for mode in modes:
            cells = "  ".join(
                f"{o['ttft_p50_ms']:.0f}/{o['ttft_p99_ms']:.0f} ms "
                f"({f['ttft_p50_ms'] / o['ttft_p50_ms']:.2f}x/{f['ttft_p99_ms'] / o['ttft_p99_ms']:.2f}x)"
                for o, f in zip(summaries[mode]["rounds"], summaries["fifo"]["rounds"], strict=True))
            print(f"  {mode:<11} {cells}")
    if saturated:
        print()
        print(f"saturated: the same trace {args.saturate:g}x faster (arrivals over {records[-1].t / args.saturate:.1f} s), "
              "throughput when the engine is the bottleneck:")
        print(f"{'mode':<12}{'tokens/s':>10}{'tok/s vs fifo':>15}{'TTFT p50 ms':>13}{'TTFT p99 ms':>13}{'errors':>8}")
        for mode, s in saturated.items():
            rt = f"{s['tokens_per_second'] / saturated['fifo']['tokens_per_second']:.2f}x" if "fifo" in saturated else "-"
            o = s["overall"]
            print(f"{mode:<12}{s['tokens_per_second']:>10.1f}{rt:>15}{o['ttft_p50_ms']:>13.1f}{o['ttft_p99_ms']:>13.1f}{o['errors']:>8}")
    print()
    print("simulator (switchyard simulate, calibrated above) vs measured, same trace:")
    print(f"{'mode':<12}{'TTFT p50 sim/real':>22}{'TTFT p99 sim/real':>22}{'e2e p50 sim/real':>22}{'tok/s sim/real':>18}")
    for mode, s in summaries.items():
        o, p = s["overall"], predicted[mode]["overall"]
        print(f"{mode:<12}{p['ttft_p50_ms']:>11.0f} / {o['ttft_p50_ms']:<8.0f}{p['ttft_p99_ms']:>11.0f} / {o['ttft_p99_ms']:<8.0f}"
              f"{p['e2e_p50_ms']:>11.0f} / {o['e2e_p50_ms']:<8.0f}{predicted[mode]['tokens_per_second']:>9.0f} / {s['tokens_per_second']:<6.0f}")
    print()
    print("TTFT p50 / p99 ms by size class:")
    for mode, s in summaries.items():
        cells = "  ".join(f"{c}: {v['ttft_p50_ms']:.0f} / {v['ttft_p99_ms']:.0f} (n={v['requests']})" for c, v in s["by_size"].items())
        print(f"  {mode:<11} {cells}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "batching.json").write_text(json.dumps({"args": vars(args) | {"out": str(args.out)}, "calibration": cal,
                                                         "host_speed": {"step_ms": step_ms, "arrivals_x": speed},
                                                         "summaries": summaries, "saturated": saturated,
                                                         "simulated": predicted}, indent=1))
    pngs = rp.plot(runs, args.out, prefix="batching")
    print("wrote", args.out / "batching.json", *pngs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
