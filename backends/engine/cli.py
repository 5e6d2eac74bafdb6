"""`switchyard engine ...` commands. `gateway/cli.py` calls `register(subparsers)`; this module
also runs on its own: `python -m backends.engine.cli engine serve --model DIR`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers) -> None:
    """Add the `engine` command group to an argparse subparsers object."""
    engine = subparsers.add_parser("engine", help="run the local inference engine")
    commands = engine.add_subparsers(dest="engine_command", metavar="COMMAND", required=True)

    serve = commands.add_parser(
        "serve",
        help="serve a Hugging Face causal LM directory over the OpenAI API",
        description="Serve a model directory (config.json + safetensors + tokenizer) over the OpenAI API, "
        "with speculative decoding when --draft is given. Defaults to the shipped models.",
    )
    serve.add_argument("--model", type=Path, help="target model directory (default: the shipped target)")
    serve.add_argument("--draft", type=Path, help="draft model directory sharing the target's tokenizer")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8001)
    serve.add_argument("--served-model-name", dest="name", help="public model name (default: the directory name)")
    serve.add_argument("--serve-draft-as", dest="draft_name", help="also serve the draft alone under this name")
    serve.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda when available)")
    serve.add_argument(
        "--max-running", type=int, help="requests generating at once (default: 4 for fifo, 32 otherwise)"
    )
    serve.add_argument(
        "--schedule", choices=("fifo", "token", "continuous"), default="continuous",
        help="scheduling mode (default: continuous; see docs/scheduling.md)",
    )
    serve.add_argument("--step-token-budget", type=int, default=256, help="tokens one scheduler step may process")
    serve.add_argument(
        "--batch-threshold", type=int, default=256, help="token mode: pooled tokens that emit a micro-batch"
    )
    serve.add_argument(
        "--spec-max-batch", type=int, default=None,
        help="speculate freely (adaptive k) only in steps with at most N decoding sequences (default: 4; -1: always)",
    )
    serve.add_argument(
        "--spec-k-under-load", type=int, default=None,
        help="above --spec-max-batch: the most drafts per sequence and step (default: 0, no speculation)",
    )
    serve.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    serve.set_defaults(func=_serve)

    cal = commands.add_parser(
        "calibrate",
        help="measure prefill and decode costs for `switchyard simulate`",
        description="Run the real engine's worker on a model pair and write the costs the simulator "
        "uses: prefill seconds per chunk size, decode round seconds and tokens per round, tick seconds by "
        "batch size. Defaults to the shipped models.",
    )
    cal.add_argument("--model", type=Path, help="target model directory (default: the shipped target)")
    cal.add_argument("--draft", type=Path, help="draft model directory (default with the shipped target: shipped draft)")
    cal.add_argument("--device", help="cpu, cuda ... (default: cuda when available)")
    cal.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1, as the benchmarks)")
    cal.add_argument("-o", "--out", type=Path, default=Path("calibration.json"))
    cal.set_defaults(func=_calibrate)


def _serve(args: argparse.Namespace) -> int:
    import logging

    import torch

    from backends.engine.loader import ModelLoadError
    from backends.engine.server import serve

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.threads:
        torch.set_num_threads(args.threads)
    model, draft, name = args.model, args.draft, args.name
    if model is None:
        from backends.models import bundled_models

        shipped = bundled_models()
        model, name = shipped["target"], name or "large"
        if draft is None:
            draft = shipped["draft"]
            args.draft_name = args.draft_name or "small"
    try:
        serve(
            model,
            draft,
            host=args.host,
            port=args.port,
            name=name,
            draft_name=args.draft_name,
            device=args.device,
            max_running=args.max_running,
            schedule=args.schedule,
            step_token_budget=args.step_token_budget,
            batch_threshold=args.batch_threshold,
            spec_max_batch=_spec_max_batch(args.spec_max_batch),
            spec_k_under_load=_spec_k_under_load(args.spec_k_under_load),
        )
    except ModelLoadError as e:
        print(f"switchyard engine: {e}", file=sys.stderr)
        return 2
    return 0


def _spec_max_batch(value: int | None) -> int | None:
    from backends.engine.worker import DEFAULT_SPEC_MAX_BATCH

    if value is None:
        return DEFAULT_SPEC_MAX_BATCH
    return None if value < 0 else value


def _spec_k_under_load(value: int | None) -> int:
    from backends.engine.worker import DEFAULT_SPEC_K_UNDER_LOAD

    return DEFAULT_SPEC_K_UNDER_LOAD if value is None else max(0, value)


def _calibrate(args: argparse.Namespace) -> int:
    import json

    import torch

    from backends.engine import ServedModel, check_pair, load_model
    from backends.engine.calibrate import calibrate
    from backends.engine.loader import ModelLoadError

    torch.set_num_threads(args.threads)
    model, draft = args.model, args.draft
    if model is None:
        from backends.models import bundled_models

        shipped = bundled_models()
        model, draft = shipped["target"], draft or shipped["draft"]
    try:
        target = load_model(model, device=args.device)
        draft_lm = load_model(draft, device=args.device) if draft is not None else None
        if draft_lm is not None:
            check_pair(target, draft_lm)
    except ModelLoadError as e:
        print(f"switchyard engine: {e}", file=sys.stderr)
        return 2
    result = calibrate(ServedModel(name="m", target=target, draft=draft_lm))
    result["model"], result["draft"] = str(model), str(draft) if draft else None
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    print(f"wrote {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="switchyard")
    register(parser.add_subparsers(dest="command", metavar="COMMAND", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
