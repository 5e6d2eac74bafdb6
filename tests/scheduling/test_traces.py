"""Traces: seeded synthesis, extraction from the gateway's request log lines, replay against a real
`switchyard engine serve` subprocess, and the simulator on calibrated costs."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from backends.traces.extract import extract
from backends.traces.format import read_trace, size_class, write_trace
from backends.traces.synth import synth
from tests.engine.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]


def test_synth_is_seeded_and_mixed(tmp_path):
    a, b, c = synth(300, seed=7, max_context=500), synth(300, seed=7, max_context=500), synth(300, seed=8, max_context=500)
    assert [r.to_json() for r in a] == [r.to_json() for r in b] != [r.to_json() for r in c]
    sizes = [size_class(r.n_prompt, r.max_tokens) for r in a]
    assert sizes.count("short") > len(a) / 2 and sizes.count("long") >= 10  # mostly chat, heavy tail
    assert all(r.n_prompt + r.max_tokens <= 500 for r in a)
    gaps = [y.t - x.t for x, y in zip(a, a[1:], strict=False)]
    assert a[0].t == 0 and min(gaps) >= 0 and sum(g < 0.1 for g in gaps) >= 10  # bursts
    write_trace(a, tmp_path / "t.jsonl")
    assert [r.to_json() for r in read_trace(tmp_path / "t.jsonl")] == [r.to_json() for r in a]


def test_extract_reads_gateway_request_lines():
    lines = [
        "not json",
        json.dumps({"event": "request", "timestamp": "2026-01-01T00:00:10.500000Z", "total_ms": 500.0, "tenant": "acme",
                    "prompt_tokens": 40, "completion_tokens": 12, "max_tokens": 64}),
        json.dumps({"event": "policy reloaded", "timestamp": "2026-01-01T00:00:11Z"}),
        json.dumps({"event": "request", "timestamp": "2026-01-01T00:00:12Z", "total_ms": 1000.0, "tenant": "globex",
                    "prompt_tokens": 300, "completion_tokens": 80, "max_tokens": None,
                    "messages": [{"role": "user", "content": "hi"}]}),
        json.dumps({"event": "request", "timestamp": "2026-01-01T00:00:13Z", "prompt_tokens": None}),
    ]
    records, skipped = extract(lines)
    assert skipped == 1 and len(records) == 2
    a, b = records
    assert (a.t, a.tenant, a.prompt_tokens, a.max_tokens, a.output_tokens) == (0.0, "acme", 40, 64, 12)
    assert (b.t, b.tenant, b.prompt_tokens, b.max_tokens, b.prompt) == (1.0, "globex", 300, 80, "user: hi")


@pytest.fixture(scope="module")
def engine_url():
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "backends.engine.cli", "engine", "serve", "--port", str(port), "--device", "cpu",
         "--threads", "1", "--schedule", "continuous", "--step-token-budget", "64"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(url + "/healthz", timeout=1)
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, "engine did not start"
            time.sleep(0.3)
    yield url
    proc.terminate()
    proc.wait(30)


def test_replay_measures_a_real_engine_and_plots(engine_url, tmp_path):
    from backends.traces import replay as rp

    records = synth(12, seed=3, rate=20, max_context=300, long_fraction=0.3)
    results, summary = asyncio.run(rp.replay(records, engine_url, model="large", extra={"ignore_eos": True}, progress=False))
    assert summary["overall"]["errors"] == 0 and summary["overall"]["requests"] == 12
    assert all(r.ttft is not None and r.ttft <= r.ttlt <= r.e2e for r in results)
    assert summary["completion_tokens"] == sum(r.max_tokens for r in records)
    assert summary["tokens_per_second"] > 0 and summary["overall"]["ttft_p99_ms"] >= summary["overall"]["ttft_p50_ms"]
    rp.save(tmp_path / "replay-a.json", "a", results, summary)
    pngs = rp.plot({"a": [rp.asdict(r) for r in results]}, tmp_path)
    assert all(p.stat().st_size > 1000 for p in pngs)


def test_max_duration_stops_sending(engine_url):
    from backends.traces import replay as rp

    records = synth(10, seed=4, rate=5, max_context=200, burst_every=0)
    results, summary = asyncio.run(rp.replay(records, engine_url, model="large", time_scale=4.0,
                                             max_duration=records[4].t / 4.0, progress=False))
    assert summary["errors"] == {"not sent (max duration)": 5}


def test_simulator_runs_the_real_schedulers_on_calibrated_costs():
    from backends.engine.simulate import simulate, sweep

    cal = {"prefill_fixed_s": 0.004, "prefill_per_token_s": 0.00005,
           "step_seconds_by_batch": {"spec": {"1": 0.012, "4": 0.02, "8": 0.03}, "plain": {"1": 0.006, "4": 0.009, "8": 0.012}},
           "tokens_per_row_by_batch": {"spec": {"1": 4.0, "4": 4.0, "8": 4.0}, "plain": {"1": 1.0, "4": 1.0, "8": 1.0}}}
    records = synth(120, seed=1, rate=6, max_context=500)
    fifo = simulate(records, cal, "fifo")[1]
    cont = simulate(records, cal, "continuous")[1]
    assert fifo["overall"]["errors"] == cont["overall"]["errors"] == 0
    assert cont["overall"]["ttft_p99_ms"] < fifo["overall"]["ttft_p99_ms"]
    rows = sweep(records[:40], cal, budgets=(64, 256), thresholds=(256,))
    assert [r["mode"] for r in rows] == ["fifo", "token", "token", "continuous", "continuous"]


def test_simulator_models_late_join_during_drafting():
    """As in the engine: a request arriving while a speculative step drafts (the step's cost above a
    plain step) gets its first token at the end of that step; one arriving after drafting waits for
    the next step."""
    from backends.engine.simulate import simulate
    from backends.traces.format import TraceRecord

    cal = {"prefill_fixed_s": 0.004, "prefill_per_token_s": 0.00005,
           "step_seconds_by_batch": {"spec": {"1": 0.012, "4": 0.02}, "plain": {"1": 0.006, "4": 0.009}},
           "tokens_per_row_by_batch": {"spec": {"1": 4.0, "4": 4.0}, "plain": {"1": 1.0, "4": 1.0}}}
    # tick 0: A prefills and decodes (plain, 6.45 ms); tick 1: A speculates, drafting until 12.45 ms
    records = [TraceRecord(t=0.0, prompt_tokens=10, max_tokens=100),
               TraceRecord(t=0.008, prompt_tokens=5, max_tokens=2),   # arrives while tick 1 drafts
               TraceRecord(t=0.013, prompt_tokens=5, max_tokens=2)]   # arrives after drafting
    results, _ = simulate(records, cal, "continuous")
    tick1_end = 0.00645 + 0.012 + 4 * 0.00005  # the joined prompt's 4 prefill tokens ride in tick 1
    assert results[1].ttft == pytest.approx(tick1_end - 0.008)
    assert results[2].ttft > tick1_end - 0.013 + 0.006  # waited for a step of its own


def test_simulator_step_cost_is_batched():
    from backends.engine.calibrate import step_cost

    cal = {"prefill_fixed_s": 0.004, "prefill_per_token_s": 0.0002,
           "step_seconds_by_batch": {"spec": {"1": 0.012, "4": 0.024}, "plain": {"1": 0.006, "4": 0.009}},
           "tokens_per_row_by_batch": {"spec": {"1": 4.0, "4": 3.0}, "plain": {"1": 1.0, "4": 1.0}}}
    assert step_cost(cal, 4, 0, True) == (0.024, 3.0)
    assert step_cost(cal, 2, 100, False) == pytest.approx((0.007 + 0.02, 1.0))  # interpolated, plus the chunk
    assert step_cost(cal, 0, 100, True) == pytest.approx((0.004 + 0.02, 0.0))  # a prefill-only step
    assert step_cost(cal, 7, 0, False)[0] == pytest.approx(0.012)  # extrapolated on the last slope
    assert step_cost(cal, 4, 0, "capped") == (0.024, 3.0)  # no capped measurement: the free one


def test_calibrate_measures_the_real_worker():
    import torch

    from backends.engine import ServedModel, load_model
    from backends.engine.calibrate import calibrate
    from backends.models import bundled_models

    torch.set_num_threads(1)
    shipped = bundled_models()
    served = ServedModel("m", load_model(shipped["target"], device="cpu"), load_model(shipped["draft"], device="cpu"))
    cal = calibrate(served, repeats=1, batch_sizes=(1, 2), steps=2)
    assert cal["prefill_per_token_s"] > 0 and cal["decode_round_s"] > 0 and cal["tokens_per_round"] >= 1
    assert set(cal["step_seconds_by_batch"]["spec"]) == set(cal["step_seconds_by_batch"]["plain"]) == {"1", "2"}
    assert cal["tokens_per_row_by_batch"]["plain"] == {"1": 1.0, "2": 1.0}  # no speculation: one token a step
    assert cal["tokens_per_row_by_batch"]["capped"]["2"] <= cal["k_under_load"] + 1  # k capped: at most k+1
    assert len(cal["prefill_seconds"]) >= 4
