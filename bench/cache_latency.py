"""Semantic-cache lookup latency at 10k, 100k and 1M entries: encode + exact lookup + vector search +
entry fetch + near-miss guard, through the real CacheService (in-memory store, ONNX encoder).

What the index holds, per size:
- ~5,000 real entries with real vectors: the questions *and the near-misses* of the labelled groups
  (dev, held-out, then train until 5,000 distinct texts). The near-misses sit next to the questions
  (cosine ~0.8-0.95), so a lookup meets the competition real traffic brings: several candidates above
  the threshold, each read by the guard, most refused.
- synthetic entries for the rest: real embeddings plus noise (cosine ~0.5 to their anchor), so the
  IVF clusters are realistic; they are never candidates at 0.65.
Queries are paraphrases of those groups (distinct texts, none stored), encoded one at a time as requests
arrive (no batching help), as the gateway encodes the only request in flight: on the session whose
worker threads spin (the last line prints the encode with company, threads asleep, on this host). Each
size measures the queries twice, in four chunks that alternate which pass comes first (so a host that
drifts weighs on both), the guard having forgotten every text it read before each pass (the warm-up uses
texts that are not measured): every measured lookup reads its query cold, as new traffic does. The two
HIT columns:
- HIT: the stored texts were read for the guard when they were stored, as `CacheService.store` does;
- HIT cold entries: they were not (entries loaded at start: a resync reads vectors, not texts).
The table prints the guard calls per lookup and how many hits the p99 rests on.

    python bench/cache_latency.py [--sizes 10000,100000,1000000] [--queries 1500] [--plot bench/results/cache_latency.png]

Writes the HIT latency CDF per size and the encode/lookup split as a PNG (bench/results/cache_latency.png).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import faiss  # noqa: E402

from cache import guard, keys  # noqa: E402
from cache.encoder import Encoder  # noqa: E402
from cache.entry import CacheEntry, new_entry_id  # noqa: E402
from cache.evalset import load_groups  # noqa: E402
from cache.facts import analyse  # noqa: E402
from cache.index import single_thread_search  # noqa: E402
from cache.service import CacheService  # noqa: E402
from cache.stores.memory import MemoryStore  # noqa: E402
from policies.schema import CachePolicy  # noqa: E402

TENANT = "bench"
REAL_ENTRIES = 5000  # real texts stored per size (questions and near-misses)


def body(text: str) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": text}], "temperature": 0}


def synthetic(anchors: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    out = np.empty((n, anchors.shape[1]), np.float32)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        base = anchors[rng.integers(0, len(anchors), m)]
        noise = rng.standard_normal(base.shape).astype(np.float32) / np.sqrt(base.shape[1])
        v = base + 1.7 * noise
        out[start:start + m] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def make_entry(text: str, vector: np.ndarray, context: str, context_digest: str, i: int) -> CacheEntry:
    request_digest = keys.request_digest("chat", body(text))
    return CacheEntry(id=new_entry_id(), tenant=TENANT, endpoint="chat", request_model="m", model="m",
                      exact_key=keys.scoped(TENANT, request_digest), context_key=context, text=text, vector=vector,
                      response_text=f"cached answer number {i}, a sentence or two long like a short reply.",
                      finish_reason="stop", usage={"prompt_tokens": 12, "completion_tokens": 20},
                      created_at=time.time(), expires_at=time.time() + 86400,
                      request_digest=request_digest, context_digest=context_digest)


def cpu_summary() -> str:
    """The CPU the numbers belong to: the encoder's time depends on its vector instructions (docs/cache.md)."""
    import platform

    model, flags = platform.processor() or platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
    except OSError:
        pass
    vector = [name for name in ("avx2", "avx512f", "avx512_vnni", "amx_int8") if name in flags]
    return f"{model}, {os.cpu_count()} cores, {' '.join(vector) or 'no avx2'}"


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values) * 1000, q))


def rss_bytes() -> int:
    """Resident memory of this process (Linux), for the memory an index build really takes."""
    try:
        return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


