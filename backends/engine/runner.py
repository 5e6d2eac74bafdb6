"""Forward passes with KV caches that can be rolled back, batched over many sequences.

Two implementations behind one interface (`SequenceCache`, `forward_batch`, `forward`):

- **GPT-2 family (the shipped models): our own batched forward pass.** Every model gets a
  slot-based KV store (`KVStore`: per layer, preallocated `[slots, heads, max_len, head_dim]`);
  a sequence owns one slot while it lives. `forward_batch` packs the new tokens of many sequences
  (decode tokens, speculative verify windows and prefill chunks of any length) into one token
  stream, runs the linear layers once over all of them, writes their K/V into the slots and runs
  attention per group of rows (rows padded to the group's longest query; a per-row mask hides other
  rows' padding and each row's stale cache entries past its length). Rolling back rejected draft
  tokens is just lowering the row's length: stale entries are masked and overwritten later.
  The weights are the Hugging Face model's own tensors (no copy).
- **Any other architecture: transformers' `DynamicCache`, one forward per sequence** (the batch
  is run row by row). Correct everywhere, batched nowhere.

Why not transformers 5's continuous-batching / paged-attention path: it brings its own request
loop and scheduler (`generate_batch` / its manager) instead of sitting behind ours, and has no
per-row KV rollback for speculative decoding; see docs/scheduling.md.
"""

from __future__ import annotations

import math
import threading
import weakref
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from backends.engine.loader import LoadedModel


# ------------------------------------------------------------------------------------- KV store


class KVStore:
    """Per-model K/V for up to `slots` sequences; grows (doubling) when every slot is taken."""

    def __init__(self, n_layer: int, heads: int, max_len: int, head_dim: int, dtype, device, slots: int = 8) -> None:
        self.shape = (n_layer, heads, max_len, head_dim)
        self.dtype, self.device = dtype, device
        self.k = [torch.zeros(slots, heads, max_len, head_dim, dtype=dtype, device=device) for _ in range(n_layer)]
        self.v = [torch.zeros(slots, heads, max_len, head_dim, dtype=dtype, device=device) for _ in range(n_layer)]
        self._free = list(range(slots - 1, -1, -1))
        self._lock = threading.Lock()

    @property
    def slots(self) -> int:
        return self.k[0].shape[0]

    def alloc(self) -> int:
        with self._lock:
            if not self._free:
                self._grow(2 * self.slots)
            slot = min(self._free)
            self._free.remove(slot)
            return slot

    def reserve(self, slots: int) -> bool:
        """Hold at least `slots` slots from now on; True if the store grew. Growing copies the whole
        store (~0.25 s for 8 -> 16 slots of the shipped target on this CPU), so engines reserve what
        they will use at start instead of paying that inside a step."""
        with self._lock:
            if slots <= self.slots:
                return False
            self._grow(slots)
            return True

    def _grow(self, slots: int) -> None:
        n = self.slots
        extra = (slots - n, *self.k[0].shape[1:])
        # zeros, not empty: masked positions still enter attention as 0-weighted values, and NaN * 0 is NaN
        self.k = [torch.cat([t, t.new_zeros(extra)]) for t in self.k]
        self.v = [torch.cat([t, t.new_zeros(extra)]) for t in self.v]
        self._free.extend(range(slots - 1, n - 1, -1))

    @property
    def bytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (*self.k, *self.v))

    def release(self, slot: int) -> None:
        with self._lock:
            self._free.append(slot)

    @property
    def in_use(self) -> int:
        return self.slots - len(self._free)


# ------------------------------------------------------------------------------ batched GPT-2


