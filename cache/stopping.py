"""Stopping a background task for sure.

Cancelling a task does not always stop it. On Python 3.11 `asyncio.wait_for` swallows a cancellation
that lands just as the awaited call returns, and libraries use it: redis-py awaits every send through
`wait_for` when a socket timeout is set, as the Redis store sets it. A loop that only a cancellation
stops then runs on, and a shutdown that awaits it once hangs (a CI run hung 300 s in a teardown so).
Our own code uses `asyncio.timeout`, which keeps the cancellation; loops also check a closed flag.
"""

from __future__ import annotations

import asyncio


async def stop_task(task: asyncio.Task | None, *, recancel_every: float = 0.5) -> None:
    """Cancel `task` and wait until it has ended, cancelling it again while it runs on. What it ended
    with (a cancellation, an error) is taken and dropped: a task being stopped owes no answer."""
    if task is None:
        return
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=recancel_every)
    if not task.cancelled():
        task.exception()  # retrieved, so asyncio does not log it as never retrieved