async def run_size(n: int, encoder: Encoder, real_texts: list[str], real_vectors: np.ndarray, queries: list[str],
                   warmup: list[str], anchors: np.ndarray, policy: CachePolicy, bar: tqdm) -> dict:
    rng = np.random.default_rng(n)
    store = MemoryStore(max_entries=n + 10_000, max_bytes=1 << 40)
    calls = [0]
    check = guard.verify if policy.learned_verifier else guard.verify_rules

    def counted(query: str, cached: str):
        calls[0] += 1
        return check(query, cached)

    service = CacheService(store, encoder, verifier=counted)
    context = keys.context_key(TENANT, "chat", body("x"))
    context_digest = keys.context_digest("chat", body("x"))
    fill = synthetic(anchors, n - len(real_texts), rng)
    sampled = min(20_000, len(fill))  # memory per entry measured on the first 20k puts
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i, vector in enumerate(fill):  # straight into the store; the index is built once by resync()
        # each entry owns its vector (as a stored answer does), so the measured bytes include it
        await store.put(make_entry(f"synthetic question {i}", vector.copy(), context, context_digest, i))
        if i + 1 == sampled:
            store_bytes = (tracemalloc.get_traced_memory()[0] - before) / sampled
            tracemalloc.stop()
        if i % 20000 == 0:
            bar.set_postfix_str(f"{n:,}: filling store {i:,}")
    for i, (text, vector) in enumerate(zip(real_texts, real_vectors)):
        await store.put(make_entry(text, vector.copy(), context, context_digest, -i))
    bar.set_postfix_str(f"{n:,}: building index")
    del fill
    gc.collect()
    rss_before = rss_bytes()
    started = time.perf_counter()
    await service.start()  # resync: builds the namespace index (IVF trained in a thread when large)
    build_s = time.perf_counter() - started
    # The store was filled in one go; a gateway filling it over time would have run the garbage
    # collector's full passes along the way, not inside the measured lookups.
    gc.collect()
    index_rss = (rss_bytes() - rss_before) / n  # the index, its id set and the service's bookkeeping
    index = service._indexes[(TENANT, context)]
    index_bytes = faiss.serialize_index(index._index).nbytes / len(index)
    single_thread_search()

    async def measure(chunk: list[str], entries_read: bool) -> tuple[list, ...]:
        """A pass over `chunk`, every query read cold. `entries_read`: the stored texts were read for the
        guard when they were stored (`CacheService.store` does it, after the answer went out); else they
        are cold too, as entries loaded at start are at their first comparison."""
        guard.clear_text_caches()
        if entries_read:
            for text in real_texts:  # the synthetic entries are never candidates
                guard.prepare(text)
        for text in warmup:  # warms the code paths on texts that are not measured
            await service.lookup(TENANT, policy, "chat", body(text), await encoder.embed(text))
        calls[0] = 0
        misses = analyse.cache_info().misses
        encode_t, lookup_t, total_t, hit_total_t, results = [], [], [], [], []
        for text in chunk:
            t0 = time.perf_counter()
            vector = await encoder.embed(text, alone=True)  # one request in flight, as the gateway says
            t1 = time.perf_counter()
            look = await service.lookup(TENANT, policy, "chat", body(text), vector)
            t2 = time.perf_counter()
            encode_t.append(t1 - t0)
            lookup_t.append(t2 - t1)
            total_t.append(t2 - t0)
            results.append(look.result)
            if look.hit is not None:
                hit_total_t.append(t2 - t0)
            bar.update(1)
        return encode_t, lookup_t, total_t, hit_total_t, results, [calls[0]], [analyse.cache_info().misses - misses]

    # Both ways over the same queries, in 4 chunks whose order of the two passes alternates, so a host
    # that speeds up or slows down during the size weighs on both alike.
    measured = {True: ([], [], [], [], [], [], []), False: ([], [], [], [], [], [], [])}
    for c in range(4):
        chunk = queries[c::4]
        for entries_read in ((False, True) if c % 2 == 0 else (True, False)):
            for into, part in zip(measured[entries_read], await measure(chunk, entries_read)):
                into.extend(part)
    encode_t, lookup_t, total_t, hit_total_t, results, guard_calls_per_chunk, cold_reads = measured[True]
    cold_hit_t = measured[False][3]
    guard_calls = sum(guard_calls_per_chunk) / len(queries)
    reads = (sum(cold_reads) / len(queries), sum(measured[False][6]) / len(queries))  # texts the guard read cold
    # Flat exact search on the same vectors, for comparison with the IVF the service chose.
    flat_t = []
    if index.kind == "ivf" and n <= 200_000:
        from cache.index import extract

        ids, vecs = extract(index._index)
        flat = faiss.IndexFlatIP(vecs.shape[1])
        flat.add(vecs)
        for text in queries[:100]:
            q = (await encoder.embed(text))[None, :]
            t = time.perf_counter()
            flat.search(q, 4)
            flat_t.append(time.perf_counter() - t)
        del flat, vecs
    await service.aclose()
    service = store = None  # let the next size start without them
    gc.collect()
    return {
        "n": n, "kind": index.kind, "build_s": build_s, "hits": results.count("hit-semantic") + results.count("hit-exact"),
        "queries": len(queries), "encode_p50": pct(encode_t, 50), "encode_p99": pct(encode_t, 99),
        "lookup_p50": pct(lookup_t, 50), "lookup_p99": pct(lookup_t, 99),
        "total_p50": pct(total_t, 50), "total_p99": pct(total_t, 99),
        "hit_p50": pct(hit_total_t, 50) if hit_total_t else float("nan"),
        "hit_p99": pct(hit_total_t, 99) if hit_total_t else float("nan"),
        "cold_hit_p50": pct(cold_hit_t, 50) if cold_hit_t else float("nan"),
        "cold_hit_p99": pct(cold_hit_t, 99) if cold_hit_t else float("nan"),
        "flat_p50": pct(flat_t, 50) if flat_t else None, "guard_calls": guard_calls, "cold_reads": reads,
        "index_bytes": index_bytes, "index_rss": index_rss, "store_bytes": store_bytes,
        "hit_ms": [t * 1000 for t in hit_total_t], "cold_hit_ms": [t * 1000 for t in cold_hit_t],
        "encode_ms": [t * 1000 for t in encode_t],
        "lookup_ms": [t * 1000 for t in lookup_t],
    }


