"""What the gateway costs: the same bounded load straight to an upstream and through the gateway, in one run.

    python bench/proxy_overhead.py [--duration 5] [--out bench/out]

Setup (2 cores): the gateway is pinned to core 0; the upstream (bench/fast_upstream.py) and the load
generator to core 1 (`taskset`). The gateway runs a full policy (auth, validation, model access, output
budget clamp, rate limits when configured, metrics, one JSON log line per request written to a file).
Load: `wrk` (C, one thread, keep-alive) at concurrency 1, 16 and 64, streaming and not; TTFT at
concurrency 1 with a Python client that stops the clock at the first `data:` line. Gateway CPU per
request is read from /proc. Prints a table, writes JSON and a PNG.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import yaml
from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gateway.runtime import hash_key  # noqa: E402
from tests.processes import wait_http  # noqa: E402
from tests.redis_server import free_port  # noqa: E402

KEY = "sk-bench"
GW_CORE, LOAD_CORE = "0", "1"


def _body(stream: bool) -> str:
    return json.dumps({"model": "bench", "messages": [{"role": "system", "content": "You are terse."},
                                                      {"role": "user", "content": "Say eight words."}],
                       "max_tokens": 8, "temperature": 0, "stream": stream})


def _taskset(core: str) -> list[str]:
    return ["taskset", "-c", core] if shutil.which("taskset") and (os.cpu_count() or 1) > 1 else []


def _config(upstream: str, limits: bool) -> dict:
    # The plain proxied path: auth, validation, model access, token count, output budget clamp, rate
    # limits, metrics and the log line. The cache is off: a hit would not reach the upstream at all.
    tenant = {"keys": [{"sha256": hash_key(KEY), "name": "bench"}], "models": ["bench"],
              "budgets": {"max_input_tokens": 100_000, "max_output_tokens": 256}, "cache": {"enabled": False}}
    if limits:
        tenant["limits"] = {"requests_per_minute": 10_000_000, "tokens_per_minute": 1_000_000_000}
    return {"pools": {"bench": {"members": [{"url": upstream + "/v1"}], "max_attempts": 1}},
            "models": {"bench": {"pool": "bench"}}, "tenants": {"bench": tenant}}


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def _ms(text: str) -> float:
    m = re.match(r"([\d.]+)(us|ms|s)", text)
    assert m, text
    return float(m.group(1)) * _UNITS[m.group(2)]


def run_wrk(url: str, body: str, conns: int, duration: float, workdir: Path) -> dict:
    script = workdir / "post.lua"
    script.write_text(
        'wrk.method = "POST"\n'
        f"wrk.body = {json.dumps(body)}\n"
        'wrk.headers["Content-Type"] = "application/json"\n'
        f'wrk.headers["Authorization"] = "Bearer {KEY}"\n'
    )
    out = subprocess.run(
        [*_taskset(LOAD_CORE), "wrk", "-t1", f"-c{conns}", f"-d{max(1, round(duration))}s", "--latency", "--timeout", "10s",
         "-s", str(script), url],
        capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    total = int(re.search(r"(\d+) requests in", out).group(1))
    pct = dict(re.findall(r"^\s+(50|75|90|99)%\s+(\S+)", out, re.M))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return {"rps": rps, "requests": total, "p50_ms": _ms(pct["50"]), "p99_ms": _ms(pct["99"]),
            "non2xx": int(bad.group(1)) if bad else 0, "socket_errors": errors.group(1) if errors else ""}


async def _ttft(url: str, n: int) -> list[float]:
    headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    body = _body(True).encode()
    out = []
    async with aiohttp.ClientSession() as s:
        for i in range(n + 20):
            t0 = time.perf_counter()
            async with s.post(url, data=body, headers=headers) as resp:
                await resp.content.readline()  # first `data:` line
                t1 = time.perf_counter()
                await resp.read()
            if i >= 20:  # warm-up
                out.append((t1 - t0) * 1000)
    return out


def ttft(url: str, n: int) -> dict:
    samples = sorted(asyncio.run(_ttft(url, n)))
    return {"ttft_p50_ms": statistics.median(samples), "ttft_p99_ms": samples[int(len(samples) * 0.99) - 1]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--duration", type=float, default=5.0, help="seconds per wrk run")
    p.add_argument("--ttft-samples", type=int, default=400)
    p.add_argument("--out", default=str(ROOT / "bench" / "out"))
    args = p.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is not installed: `apt-get install -y wrk` (the Makefile's bench target does it)")
    if (os.cpu_count() or 1) > 1 and os.sched_getaffinity(0) != set(range(os.cpu_count() or 1)):
        print("note: this process is already pinned; taskset pins children regardless", file=sys.stderr)

    work = Path(tempfile.mkdtemp(prefix="switchyard-bench-"))
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    up_port, gw_port = free_port(), free_port()
    upstream = subprocess.Popen([*_taskset(LOAD_CORE), sys.executable, str(ROOT / "bench" / "fast_upstream.py"),
                                 "--port", str(up_port)], stdout=subprocess.DEVNULL)
    cfg = work / "gateway.yaml"
    cfg.write_text(yaml.safe_dump(_config(f"http://127.0.0.1:{up_port}", limits=True)))
    gw_log = open(work / "gateway.log", "wb")
    gateway = subprocess.Popen([*_taskset(GW_CORE), sys.executable, "-m", "gateway.cli", "serve", "--port",
                                str(gw_port), "--config", str(cfg)], cwd=ROOT, stdout=gw_log, stderr=subprocess.STDOUT)
    try:
        wait_http(f"http://127.0.0.1:{up_port}/v1/models")
        wait_http(f"http://127.0.0.1:{gw_port}/readyz")
        targets = {"direct": f"http://127.0.0.1:{up_port}", "gateway": f"http://127.0.0.1:{gw_port}"}
        rows = []
        cases = [(stream, c) for stream in (False, True) for c in (1, 16, 64)]
        for stream, conns in tqdm(cases, desc="load", unit="case"):
            row = {"stream": stream, "concurrency": conns}
            for name, base in targets.items():
                url = base + "/v1/chat/completions"
                run_wrk(url, _body(stream), conns, 1.0, work)  # warm-up
                cpu0 = _cpu_seconds(gateway.pid)
                r = run_wrk(url, _body(stream), conns, args.duration, work)
                if name == "gateway":
                    r["gw_cpu_ms_per_req"] = (_cpu_seconds(gateway.pid) - cpu0) * 1000 / max(1, r["requests"])
                row[name] = r
            rows.append(row)
        first_tokens = {name: ttft(base + "/v1/chat/completions", args.ttft_samples)
                        for name, base in tqdm(targets.items(), desc="ttft", unit="target")}
    finally:
        gateway.terminate()
        upstream.terminate()
        gateway.wait(10)
        upstream.wait(10)
        gw_log.close()

    hdr = (f"{'mode':<10}{'conc':>5} | {'direct rps':>10} {'p50 ms':>7} {'p99 ms':>7} | {'gateway rps':>11} "
           f"{'p50 ms':>7} {'p99 ms':>7} | {'added p50':>9} {'added p99':>9} {'gw cpu/req':>10} {'errors':>6}")
    print()
    print(hdr)
    print("-" * len(hdr))
    for row in rows:
        d, g = row["direct"], row["gateway"]
        errors = g["non2xx"] + (1 if g["socket_errors"] else 0)
        print(f"{'stream' if row['stream'] else 'json':<10}{row['concurrency']:>5} | {d['rps']:>10.0f} {d['p50_ms']:>7.3f} "
              f"{d['p99_ms']:>7.3f} | {g['rps']:>11.0f} {g['p50_ms']:>7.3f} {g['p99_ms']:>7.3f} | "
              f"{g['p50_ms'] - d['p50_ms']:>+9.3f} {g['p99_ms'] - d['p99_ms']:>+9.3f} {g['gw_cpu_ms_per_req']:>8.3f}ms "
              f"{errors:>6}")
    d, g = first_tokens["direct"], first_tokens["gateway"]
    print(f"\nstreaming TTFT at concurrency 1 (n={args.ttft_samples}): direct p50 {d['ttft_p50_ms']:.3f} ms "
          f"p99 {d['ttft_p99_ms']:.3f} ms | gateway p50 {g['ttft_p50_ms']:.3f} ms p99 {g['ttft_p99_ms']:.3f} ms | "
          f"added p50 {g['ttft_p50_ms'] - d['ttft_p50_ms']:+.3f} ms")
    result = {"rows": rows, "ttft": first_tokens}
    (out_dir / "proxy_overhead.json").write_text(json.dumps(result, indent=2))
    _plot(rows, out_dir / "proxy_overhead.png")
    print(f"\nwrote {out_dir / 'proxy_overhead.json'} and {out_dir / 'proxy_overhead.png'}")


def _plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    labels = [f"{'stream' if r['stream'] else 'json'}\nc={r['concurrency']}" for r in rows]
    x = range(len(rows))
    for ax, key, title in ((axes[0], "rps", "requests/s"), (axes[1], "p50_ms", "p50 latency (ms)")):
        ax.bar([i - 0.2 for i in x], [r["direct"][key] for r in rows], 0.4, label="direct")
        ax.bar([i + 0.2 for i in x], [r["gateway"][key] for r in rows], 0.4, label="through gateway")
        ax.set_xticks(list(x), labels)
        ax.set_yscale("log")  # direct and proxied differ by an order of magnitude or more
        ax.set_title(title)
        ax.legend()
    fig.suptitle("Switchyard proxy overhead (gateway on one core)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
