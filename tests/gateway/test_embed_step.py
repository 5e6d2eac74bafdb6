"""The gateway's embed step when the encoder fails: the request goes on without a vector."""

from __future__ import annotations

from gateway.caching import request_vector
from gateway.context import RequestContext
from gateway.understand import classify, embed


class BrokenEncoder:
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def embed(self, text: str, alone: bool = False):
        self.calls.append(text)
        raise RuntimeError("onnxruntime: invalid input")


class Models:
    """The slice of `SharedModels` the step reads: loaded, with an encoder that fails."""

    def __init__(self) -> None:
        self.encoder = BrokenEncoder()
        self.classifier = None  # never reached without a vector

    async def ready(self) -> bool:
        return True


class State:
    def __init__(self) -> None:
        self.models = Models()
        self.in_flight = 1


async def test_a_failing_encoder_is_tried_once_and_leaves_no_vector():
    state = State()
    ctx = RequestContext("req-1", "chat", {"model": "auto", "messages": [{"role": "user", "content": "Hi there"}]})
    await embed(state, ctx)  # the cache's lookup asks first ...
    await classify(state, ctx)  # ... then the classifier: no second attempt, no class, no exception
    assert await request_vector(state, ctx)() is None  # ... and the store: no vector, no third attempt
    assert ctx.embedding is None and ctx.task_class is None
    assert state.models.encoder.calls == ["Hi there"]


class RecordingEncoder(BrokenEncoder):
    def __init__(self) -> None:
        super().__init__()
        self.alone: list[bool] = []

    async def embed(self, text: str, alone: bool = False):
        self.calls.append(text)
        self.alone.append(alone)
        return None


async def test_the_vector_is_of_the_clients_words_not_the_compressed_prompt():
    state = State()
    state.models.encoder = RecordingEncoder()
    original = {"model": "m", "messages": [{"role": "user", "content": "A long question, as the client wrote it"}]}
    ctx = RequestContext("req-2", "chat", original)
    ctx.request_body = original
    ctx.body = {"model": "m", "messages": [{"role": "user", "content": "long question"}]}  # after compression
    await request_vector(state, ctx)()  # a store asks for it after the answer
    assert state.models.encoder.calls == ["A long question, as the client wrote it"]


async def test_the_encoder_spins_only_for_the_one_request_in_flight():
    asked = []
    for in_flight in (1, 2):
        state = State()
        state.models.encoder = RecordingEncoder()
        state.in_flight = in_flight
        await embed(state, RequestContext(f"req-{in_flight}", "chat",
                                          {"model": "m", "messages": [{"role": "user", "content": "Hi"}]}))
        asked += state.models.encoder.alone
    assert asked == [True, False]  # a second request in flight needs the cores: no spinning threads
