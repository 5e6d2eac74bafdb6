"""Vector search for one cache namespace: exact (flat) while small, IVF past a measured size.

- Flat: `IndexIDMap2(IndexFlatIP)`, exact inner product (= cosine on L2-normalised vectors).
- IVF: `IndexIVFScalarQuantizer` with fp16 codes of the vectors themselves (not residuals; inner
  product) and a hash-table direct map, so `remove_ids` is O(removed) and entries can be deleted in
  place — unlike HNSW, which cannot remove. A search reads half the bytes of an `IndexIVFFlat`; at
  100k entries it took 0.31 ms against 0.44 ms p50 at the same top-1 recall, scores within 1e-4.
  Chosen over HNSW here: adds are cheap (no graph to extend), deletes are native, and the build of a
  1M index takes seconds rather than many minutes on 2 cores (numbers in docs/cache.md).

The index is re-built (re-trained, with `nlist` ~ 2·√N) in an executor thread whenever it has grown
4× since the last build; mutations that arrive meanwhile are replayed onto the new index before it
replaces the old one. All mutations and searches run on the event loop thread, so no lock is needed.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading

import faiss
import numpy as np

DIM = 384
# One query, 1 thread, p50 of a flat search: 4k 0.20 ms, 8k 0.98 ms, 16k 2.4 ms on a CPU without AVX2
# (earlier host: 10k 0.29 ms, 20k 1.1 ms, 50k 9.2 ms). Past a few MB of vectors the scan is bound by
# memory, so IVF from 4k; small IVF indexes probe enough lists to read MIN_SCAN vectors (see nprobe_for).
IVF_MIN_ENTRIES = int(os.environ.get("SWITCHYARD_CACHE_IVF_MIN", "4096"))
GROWTH_BEFORE_REBUILD = 4
DEFAULT_NPROBE = 16
MIN_SCAN = 2048

_threads_set = threading.Event()


def single_thread_search() -> None:
    """One query at a time: OpenMP threads only add overhead (2 threads were 25x slower here)."""
    if not _threads_set.is_set():
        faiss.omp_set_num_threads(1)
        _threads_set.set()


def nlist_for(n: int) -> int:
    """~2·√N lists (a power of two): 100k → 512, 1M → 2048. Fewer lists keep training and the
    assignment of 1M vectors to a couple of minutes on 2 cores; nprobe=16 still reads <1% of the data.
    At most N/39 (k-means wants ≥ 39 points per centroid): 4k → 64, 10k → 128."""
    lists = 2 ** round(math.log2(2 * math.sqrt(max(n, 1))))
    cap = 2 ** int(math.log2(max(n // 39, 1)))
    return int(min(65536, max(16, min(lists, cap)), max(n, 1)))  # never more lists than points to train


def nprobe_for(n: int, nlist: int, nprobe: int) -> int:
    """`nprobe`, raised so that a search reads ~MIN_SCAN vectors at least: at 10k entries 16 of 128
    lists would miss some neighbours that an exact scan finds (166 vs 168 of 400 bench hits), while
    reading 2k vectors costs about what a flat 2k index does (~0.1 ms)."""
    return int(min(nlist, max(nprobe, math.ceil(nlist * MIN_SCAN / max(n, 1)))))


def _as_matrix(vectors: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(vectors, dtype=np.float32).reshape(-1, DIM))


def _as_ids(ids) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(ids, dtype=np.int64).reshape(-1))


def build_index(ids: np.ndarray, vectors: np.ndarray, *, nprobe: int = DEFAULT_NPROBE,
                ivf_min: int | None = None) -> faiss.Index:
    """A fresh index holding (ids, vectors): flat below `ivf_min` entries, IVF at or above it."""
    ivf_min = IVF_MIN_ENTRIES if ivf_min is None else ivf_min
    n = len(ids)
    if n < ivf_min:
        index = faiss.IndexIDMap2(faiss.IndexFlatIP(DIM))
        if n:
            index.add_with_ids(_as_matrix(vectors), _as_ids(ids))
        return index
    nlist = nlist_for(n)
    quantizer = faiss.IndexFlatIP(DIM)
    index = faiss.IndexIVFScalarQuantizer(quantizer, DIM, nlist, faiss.ScalarQuantizer.QT_fp16,
                                          faiss.METRIC_INNER_PRODUCT, False)  # False: codes are the vectors
    vectors = _as_matrix(vectors)
    sample = min(n, nlist * 40)
    rng = np.random.default_rng(0)
    train = vectors if sample == n else vectors[rng.choice(n, sample, replace=False)]
    index.train(train)
    index.set_direct_map_type(faiss.DirectMap.Hashtable)
    index.add_with_ids(vectors, _as_ids(ids))
    index.nprobe = nprobe_for(n, nlist, nprobe)
    return index


def remove_ids(index: faiss.Index, ids: np.ndarray) -> int:
    """IVF with a hash-table direct map only takes an IDSelectorArray; flat indexes take a batch."""
    ids = _as_ids(ids)
    if isinstance(index, faiss.IndexIDMap2):
        return int(index.remove_ids(faiss.IDSelectorBatch(len(ids), faiss.swig_ptr(ids))))
    return int(index.remove_ids(faiss.IDSelectorArray(len(ids), faiss.swig_ptr(ids))))


def extract(index: faiss.Index) -> tuple[np.ndarray, np.ndarray]:
    """All (ids, vectors) an index holds, for a rebuild."""
    if isinstance(index, faiss.IndexIDMap2):
        n = index.ntotal
        ids = faiss.vector_to_array(index.id_map).astype(np.int64)
        vectors = index.index.reconstruct_n(0, n) if n else np.zeros((0, DIM), np.float32)
        return ids, np.asarray(vectors, dtype=np.float32)
    ivf = faiss.extract_index_ivf(index)
    invlists = ivf.invlists
    all_ids, all_vectors = [], []
    for list_no in range(ivf.nlist):
        size = invlists.list_size(list_no)
        if not size:
            continue
        ids = faiss.rev_swig_ptr(invlists.get_ids(list_no), size).copy()
        codes = faiss.rev_swig_ptr(invlists.get_codes(list_no), size * invlists.code_size).copy()
        all_ids.append(ids.astype(np.int64))
        all_vectors.append(codes.view(np.float16).reshape(size, DIM).astype(np.float32))
    if not all_ids:
        return np.zeros(0, np.int64), np.zeros((0, DIM), np.float32)
    return np.concatenate(all_ids), np.concatenate(all_vectors)


class VectorIndex:
    """The vectors of one namespace (tenant + request context)."""

    def __init__(self, *, nprobe: int = DEFAULT_NPROBE, ivf_min: int | None = None) -> None:
        self.nprobe = nprobe
        self.ivf_min = IVF_MIN_ENTRIES if ivf_min is None else ivf_min
        self._index = build_index(np.zeros(0, np.int64), np.zeros((0, DIM), np.float32), ivf_min=self.ivf_min)
        self._ids: set[int] = set()
        self._built_at = 0  # size at the last (re)build
        self._pending: list[tuple[str, object]] | None = None  # mutations during a rebuild
        self._rebuild_task: asyncio.Task | None = None

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, id_: int) -> bool:
        return id_ in self._ids

    @property
    def kind(self) -> str:
        return "flat" if isinstance(self._index, faiss.IndexIDMap2) else "ivf"

    @property
    def rebuilding(self) -> bool:
        return self._rebuild_task is not None and not self._rebuild_task.done()

    def load(self, ids, vectors) -> None:
        """Replace the contents in one go (a resync); trains an IVF when the size calls for one.
        Safe to run in an executor thread while the index is not yet published."""
        ids = _as_ids(ids)
        self._index = build_index(ids, _as_matrix(vectors), nprobe=self.nprobe, ivf_min=self.ivf_min)
        self._ids = set(ids.tolist())
        self._built_at = len(self._ids)

    def add(self, ids, vectors) -> None:
        ids = _as_ids(ids)
        vectors = _as_matrix(vectors)
        fresh = np.array([i not in self._ids for i in ids.tolist()], dtype=bool)
        if not fresh.all():  # re-adding an id (replica sync, import) replaces its vector
            self.remove(ids[~fresh])
        self._index.add_with_ids(vectors, ids)
        self._ids.update(ids.tolist())
        if self._pending is not None:
            self._pending.append(("add", (ids, vectors)))

    def remove(self, ids) -> int:
        ids = _as_ids([i for i in _as_ids(ids).tolist() if i in self._ids])
        if not len(ids):
            return 0
        removed = remove_ids(self._index, ids)
        self._ids.difference_update(ids.tolist())
        if self._pending is not None:
            self._pending.append(("remove", ids))
        return removed

    def clear(self) -> None:
        self._index = build_index(np.zeros(0, np.int64), np.zeros((0, DIM), np.float32), ivf_min=self.ivf_min)
        self._ids.clear()
        self._built_at = 0
        if self._pending is not None:
            self._pending.append(("clear", None))

    def search(self, vector: np.ndarray, k: int = 4) -> list[tuple[int, float]]:
        """Up to k (id, cosine) pairs, best first."""
        if not self._ids:
            return []
        single_thread_search()
        query = _as_matrix(vector)
        scores, ids = self._index.search(query, min(k, len(self._ids)))
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if i >= 0]

    def needs_rebuild(self) -> bool:
        n = len(self._ids)
        if n < self.ivf_min:
            return False
        return self.kind == "flat" or n >= GROWTH_BEFORE_REBUILD * max(self._built_at, 1)

    async def rebuild(self, executor=None) -> None:
        """Re-train and rebuild off the event loop; mutations made meanwhile are replayed. A call while a
        rebuild runs waits for that one (two at once would each replay, and clear, the other's log)."""
        running = self._rebuild_task
        if running is not None and not running.done() and running is not asyncio.current_task():
            await asyncio.shield(running)
            return
        if self._pending is not None:  # a direct call is rebuilding already
            return
        ids, vectors = extract(self._index)
        self._pending = []
        try:
            loop = asyncio.get_running_loop()
            fresh = await loop.run_in_executor(
                executor, lambda: build_index(ids, vectors, nprobe=self.nprobe, ivf_min=self.ivf_min))
            pending, self._pending = self._pending, None
            old = self._index
            self._index = fresh
            for op, arg in pending:
                if op == "add":
                    add_ids, add_vectors = arg  # type: ignore[misc]
                    present = np.array([self._index_has(i) for i in add_ids.tolist()], dtype=bool)
                    if present.any():
                        remove_ids(self._index, add_ids[present])
                    self._index.add_with_ids(add_vectors, add_ids)
                elif op == "remove":
                    remove_ids(self._index, arg)
                else:
                    self._index = build_index(np.zeros(0, np.int64), np.zeros((0, DIM), np.float32),
                                              ivf_min=self.ivf_min)
            self._built_at = len(self._ids)
            del old
        finally:
            self._pending = None

    def _index_has(self, id_: int) -> bool:
        # Ids added before the snapshot are in the fresh index; ids added after are not.
        try:
            self._index.reconstruct(int(id_))
            return True
        except RuntimeError:
            return False

    def schedule_rebuild(self, executor=None) -> None:
        if self.needs_rebuild() and not self.rebuilding:
            self._rebuild_task = asyncio.get_running_loop().create_task(self.rebuild(executor))

    def memory_bytes(self) -> int:
        """Vectors + ids held by FAISS (the IVF centroids and hash map add a little)."""
        return len(self._ids) * (DIM * (4 if self.kind == "flat" else 2) + 8)