class BatchedGPT2:
    """A GPT-2 forward pass over packed ragged rows, reading the HF model's weights."""

    def __init__(self, lm: LoadedModel) -> None:
        model = lm.model
        cfg = model.config
        tr = model.transformer
        self.n_layer, self.n_head, self.n_embd = cfg.n_layer, cfg.n_head, cfg.n_embd
        self.head_dim = cfg.n_embd // cfg.n_head
        self.eps = cfg.layer_norm_epsilon
        self.scale = 1.0 / math.sqrt(self.head_dim) if cfg.scale_attn_weights else 1.0
        self.wte, self.wpe = tr.wte.weight, tr.wpe.weight
        self.blocks = [
            (b.ln_1.weight, b.ln_1.bias, b.attn.c_attn.weight, b.attn.c_attn.bias, b.attn.c_proj.weight,
             b.attn.c_proj.bias, b.ln_2.weight, b.ln_2.bias, b.mlp.c_fc.weight, b.mlp.c_fc.bias,
             b.mlp.c_proj.weight, b.mlp.c_proj.bias)
            for b in tr.h
        ]
        self.lnf = (tr.ln_f.weight, tr.ln_f.bias)
        self.head = model.lm_head.weight
        self.max_len = lm.context_length
        self.store = KVStore(self.n_layer, self.n_head, self.max_len, self.head_dim, self.wte.dtype, self.wte.device)

    @staticmethod
    def supports(lm: LoadedModel) -> bool:
        cfg = lm.model.config
        return (
            getattr(cfg, "model_type", "") == "gpt2"
            and cfg.activation_function in ("gelu_new", "gelu_pytorch_tanh")
            and not getattr(cfg, "scale_attn_by_inverse_layer_idx", False)
            and not getattr(cfg, "reorder_and_upcast_attn", False)
            and not getattr(cfg, "add_cross_attention", False)
            and hasattr(lm.model, "transformer")
        )

    def _groups(self, slots: list[int], starts: list[int], lens: list[int], offsets: list[int], device):
        """Split rows into attention groups (similar query lengths, bounded padding) and build each
        group's index tensors and mask once per call (shared by every layer).

        A group covers a contiguous range of KV slots, so its keys and values are a view of the
        store (no gather copy); rows of slots in that range that are not in the group are dummies
        (computed, ignored). Groups whose slots are too scattered gather instead."""
        order = sorted(range(len(lens)), key=lambda i: -lens[i])
        groups: list[list[int]] = []
        for i in order:
            g = groups[-1] if groups else None
            if g is not None:
                q = lens[g[0]]  # longest in the group (sorted descending)
                used = sum(lens[j] for j in g) + lens[i]
                if (len(g) + 1) * q <= 2 * used + 32:
                    g.append(i)
                    continue
            groups.append([i])
        out = []
        for g in groups:
            q = lens[g[0]]
            kv_len = max(starts[i] + lens[i] for i in g)
            lo, hi = min(slots[i] for i in g), max(slots[i] for i in g)
            if hi - lo + 1 <= 2 * len(g) + 2:
                place = {i: slots[i] - lo for i in g}
                b, view = hi - lo + 1, (lo, hi + 1)
            else:
                place = {i: j for j, i in enumerate(g)}
                b, view = len(g), None
            row_start = [0] * b
            for i in g:
                row_start[place[i]] = starts[i]
            src = torch.cat([torch.arange(offsets[i], offsets[i] + lens[i], device=device) for i in g])
            dst = torch.cat([torch.arange(place[i] * q, place[i] * q + lens[i], device=device) for i in g])
            dense = b * q == len(src) and bool(torch.equal(src, dst)) and len(src) == sum(lens)
            gather = None if view is not None else torch.tensor([slots[i] for i in g], device=device)
            qi = torch.arange(q, device=device)
            kj = torch.arange(kv_len, device=device)
            rs = torch.tensor(row_start, device=device)
            mask = kj[None, None, :] <= (rs[:, None, None] + qi[None, :, None])  # [b, q, kv]
            out.append((b, q, kv_len, src, dst, dense, view, gather, mask.unsqueeze(1)))
        return out

    def forward(self, slots: list[int], starts: list[int], feeds: list[list[int]], keeps: list[int]) -> list[torch.Tensor | None]:
        dev = self.wte.device
        lens = [len(f) for f in feeds]
        offsets, t = [], 0
        for n in lens:
            offsets.append(t)
            t += n
        tokens = torch.tensor([x for f in feeds for x in f], dtype=torch.long, device=dev)
        pos = torch.cat([torch.arange(s, s + n, device=dev) for s, n in zip(starts, lens, strict=True)])
        slot_t = torch.tensor([s for s, n in zip(slots, lens, strict=True) for _ in range(n)], dtype=torch.long, device=dev)
        groups = self._groups(slots, starts, lens, offsets, dev)
        H, D, E = self.n_head, self.head_dim, self.n_embd
        x = self.wte[tokens] + self.wpe[pos]
        for layer, (l1w, l1b, aw, ab, pw, pb, l2w, l2b, fw, fb, mw, mb) in enumerate(self.blocks):
            h = F.layer_norm(x, (E,), l1w, l1b, self.eps)
            qkv = torch.addmm(ab, h, aw)
            q, k, v = qkv.split(E, dim=1)
            kc, vc = self.store.k[layer], self.store.v[layer]
            kc[slot_t, :, pos] = k.view(t, H, D)
            vc[slot_t, :, pos] = v.view(t, H, D)
            q = q.reshape(t, H, D)
            attn = None if len(groups) == 1 and groups[0][5] else x.new_empty(t, E)
            for b, ql, kv_len, src, dst, dense, view, gather, mask in groups:
                if view is not None:
                    kk, vv = kc[view[0] : view[1], :, :kv_len], vc[view[0] : view[1], :, :kv_len]
                else:
                    kk, vv = kc[gather, :, :kv_len], vc[gather, :, :kv_len]
                if dense:
                    qq = q.view(b, ql, H, D)
                else:
                    qq = q.new_zeros(b * ql, H, D)
                    qq[dst] = q[src]
                    qq = qq.view(b, ql, H, D)
                o = F.scaled_dot_product_attention(qq.transpose(1, 2), kk, vv, attn_mask=mask, scale=self.scale)
                o = o.transpose(1, 2).reshape(b * ql, E)
                if attn is None:
                    attn = o
                else:
                    attn[src] = o[dst]
            x = x + torch.addmm(pb, attn, pw)
            h = F.layer_norm(x, (E,), l2w, l2b, self.eps)
            h = F.gelu(torch.addmm(fb, h, fw), approximate="tanh")
            x = x + torch.addmm(mb, h, mw)
        want = [(o + n - kp, kp) for o, n, kp in zip(offsets, lens, keeps, strict=True)]
        idx = [i for o, kp in want for i in range(o, o + kp)]
        if not idx:
            return [None] * len(feeds)
        hs = F.layer_norm(x[torch.tensor(idx, device=dev)], (E,), *self.lnf, self.eps)
        logits = (hs @ self.head.T).float()
        res, at = [], 0
        for _, kp in want:
            res.append(logits[at : at + kp] if kp else None)
            at += kp
        return res