async def spinning_gain(encoder: Encoder, texts: list[str]) -> tuple[float, float]:
    """Encode p50 (ms) for the only request in flight (the session with spinning threads) and with
    company (the batcher's session, threads asleep), alternating which goes first over the same texts."""
    alone, company = [], []
    for i, text in enumerate(texts):
        for way in ((True, False) if i % 2 == 0 else (False, True)):
            t0 = time.perf_counter()
            await encoder.embed(text, alone=way)
            (alone if way else company).append(time.perf_counter() - t0)
    return pct(alone, 50), pct(company, 50)


def plot(rows: list[dict], path: Path) -> None:
    """Left: the CDF of HIT latency (encode + lookup) per index size, entries read when stored (solid) and
    cold (dashed), with the done-when's p50/p99 lines.
    Right: where a request's time goes (encode vs lookup, p50) and the HIT p99, per size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (cdf, parts) = plt.subplots(1, 2, figsize=(12, 4.2))
    for r, color in zip(rows, ("tab:blue", "tab:orange", "tab:green", "tab:red")):
        for ms, style, note in ((r["hit_ms"], "-", ""), (r["cold_hit_ms"], "--", ", cold entries")):
            hits = np.sort(ms)
            if len(hits):
                cdf.plot(hits, np.arange(1, len(hits) + 1) / len(hits), style, color=color,
                         label=f"{r['n']:,} entries ({r['kind']}{note})")
    cdf.axvline(5, color="grey", ls="--", lw=0.8)
    cdf.axvline(15, color="grey", ls=":", lw=0.8)
    cdf.axhline(0.5, color="grey", lw=0.5)
    cdf.axhline(0.99, color="grey", lw=0.5)
    cdf.set_xscale("log")
    ticks = [2, 3, 4, 5, 7, 10, 15, 20, 30]
    cdf.set_xticks(ticks, [str(t) for t in ticks])
    cdf.minorticks_off()
    cdf.set_xlabel("HIT latency, encode + lookup (ms, log)")
    cdf.set_ylabel("fraction of hits")
    cdf.set_title("cache hit latency (targets at 100k: p50 ≤ 5 ms, p99 ≤ 15 ms)")
    cdf.legend(fontsize=8)
    cdf.grid(alpha=0.3)
    x = np.arange(len(rows))
    enc = [np.percentile(r["encode_ms"], 50) for r in rows]
    look = [np.percentile(r["lookup_ms"], 50) for r in rows]
    parts.bar(x, enc, 0.5, color="tab:blue", label="encode p50")
    parts.bar(x, look, 0.5, bottom=enc, color="tab:orange", label="lookup p50 (search + fetch + guard)")
    p99 = [np.percentile(r["hit_ms"], 99) if r["hit_ms"] else np.nan for r in rows]
    parts.plot(x, p99, "k_", ms=30, mew=2, label="HIT p99")
    parts.set_ylim(0, np.nanmax([*p99, *(e + lk for e, lk in zip(enc, look))]) * 1.45)  # room for the legend
    parts.set_xticks(x, [f"{r['n']:,}" for r in rows])
    parts.set_xlabel("entries in the namespace")
    parts.set_ylabel("ms")
    parts.set_title("where a request's time goes")
    parts.legend(fontsize=8, loc="upper left")
    parts.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=1500, help="distinct paraphrases measured per size")
    parser.add_argument("--rules-only", action="store_true",
                        help="guard without the learned verifier (learned_verifier: false), for comparison")
    parser.add_argument("--plot", default=str(Path(__file__).parent / "results" / "cache_latency.png"),
                        help="where to write the latency plot ('' for none)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sizes = [int(s) for s in args.sizes.split(",")]
    encoder = Encoder.load()
    real_texts, paraphrases, seen = [], [], set()
    for group in [*load_groups("dev"), *load_groups("heldout"), *load_groups("train")]:
        if len(real_texts) >= REAL_ENTRIES:
            break
        for text in [group.query, *(t for _, t in group.near_misses)]:
            if text not in seen:
                seen.add(text)
                real_texts.append(text)
        paraphrases += group.paraphrases
    pool = list(dict.fromkeys(p for p in paraphrases if p not in seen))
    order = np.random.default_rng(0).permutation(len(pool))
    warmup = [pool[i] for i in order[:20]]  # never measured
    queries = [pool[i] for i in order[20:20 + args.queries]]
    bar_note = f"{len(real_texts):,} real entries, {len(queries):,} queries"
    tqdm.write(f"encoding {bar_note} ...")
    real_vectors = encoder.embed_many(real_texts)
    anchors = real_vectors
    policy = CachePolicy(learned_verifier=not args.rules_only)
    rows = []
    with tqdm(total=2 * len(sizes) * len(queries), desc="lookups", unit="q") as bar:
        for n in sizes:
            rows.append(await run_size(n, encoder, real_texts, real_vectors, queries, warmup, anchors, policy, bar))
    alone, company = await spinning_gain(encoder, queries[:300])
    print(f"\ncpu: {cpu_summary()}")
    print(f"encoder: {encoder.backend} {getattr(encoder.runtime, 'precision', '')} "
          f"{getattr(encoder.runtime, 'providers', '')}, threshold {policy.threshold}, "
          f"guard {'on' if policy.verify else 'off'} ({'rules + learned verifier' if policy.learned_verifier else 'rules only'}), "
          f"{bar_note} per size, one at a time; every query read cold by the guard, the stored texts read "
          f"when stored (HIT cold entries: not read before, as entries loaded at start)")
    print(f"{'entries':>9} | {'index':>5} | {'build s':>7} | {'encode p50/p99 ms':>17} | {'lookup p50/p99 ms':>17} | "
          f"{'total p50/p99 ms':>16} | {'HIT p50/p99 ms':>14} | {'HIT cold entries':>16} | {'hits':>9} | {'guard/lookup':>12} | "
          f"{'cold reads/lookup':>17} | "
          f"{'flat search p50':>15} | {'index B/entry':>13} | {'index RSS B/entry':>17} | {'store B/entry':>13}")
    print("-" * 247)
    for r in rows:
        flat = f"{r['flat_p50']:.2f} ms" if r["flat_p50"] is not None else "-"
        print(f"{r['n']:>9,} | {r['kind']:>5} | {r['build_s']:>7.1f} | {r['encode_p50']:>7.2f} / {r['encode_p99']:>6.2f} | "
              f"{r['lookup_p50']:>7.2f} / {r['lookup_p99']:>6.2f} | {r['total_p50']:>6.2f} / {r['total_p99']:>6.2f} | "
              f"{r['hit_p50']:>5.2f} / {r['hit_p99']:>5.2f} | {r['cold_hit_p50']:>6.2f} / {r['cold_hit_p99']:>6.2f} | "
              f"{r['hits']:>4}/{r['queries']:<4} | {r['guard_calls']:>12.2f} | "
              f"{r['cold_reads'][0]:>7.2f} / {r['cold_reads'][1]:>7.2f} | "
              f"{flat:>15} | {r['index_bytes']:>13,.0f} | {r['index_rss']:>17,.0f} | {r['store_bytes']:>13,.0f}")
    print("lookup = exact-key get + FAISS search + entry fetch + guard; total = encode + lookup; "
          "HIT = total over lookups that were served from the cache (p99 over the hits counted in 'hits'); "
          "guard/lookup = candidates the guard read per lookup; cold reads/lookup = texts the guard analysed "
          "cold per lookup, entries read when stored / cold entries; index B/entry = serialized, index RSS = "
          "resident memory the build added (index, ids, service bookkeeping); store B/entry = entry with its "
          "own vector, in the in-memory store")
    print(f"encode is measured as the gateway encodes the only request in flight (worker threads spinning); "
          f"with company (the batcher's session, threads asleep), same {min(300, len(queries))} queries, "
          f"alternating: p50 {company:.2f} ms against {alone:.2f} ms")
    if args.plot:
        plot(rows, Path(args.plot))
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    asyncio.run(main())
