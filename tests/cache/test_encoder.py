from __future__ import annotations

import asyncio
import threading
import time

import numpy as np
import pytest

from cache import onnx_export
from cache.encoder import MIN_INT8_AGREEMENT, Encoder, OnnxRuntimeEncoder, TorchEncoder, load_runtime

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
    fp32 = load_runtime("onnx", precision="fp32")
    assert fp32.name == "onnxruntime" and fp32.precision == "fp32"
    onnx = fp32.encode(SENTENCES)
    torch_vectors = TorchEncoder().encode(SENTENCES)
    cosine = np.sum(onnx * torch_vectors, axis=1)
    assert cosine.min() >= 0.999, cosine


def test_exported_graph_is_fused_and_int8_quantises_the_fused_attention(encoder):
    # The fused graph (one Attention op per layer) is what makes one sentence fast on the CPU; an
    # exporter or optimizer change that breaks the fusion would silently cost ~25% per request.
    import onnx

    fp32 = onnx.load(str(onnx_export.onnx_path()), load_external_data=False)
    ops = [node.op_type for node in fp32.graph.node]
    assert ops.count("Attention") == 6 and "EmbedLayerNormalization" in ops, sorted(set(ops))
    int8 = onnx.load(str(onnx_export.int8_path(onnx_export.onnx_path())), load_external_data=False)
    ops = [node.op_type for node in int8.graph.node]
    assert ops.count("QAttention") == 6 and ops.count("Attention") == 0, sorted(set(ops))


def test_int8_variant_stays_close_to_fp32(encoder):
    # The default CPU runtime is the partly int8 graph; it must stay close to the fp32 export (which
    # matches torch, above). Measured on 300 held-out sentences: cosine min 0.9946, mean 0.9972.
    int8 = load_runtime("onnx", precision="int8")
    assert int8.precision == "int8" and int8.path == onnx_export.int8_path(onnx_export.onnx_path())
    fp32 = load_runtime("onnx", precision="fp32")
    one_at_a_time = np.array([float(int8.encode([t])[0] @ fp32.encode([t])[0]) for t in SENTENCES])
    assert one_at_a_time.min() >= MIN_INT8_AGREEMENT, one_at_a_time
    assert np.median(one_at_a_time) >= 0.995, one_at_a_time
    batched = np.sum(int8.encode(SENTENCES) * fp32.encode(SENTENCES), axis=1)
    assert batched.min() >= MIN_INT8_AGREEMENT, batched


def test_default_precision_is_int8_on_cpu(encoder, monkeypatch):
    assert encoder.runtime.precision == "int8"
    monkeypatch.setenv("SWITCHYARD_ENCODER_PRECISION", "fp32")
    assert load_runtime("onnx").precision == "fp32"


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
        assert got.base is None  # its own array: a stored vector must not keep its whole batch alive


@pytest.mark.parametrize("alone", [False, True])
async def test_embed_runs_off_the_event_loop(encoder, alone):
    # While a text is encoded the loop keeps running, for a request alone too: a ticker advances.
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    await encoder.embed(SENTENCES[-1] * 2, alone=alone)
    task.cancel()
    assert ticks > 1


def test_the_spinning_session_gives_the_batched_path_s_vectors_bit_for_bit(encoder):
    runtime = encoder.runtime
    assert runtime.name == "onnxruntime"
    two_threads = OnnxRuntimeEncoder(runtime.path, threads=2, precision=runtime.precision)
    assert two_threads.alone_session is not None  # the CPU provider, more than one thread
    assert np.array_equal(two_threads.encode_alone(SENTENCES), two_threads.encode(SENTENCES))


class StandInRuntime:
    """A model that records which thread ran it and can be held mid-batch."""

    name = "stand-in"

    def __init__(self) -> None:
        self.threads: list[str] = []
        self.release = threading.Event()

    def encode(self, texts):
        self.threads.append(threading.current_thread().name)
        if texts == ["held"]:
            self.release.wait(5)
        return np.ones((len(texts), 384), np.float32)

    def encode_alone(self, texts):
        self.threads.append("alone on " + threading.current_thread().name)
        return np.ones((len(texts), 384), np.float32)


async def test_a_request_alone_runs_on_the_spinning_session_only_when_nothing_else_is_encoding():
    runtime = StandInRuntime()
    encoder = Encoder(runtime)
    assert (await encoder.embed("alone", alone=True)).shape == (384,)
    # the session for a caller alone, and still on the batcher's thread: the event loop is never blocked
    assert len(runtime.threads) == 1 and runtime.threads[0].startswith("alone on encoder"), runtime.threads
    held = asyncio.create_task(encoder.embed("held"))
    while len(runtime.threads) < 2:
        await asyncio.sleep(0.001)
    assert not encoder.batcher.idle
    queued = asyncio.create_task(encoder.embed("queued behind it", alone=True))
    await asyncio.sleep(0.02)
    assert len(runtime.threads) == 2  # it waits its turn in the batcher, not beside the running batch
    runtime.release.set()
    await asyncio.gather(held, queued)
    assert all(name.startswith("encoder") for name in runtime.threads[1:]), runtime.threads  # sleeping session
    assert encoder.batcher.idle and (encoder.batcher.batches, encoder.batcher.items) == (3, 3)
    await encoder.aclose()


async def test_batcher_waiters_never_hang():
    from cache.batcher import MicroBatcher

    started = threading.Event()

    def slow(texts):
        started.set()
        time.sleep(0.2)
        return np.zeros((len(texts), 384), np.float32)

    batcher = MicroBatcher(slow)
    first = asyncio.create_task(batcher.submit("a"))
    await asyncio.to_thread(started.wait)
    queued = [asyncio.create_task(batcher.submit(t)) for t in "bcd"]
    await asyncio.sleep(0)
    await batcher.aclose()  # stops with one batch running and three waiting
    for task in [first, *queued]:
        with pytest.raises(RuntimeError, match="stopped"):
            await asyncio.wait_for(task, 2)

    short = MicroBatcher(lambda texts: np.zeros((max(len(texts) - 1, 0), 384), np.float32))
    with pytest.raises(RuntimeError, match="returned"):  # too few vectors: an error, not a hang
        await asyncio.wait_for(short.submit("x"), 2)
    await short.aclose()
