"""`switchyard trace synth|extract` and `switchyard replay`: traffic traces and their replay.
`gateway/cli.py` imports this module and calls `register(subparsers)`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(subparsers) -> None:
    trace = subparsers.add_parser("trace", help="traffic traces (JSONL)")
    tsub = trace.add_subparsers(dest="trace_command", metavar="COMMAND", required=True)

    synth = tsub.add_parser("synth", help="write a seeded synthetic mixed trace")
    synth.add_argument("out", type=Path, help="output JSONL file")
    synth.add_argument("-n", "--requests", type=int, default=200)
    synth.add_argument("--seed", type=int, default=0)
    synth.add_argument("--rate", type=float, default=4.0, help="mean arrivals per second outside bursts")
    synth.add_argument("--long-fraction", type=float, default=0.15, help="share of long prompts/outputs")
    synth.add_argument("--burst-every", type=float, default=10.0, help="mean seconds between bursts (0: none)")
    synth.add_argument("--burst-size", type=int, default=6)
    synth.add_argument("--max-context", type=int, default=4096, help="prompt + output stay below this")
    synth.set_defaults(func=_synth)

    extract = tsub.add_parser("extract", help="turn the gateway's JSON request log into a trace")
    extract.add_argument("logs", nargs="+", help="log files ('-' for stdin)")
    extract.add_argument("-o", "--out", type=Path, required=True)
    extract.set_defaults(func=_extract)

    replay = subparsers.add_parser("replay", help="replay a trace against an OpenAI-compatible endpoint")
    replay.add_argument("trace", type=Path)
    replay.add_argument("--target", required=True, help="base URL, e.g. http://127.0.0.1:8001")
    replay.add_argument("--model", help="model name (default: the target's first model)")
    replay.add_argument("--label", default="run", help="name of this run in the JSON and the plots")
    replay.add_argument("--time-scale", type=float, default=1.0, help=">1 replays faster")
    replay.add_argument("--max-duration", type=float, help="send nothing after this many seconds")
    replay.add_argument("--ignore-eos", action="store_true", help="ask for exactly max_tokens (local engine)")
    replay.add_argument("--api-key", help="bearer token for the target")
    replay.add_argument("--out", type=Path, default=Path("replay-out"), help="folder for JSON and PNGs")
    replay.set_defaults(func=_replay)

    sim = subparsers.add_parser(
        "simulate", help="discrete-event model of the local engine: sweep scheduling settings on a trace"
    )
    sim.add_argument("trace", type=Path)
    sim.add_argument("--calibration", type=Path, required=True, help="JSON from `switchyard engine calibrate`")
    sim.add_argument("--modes", default="fifo,token,continuous")
    sim.add_argument("--budgets", default="64,128,256,512", help="step token budgets to sweep")
    sim.add_argument("--thresholds", default="128,256,512", help="token-mode batch thresholds to sweep")
    sim.add_argument("--json", type=Path, help="also write the table as JSON")
    sim.set_defaults(func=_simulate)


def _synth(args: argparse.Namespace) -> int:
    from backends.traces.format import write_trace
    from backends.traces.synth import synth

    records = synth(
        args.requests, seed=args.seed, rate=args.rate, long_fraction=args.long_fraction,
        burst_every=args.burst_every, burst_size=args.burst_size, max_context=args.max_context,
    )
    write_trace(records, args.out)
    print(f"{args.out}: {len(records)} requests over {records[-1].t:.1f} s (seed {args.seed})")
    return 0


def _extract(args: argparse.Namespace) -> int:
    from backends.traces.extract import extract
    from backends.traces.format import write_trace

    lines: list[str] = []
    for f in args.logs:
        lines.extend(sys.stdin if f == "-" else Path(f).read_text().splitlines())
    records, skipped = extract(lines)
    if not records:
        print("no request log lines with timestamps and token counts found", file=sys.stderr)
        return 1
    write_trace(records, args.out)
    print(f"{args.out}: {len(records)} requests over {records[-1].t:.1f} s ({skipped} request lines skipped)")
    return 0


def _replay(args: argparse.Namespace) -> int:
    import asyncio

    from backends.traces import replay as rp
    from backends.traces.format import read_trace

    records = read_trace(args.trace)
    extra = {"ignore_eos": True} if args.ignore_eos else {}
    results, summary = asyncio.run(
        rp.replay(records, args.target, model=args.model, time_scale=args.time_scale,
                  max_duration=args.max_duration, extra=extra, headers=_headers(args))
    )
    path = rp.save(args.out / f"replay-{args.label}.json", args.label, results, summary)
    runs = {}
    for f in sorted(args.out.glob("replay-*.json")):
        d = json.loads(f.read_text())
        runs[d["label"]] = d["requests"]
    pngs = rp.plot(runs, args.out)
    print(json.dumps(summary, indent=1))
    print(f"wrote {path}, " + ", ".join(map(str, pngs)))
    return 1 if summary["overall"]["errors"] else 0


def _simulate(args: argparse.Namespace) -> int:
    from backends.engine.simulate import sweep
    from backends.traces.format import read_trace

    records = read_trace(args.trace)
    cal = json.loads(args.calibration.read_text())
    ints = lambda v: tuple(int(x) for x in v.split(","))  # noqa: E731
    rows = sweep(records, cal, tuple(args.modes.split(",")), ints(args.budgets), ints(args.thresholds))
    head = f"{'mode':<12}{'budget':>8}{'threshold':>11}{'TTFT p50 ms':>13}{'TTFT p99 ms':>13}{'e2e p50 ms':>12}{'tokens/s':>10}"
    print(f"{args.trace}: {len(records)} requests; simulated with {args.calibration}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['mode']:<12}{r['step_token_budget'] or '-':>8}{r['batch_threshold'] or '-':>11}"
              f"{r['ttft_p50_ms']:>13.1f}{r['ttft_p99_ms']:>13.1f}{r['e2e_p50_ms']:>12.1f}{r['tokens_per_second']:>10.1f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


def _headers(args: argparse.Namespace) -> dict:
    return {"Authorization": f"Bearer {args.api_key}"} if args.api_key else {}
