"""Train the shipped tokenizer, target model and distilled draft model from the stdlib's source.

    python -m backends.models.train                 # all stages, ~30 min on a 2-core CPU
    python -m backends.models.train --stage draft   # redo only the distillation

Stages (each reads the previous one's output from disk, so any can be rerun alone):

1. tokenizer: byte-level BPE (`tokenizers`) with chat special tokens and a chat template.
2. target: a deep, narrow GPT-2 (16 layers x 128 wide). On a CPU a forward pass at this size costs
   mostly per-layer overhead, so depth makes the target expensive per pass relative to the draft,
   which is what lets speculative decoding pay off.
3. generate: the target's own greedy continuations of training prompts, with its top-k logits at
   every position: the exact distribution the draft will be asked to predict at inference time.
4. draft: a 1-layer GPT-2 initialised from the target's embeddings, first block and final norm,
   distilled on (3) with soft cross-entropy against the target's logits plus hard cross-entropy
   against its argmax (greedy speculation only pays when the argmaxes agree).

Everything is seeded; outputs go to backends/models/{target,draft} as fp16 safetensors (loaded as
fp32 on CPU) plus tokenizer files and a TRAINING.json manifest with the settings and final losses.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from backends.models import corpus

MODELS_DIR = Path(__file__).resolve().parent
SPECIAL_TOKENS = ["<|endoftext|>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]
EOT, END, ASSISTANT = "<|endoftext|>", "<|end|>", "<|assistant|>"

# Unknown roles (tool, developer, ...) render as user/system so the model only sees roles it knows.
CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{%- set role = message['role'] if message['role'] in ['system', 'user', 'assistant'] "
    "else ('system' if message['role'] == 'developer' else 'user') -%}"
    "{{ '<|' + role + '|>\\n' + message['content'] + '<|end|>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|assistant|>\\n' }}{%- endif -%}"
)


def chat_text(user: str, assistant: str) -> str:
    """A training chat example, byte-identical to what CHAT_TEMPLATE renders plus the answer."""
    return f"<|user|>\n{user}<|end|>\n<|assistant|>\n{assistant}<|end|>\n"


def documents(files: list[corpus.SourceFile], seed: int) -> list[str]:
    docs = [f.text for f in files]
    docs += [chat_text(u, a) for f in files for u, a in corpus.chat_pairs(f.text)]
    random.Random(seed).shuffle(docs)
    return docs


# ---------------------------------------------------------------- stage 1: tokenizer


def train_tokenizer(files: list[corpus.SourceFile], out: Path, vocab_size: int, seed: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=True,
    )
    tok.train_from_iterator(documents(files, seed), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token=EOT, eos_token=END, pad_token=EOT, unk_token=None
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.model_max_length = 512
    out.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(out)
    return fast


def encode_stream(tokenizer, docs: list[str]) -> np.ndarray:
    """All documents as one token stream separated by <|endoftext|> (uint16: vocab < 65536)."""
    eot = tokenizer.convert_tokens_to_ids(EOT)
    ids: list[int] = []
    for i in tqdm(range(0, len(docs), 256), desc="encode", unit="batch"):
        for enc in tokenizer(docs[i : i + 256], add_special_tokens=False)["input_ids"]:
            ids.extend(enc)
            ids.append(eot)
    return np.asarray(ids, dtype=np.uint16)


# ---------------------------------------------------------------- stage 2: target


def target_config(tokenizer, layers: int, width: int, heads: int, context: int):
    from transformers import GPT2Config

    return GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=context,
        n_embd=width,
        n_layer=layers,
        n_head=heads,
        n_inner=4 * width,
        activation_function="gelu_new",
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=tokenizer.convert_tokens_to_ids(EOT),
        eos_token_id=tokenizer.convert_tokens_to_ids(END),
        # No pad_token_id: the engine never pads, and with one set transformers warns whenever
        # <|endoftext|> appears in an input.
        tie_word_embeddings=True,
    )


def lr_at(step: int, total: int, peak: float, warmup: int) -> float:
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def windows(stream: np.ndarray, rng: np.random.Generator, batch: int, length: int) -> torch.Tensor:
    starts = rng.integers(0, len(stream) - length - 1, size=batch)
    return torch.from_numpy(np.stack([stream[s : s + length].astype(np.int64) for s in starts]))


@torch.no_grad()
def heldout_loss(model, stream: np.ndarray, seed: int, n: int = 32, length: int = 256) -> float:
    rng = np.random.default_rng(seed + 1)
    model.eval()
    losses = []
    for _ in range(n // 8):
        x = windows(stream, rng, 8, length)
        losses.append(model(x, labels=x).loss.item())
    model.train()
    return float(np.mean(losses))


def train_target(tokenizer, train_stream, held_stream, args) -> dict:
    from transformers import GPT2LMHeadModel

    torch.manual_seed(args.seed)
    config = target_config(tokenizer, args.target_layers, args.target_width, args.target_heads, args.context)
    model = GPT2LMHeadModel(config)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=args.target_lr, betas=(0.9, 0.95), weight_decay=0.1)
    rng = np.random.default_rng(args.seed)
    tokens_per_step = args.batch * 256
    # Most steps at 256 tokens (cheaper attention); the last quarter at full context so every
    # position embedding up to the context length is trained.
    long_from = int(args.target_steps * 0.75)
    bar = tqdm(range(args.target_steps), desc="target", unit="step")
    ema = None
    for step in bar:
        length = 256 if step < long_from else args.context
        x = windows(train_stream, rng, tokens_per_step // length, length)
        for group in opt.param_groups:
            group["lr"] = lr_at(step, args.target_steps, args.target_lr, 60)
        with torch.autocast("cpu", dtype=torch.bfloat16):  # ~1.7x faster on AVX512-BF16 CPUs
            loss = model(x, labels=x).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        ema = loss.item() if ema is None else 0.98 * ema + 0.02 * loss.item()
        bar.set_postfix(loss=f"{ema:.3f}")
    model.eval()
    return {"model": model, "train_loss": ema, "heldout_loss": heldout_loss(model, held_stream, args.seed)}


def save_model(model, tokenizer, out: Path, manifest: dict) -> None:
    from transformers import GenerationConfig

    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("*.safetensors"):
        stale.unlink()
    model.to(torch.float16).save_pretrained(out, safe_serialization=True)  # halves the commit size
    model.to(torch.float32)
    GenerationConfig(
        bos_token_id=tokenizer.convert_tokens_to_ids(EOT),
        eos_token_id=[tokenizer.convert_tokens_to_ids(END), tokenizer.convert_tokens_to_ids(EOT)],
        pad_token_id=tokenizer.convert_tokens_to_ids(EOT),
        do_sample=False,
    ).save_pretrained(out)
    tokenizer.save_pretrained(out)
    (out / "TRAINING.json").write_text(json.dumps(manifest, indent=2) + "\n")


# ---------------------------------------------------------------- stage 3: generate


@torch.no_grad()
def generate_distill_data(target, tokenizer, stream: np.ndarray, args) -> list[dict[str, torch.Tensor]]:
    """Greedy continuations by the target, with its top-k logits at every position.

    A third of the prompts end exactly after `<|assistant|>\\n`, so the draft learns how the target
    starts chat answers; the rest are random windows of code. Prompts in one batch share a length,
    so no padding is needed.
    """
    from transformers import DynamicCache

    rng = np.random.default_rng(args.seed + 2)
    asst = tokenizer.convert_tokens_to_ids(ASSISTANT)
    answer_starts = np.flatnonzero(stream == asst) + 2  # skip "<|assistant|>" and the "\n" after it
    answer_starts = answer_starts[answer_starts > 200]
    n_batches = args.distill_seqs // args.gen_batch
    batches = []
    for b in tqdm(range(n_batches), desc="generate", unit="batch"):
        plen = int(rng.integers(16, 161))
        if b % 3 == 0:
            ends = rng.choice(answer_starts, size=args.gen_batch)
            prompt = torch.from_numpy(np.stack([stream[e - plen : e].astype(np.int64) for e in ends]))
        else:
            prompt = windows(stream, rng, args.gen_batch, plen)
        cache = DynamicCache(config=target.config)
        logits = target(prompt, cache=cache, use_cache=True).logits.float()
        seq_logits = [logits]
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        generated = [nxt]
        for _ in range(args.gen_tokens - 1):
            logits = target(nxt, cache=cache, use_cache=True).logits.float()
            seq_logits.append(logits)
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            generated.append(nxt)
        full = torch.cat([prompt] + generated, dim=1)  # (B, plen + G)
        lg = torch.cat(seq_logits, dim=1)  # (B, plen + G - 1, V): row j predicts full[:, j + 1]
        lp, ix = torch.log_softmax(lg, -1).topk(args.distill_topk, dim=-1)
        # One entry per generation batch: rows share a length, so training needs no padding.
        batches.append({"tokens": full, "top_lp": lp.half(), "top_ix": ix.to(torch.int16)})
    return batches


# ---------------------------------------------------------------- stage 4: draft


def draft_from_target(target, layers: int):
    from transformers import GPT2Config, GPT2LMHeadModel

    draft = GPT2LMHeadModel(GPT2Config(**{**target.config.to_dict(), "n_layer": layers}))
    # Embeddings, the first `layers` blocks and the final norm of the target are the best start we
    # have: the draft begins already speaking the target's representation.
    keep = tuple(f"transformer.h.{i}." for i in range(layers))
    state = {
        k: v
        for k, v in target.state_dict().items()
        if not k.startswith("transformer.h.") or k.startswith(keep)
    }
    draft.load_state_dict(state, strict=False)
    draft.tie_weights()
    return draft


def distill_loss(draft, tokens, top_lp, top_ix, gen_tokens: int) -> torch.Tensor:
    logq = torch.log_softmax(draft(tokens).logits[:, : top_ix.shape[1]].float(), -1)
    p = torch.softmax(top_lp.float(), -1)  # renormalised top-k of the target
    soft = -(p * logq.gather(-1, top_ix.long())).sum(-1)
    hard = -logq.gather(-1, top_ix[..., :1].long()).squeeze(-1)  # top-1 = the target's greedy pick
    # The continuation (the target's own outputs) is what the draft meets at inference: weight it up.
    weight = torch.ones_like(soft)
    weight[:, -gen_tokens:] = 2.0
    return ((soft + hard) * weight).sum() / weight.sum()


@torch.no_grad()
def agreement(draft, batches, gen_tokens: int) -> float:
    """Fraction of continuation positions where the draft's argmax equals the target's."""
    hits = total = 0
    for b in batches:
        pred = draft(b["tokens"]).logits[:, : b["top_ix"].shape[1]].argmax(-1)[:, -gen_tokens:]
        hits += (pred == b["top_ix"][:, -gen_tokens:, 0].long()).sum().item()
        total += pred.numel()
    return hits / max(1, total)


def train_draft(target, data, held_data, args) -> dict:
    torch.manual_seed(args.seed + 3)
    draft = draft_from_target(target, args.draft_layers)
    draft.train()
    opt = torch.optim.AdamW(draft.parameters(), lr=args.draft_lr, betas=(0.9, 0.95), weight_decay=0.0)
    rng = np.random.default_rng(args.seed + 4)
    bar = tqdm(range(args.draft_steps), desc="draft", unit="step")
    ema = None
    for step in bar:
        b = data[rng.integers(len(data))]
        rows = torch.from_numpy(rng.choice(len(b["tokens"]), size=args.draft_batch, replace=False))
        for group in opt.param_groups:
            group["lr"] = lr_at(step, args.draft_steps, args.draft_lr, 50)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = distill_loss(draft, b["tokens"][rows], b["top_lp"][rows], b["top_ix"][rows], args.gen_tokens)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(draft.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        ema = loss.item() if ema is None else 0.98 * ema + 0.02 * loss.item()
        bar.set_postfix(loss=f"{ema:.3f}")
    draft.eval()
    return {
        "model": draft,
        "train_loss": ema,
        "train_agreement": agreement(draft, data[:4], args.gen_tokens),
        "heldout_agreement": agreement(draft, held_data, args.gen_tokens),
    }


# ---------------------------------------------------------------- driver


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stage", choices=["all", "tokenizer", "target", "generate", "draft"], default="all")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=MODELS_DIR)
    ap.add_argument("--work", type=Path, default=Path("build/engine-train"))
    ap.add_argument("--threads", type=int, default=1, help="1 is fastest on a shared CPU (no spin-waiting)")
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--target-layers", type=int, default=16)
    ap.add_argument("--target-width", type=int, default=128)
    ap.add_argument("--target-heads", type=int, default=4)
    ap.add_argument("--target-steps", type=int, default=800)
    ap.add_argument("--target-lr", type=float, default=2e-3)
    ap.add_argument("--batch", type=int, default=8, help="sequences of 256 tokens per target step")
    ap.add_argument("--distill-seqs", type=int, default=2048)
    ap.add_argument("--gen-batch", type=int, default=64)
    ap.add_argument("--gen-tokens", type=int, default=128)
    ap.add_argument("--distill-topk", type=int, default=32)
    ap.add_argument("--draft-layers", type=int, default=1)
    ap.add_argument("--draft-steps", type=int, default=1200)
    ap.add_argument("--draft-batch", type=int, default=16)
    ap.add_argument("--draft-lr", type=float, default=3e-3)
    return ap.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    args.work.mkdir(parents=True, exist_ok=True)
    target_dir, draft_dir = args.out / "target", args.out / "draft"
    train_files, held_files = corpus.split(corpus.stdlib_files())
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k != "stage"}
    base_manifest = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "train_files": len(train_files),
        "heldout_files": len(held_files),
        "settings": settings,
    }
    stages = ["tokenizer", "target", "generate", "draft"] if args.stage == "all" else [args.stage]
    t0 = time.time()

    from transformers import AutoModelForCausalLM, AutoTokenizer

    if "tokenizer" in stages:
        tokenizer = train_tokenizer(train_files, args.work / "tokenizer", args.vocab, args.seed)
        train_stream = encode_stream(tokenizer, documents(train_files, args.seed))
        held_stream = encode_stream(tokenizer, documents(held_files, args.seed))
        np.save(args.work / "train.npy", train_stream)
        np.save(args.work / "heldout.npy", held_stream)
        print(f"tokenizer: {len(tokenizer)} tokens; train {len(train_stream):,} / held-out {len(held_stream):,}")
    tokenizer = AutoTokenizer.from_pretrained(args.work / "tokenizer")
    train_stream = np.load(args.work / "train.npy")
    held_stream = np.load(args.work / "heldout.npy")

    if "target" in stages:
        t = time.time()
        res = train_target(tokenizer, train_stream, held_stream, args)
        manifest = base_manifest | {
            "role": "target",
            "train_tokens": args.target_steps * args.batch * 256,
            "train_loss": res["train_loss"],
            "heldout_loss": res["heldout_loss"],
            "seconds": round(time.time() - t),
        }
        save_model(res["model"], tokenizer, target_dir, manifest)
        print(f"target: train loss {res['train_loss']:.3f}, held-out loss {res['heldout_loss']:.3f}")
    target = AutoModelForCausalLM.from_pretrained(target_dir, dtype=torch.float32).eval()

    if "generate" in stages:
        data = generate_distill_data(target, tokenizer, train_stream, args)
        torch.save(data, args.work / "distill.pt")
        held_args = argparse.Namespace(**{**vars(args), "distill_seqs": 128, "seed": args.seed + 100})
        torch.save(generate_distill_data(target, tokenizer, held_stream, held_args), args.work / "distill_heldout.pt")

    if "draft" in stages:
        t = time.time()
        data = torch.load(args.work / "distill.pt")
        held = torch.load(args.work / "distill_heldout.pt")
        res = train_draft(target, data, held, args)
        manifest = base_manifest | {
            "role": "draft",
            "distilled_from": "target",
            "distill_sequences": sum(len(b["tokens"]) for b in data),
            "train_loss": res["train_loss"],
            "train_greedy_agreement": res["train_agreement"],
            "heldout_greedy_agreement": res["heldout_agreement"],
            "seconds": round(time.time() - t),
        }
        save_model(res["model"], tokenizer, draft_dir, manifest)
        print(
            f"draft: loss {res['train_loss']:.3f}, greedy agreement with target "
            f"{res['train_agreement']:.3f} (train) / {res['heldout_agreement']:.3f} (held-out)"
        )
    print(f"done in {time.time() - t0:.0f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
