"""The `switchyard` command line."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

# Optional command groups owned by other packages; each exposes `register(subparsers)`.
_PLUGINS = ("backends.engine.cli", "classifiers.cli", "gateway.tools_cli")


def _serve(args: argparse.Namespace) -> int:
    from gateway import logs
    from gateway.server import run, serve
    from policies import loader

    logs.configure(args.log_level)
    path = args.config or os.environ.get("SWITCHYARD_CONFIG")
    if path:
        try:
            config = loader.load(path)
        except loader.PolicyError as exc:
            print("\n".join(exc.problems), file=sys.stderr)
            return 2
        source, watch = str(path), Path(path)
    else:
        from gateway.embedded import embedded_config

        config, generated = embedded_config()
        source, watch = "embedded default", None
        for env, key in generated.items():
            print(f"{env} was not set; generated for this run: {key}", flush=True)
    run(serve(config, source, watch, args.host, args.port, log_requests=not args.no_request_log))
    return 0


def _policy_check(args: argparse.Namespace) -> int:
    from policies import loader

    failed = 0
    for f in args.files:
        try:
            cfg = loader.load(f)
        except loader.PolicyError as exc:
            failed += 1
            print("\n".join(exc.problems))
            continue
        print(f"{f}: ok ({len(cfg.tenants)} tenants, {len(cfg.models)} models, {len(cfg.pools)} pools)")
    return 1 if failed else 0


def _hash_key(args: argparse.Namespace) -> int:
    from gateway.runtime import hash_key

    key = args.key if args.key is not None else sys.stdin.readline().strip()
    print(hash_key(key))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="switchyard", description="An OpenAI-compatible LLM traffic gateway.")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the gateway (the embedded default when no --config is given)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--config", help="gateway/policy YAML (or $SWITCHYARD_CONFIG); hot-reloaded on change and SIGHUP")
    serve.add_argument("--log-level", default="info")
    serve.add_argument("--no-request-log", action="store_true", help="skip the per-request log line")
    serve.set_defaults(func=_serve)

    policy = sub.add_parser("policy", help="policy files")
    psub = policy.add_subparsers(dest="policy_command", required=True)
    check = psub.add_parser("check", help="validate policy files; errors name file, line and field")
    check.add_argument("files", nargs="+")
    check.set_defaults(func=_policy_check)
    hk = psub.add_parser("hash-key", help="print the SHA-256 to put in a policy for an API key (reads stdin if no KEY)")
    hk.add_argument("key", nargs="?")
    hk.set_defaults(func=_hash_key)

    for name in _PLUGINS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is None or not name.startswith(exc.name):
                raise
            continue
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args) or 0


if __name__ == "__main__":
    sys.exit(main())
