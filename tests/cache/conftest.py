from __future__ import annotations

import asyncio
import time

import pytest

from cache.encoder import Encoder
from policies.schema import CachePolicy


@pytest.fixture(scope="session")
def encoder() -> Encoder:
    """The real encoder (ONNX export at first use), loaded once for the whole session."""
    return Encoder.load()


@pytest.fixture
def policy() -> CachePolicy:
    return CachePolicy(threshold=0.65)


def chat(text: str, *, system: str | None = "You are a helpful assistant.", model: str = "m", **params) -> dict:
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": text}]
    return {"model": model, "messages": messages, "temperature": 0, **params}


async def eventually(predicate, timeout: float = 10.0, interval: float = 0.05):
    """Poll an async or sync predicate until it returns a truthy value (replica sync is asynchronous)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(interval)
