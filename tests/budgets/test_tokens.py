from __future__ import annotations

from transformers import AutoTokenizer

from policies.tokens import ESTIMATE, IMAGE_TOKENS, HFTokenCounter, count_request, counter_for

MESSAGES = [
    {"role": "system", "content": "You are a terse assistant."},
    {"role": "user", "content": "What is the capital of France?"},
    {"role": "assistant", "content": "Paris."},
    {"role": "user", "content": "And of Italy?"},
]


def test_estimate_is_near_four_characters_a_token_for_english():
    text = "The quick brown fox jumps over the lazy dog while the farmer watches from the porch. " * 20
    n = ESTIMATE.count_text(text)
    assert len(text) / 5.5 < n < len(text) / 3


def test_estimate_counts_digits_and_non_ascii_finer_than_letters():
    assert ESTIMATE.count_text("1234567890" * 10) > ESTIMATE.count_text("abcdefghij" * 10)
    assert ESTIMATE.count_text("дом " * 50) > ESTIMATE.count_text("dom " * 50)
    assert ESTIMATE.count_text("") == 0


def test_estimate_chat_adds_framing_names_and_images():
    bare = sum(ESTIMATE.count_text(m["content"]) for m in MESSAGES)
    assert ESTIMATE.count_messages(MESSAGES) == bare + 4 * len(MESSAGES) + 3
    with_image = [*MESSAGES[:-1], {"role": "user", "content": [
        {"type": "text", "text": "And of Italy?"}, {"type": "image_url", "image_url": {"url": "data:,"}}]}]
    assert ESTIMATE.count_messages(with_image) == ESTIMATE.count_messages(MESSAGES) + IMAGE_TOKENS
    named = [{**MESSAGES[1], "name": "alice"}]
    assert ESTIMATE.count_messages(named) > ESTIMATE.count_messages([MESSAGES[1]])


def test_hf_counter_counts_chat_through_the_template_like_the_backend(chat_tokenizer_dir):
    counter = HFTokenCounter(chat_tokenizer_dir)
    assert counter.has_template
    tok = AutoTokenizer.from_pretrained(str(chat_tokenizer_dir))
    ids = tok.apply_chat_template(MESSAGES, add_generation_prompt=True, tokenize=True)
    if isinstance(ids, dict) or hasattr(ids, "keys"):
        ids = ids["input_ids"]
    assert counter.count_messages(MESSAGES) == len(ids)


def test_hf_counter_without_template_uses_text_plus_framing(plain_tokenizer_dir):
    counter = HFTokenCounter(plain_tokenizer_dir)
    assert not counter.has_template
    text = sum(counter.count_texts([m["content"] for m in MESSAGES]))
    assert counter.count_messages(MESSAGES) == text + 4 * len(MESSAGES) + 3
    # No truncation even though this tokenizer's model has a 512-token window.
    assert counter.count_text("word " * 2000) == 2000


def test_count_request_completions_shapes(plain_tokenizer_dir):
    counter = HFTokenCounter(plain_tokenizer_dir)
    assert count_request("completions", {"prompt": "hello world"}, counter) == 2
    assert count_request("completions", {"prompt": ["hello world", "hello"]}, counter) == 3
    assert count_request("completions", {"prompt": [1, 2, 3, 4]}, counter) == 4
    assert count_request("completions", {"prompt": [[1, 2], [3]]}, counter) == 3
    assert count_request("chat", {"messages": MESSAGES}, counter) == counter.count_messages(MESSAGES)


def test_counter_for_caches_and_falls_back_to_the_estimate(chat_tokenizer_dir, tmp_path):
    assert counter_for(None) is ESTIMATE
    a = counter_for(str(chat_tokenizer_dir))
    assert a is counter_for(str(chat_tokenizer_dir)) and a.exact
    # A bundled model that is not built yet must not fail requests.
    import policies.tokens as tokens

    tokens.BUNDLED["bundled:missing-test"] = tmp_path / "nothing-here"
    try:
        assert counter_for("bundled:missing-test") is ESTIMATE
    finally:
        del tokens.BUNDLED["bundled:missing-test"]


def test_counts_match_the_local_engine_for_the_bundled_target():
    """The gateway's count of a chat request is the number of tokens the local engine will prefill."""
    import pytest

    from policies.tokens import BUNDLED

    target = BUNDLED["bundled:target"]
    if not (target / "tokenizer.json").exists():
        pytest.skip("backends/models/target is not built")
    from backends.engine.openai_api import render_chat

    counter = HFTokenCounter("bundled:target")
    tok = AutoTokenizer.from_pretrained(str(target))
    long = [*MESSAGES, {"role": "assistant", "content": "Rome.\n\n  Indented   text, numbers 1234567 and ünïcode."},
            {"role": "user", "content": "def f(x):\n    return x ** 2\n\nWhat does f(3) return?"}]
    for msgs in (MESSAGES, long):
        assert counter.count_messages(msgs) == len(render_chat(tok, msgs))
