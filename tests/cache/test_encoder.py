from __future__ import annotations

import asyncio

import numpy as np

from cache.encoder import TorchEncoder

SENTENCES = [
    "What is the capital of Australia?",
    "how do i reverse a linked list in python without recursion",
    "Convert 10 miles to kilometres.",
    "Quelle est la capitale de la France ?",
    "ok",
    "A much longer request that goes on for a while, describing a problem with a database migration "
    "that fails halfway through and leaves the schema in an inconsistent state. " * 3,
]


def test_onnx_matches_torch(encoder):
    assert encoder.backend == "onnxruntime"
    onnx = encoder.embed_many(SENTENCES)
    torch_vectors = TorchEncoder().encode(SENTENCES)
    cosine = np.sum(onnx * torch_vectors, axis=1)
    assert cosine.min() >= 0.999, cosine


def test_vectors_are_normalised_float32(encoder):
    vectors = encoder.embed_many(SENTENCES)
    assert vectors.dtype == np.float32 and vectors.shape == (len(SENTENCES), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_padding_does_not_change_a_vector(encoder):
    alone = encoder.embed_many(["ok"])[0]
    batched = encoder.embed_many(["ok", SENTENCES[-1]])[0]  # padded to the long sentence
    assert float(alone @ batched) > 0.9999


async def test_concurrent_embeds_are_batched(encoder):
    texts = [f"question number {i} about caching" for i in range(48)]
    before = encoder.batcher.batches
    vectors = await asyncio.gather(*(encoder.embed(t) for t in texts))
    calls = encoder.batcher.batches - before
    assert calls < len(texts) // 4, calls  # 48 requests in a handful of model calls
    expected = encoder.embed_many(texts)
    for got, want in zip(vectors, expected):
        assert got.shape == (384,) and float(got @ want) > 0.9999


async def test_embed_runs_off_the_event_loop(encoder):
    # While a batch is encoded the loop keeps running: a ticker advances during the embed.
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    await encoder.embed(SENTENCES[-1] * 2)
    task.cancel()
    assert ticks > 1
