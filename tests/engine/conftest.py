"""Fixtures on the real shipped models: an engine for direct (in-thread) decoding, and a real
`switchyard engine serve` subprocess on a free loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import torch

from backends.engine import Engine, GenerationRequest, SamplingParams, Submission, build_engine
from backends.engine.request import Delta, Finished
from backends.models import bundled_models

ROOT = Path(__file__).resolve().parents[2]
torch.set_num_threads(1)  # the CPU is shared; one thread is the steadiest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def engine() -> Engine:
    """"large" = shipped target + draft, "small" = the draft alone. Not started: tests drive its
    worker directly, in the test thread."""
    shipped = bundled_models()
    return build_engine(shipped["target"], shipped["draft"], name="large", draft_name="small", device="cpu")


class Run:
    """One request decoded to completion in the test thread."""

    def __init__(self, engine: Engine, prompt_ids: list[int], model: str = "large", **kw) -> None:
        spec = kw.pop("speculation", None)
        k = kw.pop("k", None)
        kw.setdefault("max_tokens", 32)
        kw.setdefault("temperature", 0.0)
        self.events: list = []
        req = GenerationRequest("test", model, list(prompt_ids), SamplingParams(**kw), speculation=spec, num_speculative_tokens=k)
        self.seq = engine.worker.run(Submission(req, emit=self.events.append))
        self.tokens = self.seq.completion
        self.text = "".join(e.text for e in self.events if isinstance(e, Delta))
        self.finished = next(e for e in self.events if isinstance(e, Finished))


@pytest.fixture(scope="session")
def run(engine):
    return lambda prompt_ids, **kw: Run(engine, prompt_ids, **kw)


def _wait_http(url: str, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"engine server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1.0):
                return
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout}s")


@pytest.fixture(scope="session")
def engine_server(tmp_path_factory):
    """`python -m backends.engine.cli engine serve` with the shipped models: "large" and "small"."""
    port = free_port()
    log = tmp_path_factory.mktemp("engine") / "server.log"
    shipped = bundled_models()
    args = [
        sys.executable, "-m", "backends.engine.cli", "engine", "serve",
        "--model", str(shipped["target"]), "--draft", str(shipped["draft"]),
        "--served-model-name", "large", "--serve-draft-as", "small",
        "--host", "127.0.0.1", "--port", str(port), "--threads", "1", "--device", "cpu",
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env={**os.environ})
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_http(url + "/healthz", proc)
    except RuntimeError:
        proc.kill()
        raise RuntimeError(log.read_text()[-3000:]) from None
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
