from __future__ import annotations

from cache import keys
from cache.embed_text import conversation_digest, embedding_text, semantic_eligible
from tests.cache.conftest import chat


def test_exact_key_ignores_transport_parameters():
    base = chat("What is 2+2?")
    same = [
        {**base, "stream": True, "stream_options": {"include_usage": True}},
        {**base, "user": "alice", "metadata": {"x": "y"}},
        {**base, "temperature": 0.0},
        {**base, "top_p": 1},  # the default, spelled out
        {**base, "messages": [base["messages"][0], {"role": "user", "content": [{"type": "text", "text": "What is 2+2?"}]}]},
    ]
    for body in same:
        assert keys.exact_key("t", "chat", body) == keys.exact_key("t", "chat", base)


def test_exact_key_changes_with_anything_that_changes_the_answer():
    base = chat("What is 2+2?")
    key = keys.exact_key("t", "chat", base)
    different = [
        ("tenant", keys.exact_key("other", "chat", base)),
        ("model", keys.exact_key("t", "chat", {**base, "model": "m2"})),
        ("temperature", keys.exact_key("t", "chat", {**base, "temperature": 0.5})),
        ("seed", keys.exact_key("t", "chat", {**base, "seed": 1})),
        ("max_tokens", keys.exact_key("t", "chat", {**base, "max_tokens": 5})),
        ("stop", keys.exact_key("t", "chat", {**base, "stop": "\n"})),
        ("tools", keys.exact_key("t", "chat", {**base, "tools": [{"type": "function", "function": {"name": "f"}}]})),
        ("response_format", keys.exact_key("t", "chat", {**base, "response_format": {"type": "json_object"}})),
        ("unknown param", keys.exact_key("t", "chat", {**base, "some_new_param": 1})),
        ("text", keys.exact_key("t", "chat", chat("What is 2+3?"))),
        ("system", keys.exact_key("t", "chat", chat("What is 2+2?", system="Answer in French."))),
        ("endpoint", keys.exact_key("t", "completions", {"model": "m", "prompt": "What is 2+2?", "temperature": 0})),
    ]
    for name, other in different:
        assert other != key, name


def test_context_key_ignores_the_question_but_not_its_setting():
    a, b = chat("What is the capital of France?"), chat("Which city is France's capital?")
    assert keys.context_key("t", "chat", a) == keys.context_key("t", "chat", b)
    assert keys.context_key("t", "chat", a) != keys.context_key("u", "chat", a)
    assert keys.context_key("t", "chat", a) != keys.context_key("t", "chat", chat("What is the capital of France?", system="Be brief."))
    history = {**a, "messages": [a["messages"][0], {"role": "user", "content": "hi"},
                                 {"role": "assistant", "content": "hello"}, a["messages"][1]]}
    assert keys.context_key("t", "chat", history) != keys.context_key("t", "chat", a)
    assert conversation_digest("chat", history) != conversation_digest("chat", a)


def test_embedding_text_is_the_last_user_turn():
    body = {"messages": [{"role": "system", "content": "long system prompt " * 50},
                         {"role": "user", "content": "first question"},
                         {"role": "assistant", "content": "an answer"},
                         {"role": "user", "content": [{"type": "text", "text": " second question "}]}]}
    assert embedding_text("chat", body) == "second question"
    assert embedding_text("completions", {"prompt": " Once upon a time"}) == "Once upon a time"
    assert embedding_text("completions", {"prompt": [1, 2, 3]}) == ""


def test_semantic_layer_skips_images_and_long_text():
    image = {"messages": [{"role": "user", "content": [{"type": "text", "text": "what is this?"},
                                                       {"type": "image_url", "image_url": {"url": "data:"}}]}]}
    assert not semantic_eligible("chat", image)
    assert not semantic_eligible("chat", chat("x " * 600))
    assert semantic_eligible("chat", chat("What is the capital of France?"))


def test_cacheable_only_deterministic_by_default():
    assert keys.uncacheable_reason("chat", chat("q"), only_deterministic=True) is None
    no_temperature = chat("q")
    del no_temperature["temperature"]
    assert keys.uncacheable_reason("chat", no_temperature, only_deterministic=True) == "not deterministic"
    assert keys.uncacheable_reason("chat", {**no_temperature, "seed": 7}, only_deterministic=True) is None
    assert keys.uncacheable_reason("chat", {**no_temperature, "temperature": 0.7}, only_deterministic=False) is None
    assert keys.uncacheable_reason("chat", chat("q", n=2), only_deterministic=True) == "n>1"
    assert keys.uncacheable_reason("chat", chat("q", logprobs=True), only_deterministic=True) == "logprobs"
    assert keys.uncacheable_reason("completions", {"prompt": ["a", "b"], "temperature": 0},
                                   only_deterministic=True) == "batch or token prompt"
