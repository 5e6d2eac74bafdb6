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
    serve.add_argument("--max-running", type=int, default=4, help="requests generating at once")
    serve.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    serve.set_defaults(func=_serve)


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
        )
    except ModelLoadError as e:
        print(f"switchyard engine: {e}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="switchyard")
    register(parser.add_subparsers(dest="command", metavar="COMMAND", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
