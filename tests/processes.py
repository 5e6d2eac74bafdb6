"""Real processes on loopback for integration tests: the gateway and mock OpenAI upstreams."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import urllib.error
import urllib.request
import yaml

from gateway.runtime import hash_key
from tests.redis_server import free_port

ROOT = Path(__file__).resolve().parent.parent


def get_json(url: str, key: str | None = None) -> dict:
    """GET a JSON body, with `key` as the bearer token when given."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5) as resp:
        return json.loads(resp.read())


def upstream_stats(upstream: Process) -> dict:
    """The mock upstream's counters (requests, completed, cancelled, request ids)."""
    return get_json(upstream.url + "/_stats")


def wait_http(url: str, timeout: float = 60.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=1.0):
                return
        except urllib.error.HTTPError as exc:
            if exc.code < 500:
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{url} did not answer within {timeout}s")


class Process:
    def __init__(self, args: list[str], port: int, health_path: str, log: Path, env: dict | None = None) -> None:
        self.port = port
        self.log_path = log
        self._log = open(log, "wb")
        self.proc = subprocess.Popen(args, cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT,
                                     env={**os.environ, **(env or {})})
        try:
            wait_http(f"http://127.0.0.1:{port}{health_path}", proc=self.proc)
        except RuntimeError:
            self.stop()
            raise RuntimeError(f"{args} failed to start:\n{log.read_text()[-3000:]}") from None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def log_text(self) -> str:
        self._log.flush()
        return self.log_path.read_text()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


def start_mock_upstream(tmp: Path, fail: int | None = None, model: str | None = None) -> Process:
    port = free_port()
    args = [sys.executable, "-m", "tests.mock_upstream", "--port", str(port)]
    if fail:
        args += ["--fail", str(fail)]
    if model:
        args += ["--model", model]
    return Process(args, port, "/v1/models", tmp / f"upstream-{port}.log")


TENANT_KEYS = {"acme": "sk-acme-test", "globex": "sk-globex-test"}
ADMIN_KEY = "sk-admin-test"


def gateway_config(upstreams: dict[str, list[str]], **tenant_overrides: dict) -> dict:
    """A config with one pool per entry of `upstreams` (pool → member base URLs) and a public model
    of the same name; tenant acme may use every model, globex only the first."""
    first = next(iter(upstreams))
    config = {
        "server": {"admin_keys": [{"name": "ops", "sha256": hash_key(ADMIN_KEY)}], "max_body_bytes": 65536},
        "pools": {name: {"members": [{"url": u + "/v1"} for u in urls],
                         "timeouts": {"connect": 1, "first_token": 3, "idle": 2, "total": 20}}
                  for name, urls in upstreams.items()},
        "models": {name: {"pool": name} for name in upstreams},
        "tenants": {
            "acme": {"keys": [{"name": "acme-key", "sha256": hash_key(TENANT_KEYS["acme"])}], "models": ["*"],
                     "log_prompts": False},
            "globex": {"keys": [{"name": "globex-key", "sha256": hash_key(TENANT_KEYS["globex"])}],
                       "models": [first]},
        },
    }
    for tenant, overrides in tenant_overrides.items():
        config["tenants"][tenant].update(overrides)
    return config


def write_config(path: Path, config: dict) -> None:
    # Written to a temp file and renamed, as config managers do, so a reload never sees half a file.
    tmp = path.with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump(config, sort_keys=False))
    os.replace(tmp, path)


def start_gateway(tmp: Path, config: dict | None = None, env: dict | None = None,
                  extra_args: list[str] | None = None) -> Process:
    port = free_port()
    args = [sys.executable, "-m", "gateway.cli", "serve", "--port", str(port)]
    if config is not None:
        path = tmp / "gateway.yaml"
        write_config(path, config)
        args += ["--config", str(path)]
    args += extra_args or []
    return Process(args, port, "/readyz", tmp / f"gateway-{port}.log", env=env)