def reserve(lm: LoadedModel, slots: int) -> tuple[KVStore, bool] | None:
    """Size `lm`'s KV store for `slots` concurrent sequences now; returns the store and whether it grew
    (None for models on the transformers fallback, whose caches grow per sequence)."""
    runner = _batched(lm)
    if runner is None:
        return None
    return runner.store, runner.store.reserve(slots)


def _batched(lm: LoadedModel) -> BatchedGPT2 | None:
    if lm.runner is None:
        lm.runner = BatchedGPT2(lm) if BatchedGPT2.supports(lm) else False
    return lm.runner or None


# ------------------------------------------------------------------------------ the interface


class SequenceCache:
    """One sequence's KV cache for one model, with the number of tokens it holds: a slot of the
    model's KV store (batched GPT-2) or a transformers DynamicCache (anything else)."""

    __slots__ = ("lm", "slot", "cache", "length", "_release", "__weakref__")

    def __init__(self, lm: LoadedModel) -> None:
        self.lm = lm
        self.length = 0
        self.cache = None
        self.slot = -1
        self._release = None
        runner = _batched(lm)
        if runner is not None:
            self.slot = runner.store.alloc()
            self._release = weakref.finalize(self, runner.store.release, self.slot)
        else:
            from transformers import DynamicCache

            self.cache = DynamicCache(config=lm.model.config)

    def close(self) -> None:
        """Give the slot back now (else when the object is collected)."""
        if self._release is not None:
            self._release()

    def rollback(self, n: int) -> None:
        """Forget the last `n` tokens (rejected draft tokens)."""
        if n <= 0:
            return
        if n > self.length:
            raise ValueError(f"cannot roll back {n} tokens from a cache of {self.length}")
        self.length -= n
        if self.cache is not None:
            self.cache.crop(-n)
            got = self.cache.get_seq_length()
            if got != self.length:  # a transformers version with other crop semantics would land here
                raise RuntimeError(f"KV cache rollback left {got} tokens, expected {self.length}")


@dataclass(slots=True)
class Row:
    """One sequence's part of a batched forward pass: feed `ids` after what `seq` holds, return
    logits for the last `keep` of them (0: none, prefill-only chunk)."""

    seq: SequenceCache
    ids: list[int]
    keep: int


@torch.inference_mode()
def forward_batch(lm: LoadedModel, rows: list[Row]) -> list[torch.Tensor | None]:
    """One forward pass of `lm` over every row (rows must belong to distinct sequences); returns
    fp32 logits per row (keep x vocab) or None where keep is 0. Caller holds `lm.lock`."""
    result: list[torch.Tensor | None] = [None] * len(rows)
    live = [i for i, r in enumerate(rows) if r.ids]
    if not live:
        return result
    runner = _batched(lm)
    if runner is None:
        for i in live:
            result[i] = _forward_hf(lm, rows[i].seq, rows[i].ids, rows[i].keep)
        return result
    fed = [rows[i] for i in live]
    for r in fed:
        if r.seq.length + len(r.ids) > runner.max_len:
            raise ValueError(f"sequence of {r.seq.length + len(r.ids)} tokens exceeds the context length {runner.max_len}")
    out = runner.forward([r.seq.slot for r in fed], [r.seq.length for r in fed], [r.ids for r in fed], [r.keep for r in fed])
    for i, r, o in zip(live, fed, out, strict=True):
        r.seq.length += len(r.ids)
        result[i] = o
    return result


def _forward_hf(lm: LoadedModel, seq: SequenceCache, ids: list[int], keep: int) -> torch.Tensor | None:
    x = torch.tensor([ids], dtype=torch.long, device=lm.device)
    kwargs = {lm.cache_arg: seq.cache}
    if lm.supports_logits_to_keep:
        kwargs["logits_to_keep"] = max(1, keep)
    out = lm.model(x, use_cache=True, **kwargs)
    seq.length += len(ids)
    return out.logits[0, -keep:].float() if keep else None


def forward(lm: LoadedModel, seq: SequenceCache, ids: list[int], keep: int | None = None) -> torch.Tensor:
    """Feed `ids` after what `seq` holds; return fp32 logits for the last `keep` fed tokens (all
    when None), one row each. Prefill keeps 1 so a long prompt never materialises prompt x vocab."""
    out = forward_batch(lm, [Row(seq, list(ids), len(ids) if keep is None else min(keep, len(ids)))])
    return out[0]
