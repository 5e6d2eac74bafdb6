"""Test doubles for pool logic: a clock we move by hand and a Backend we can kill and revive.

`ScriptedBackend` speaks the real `Backend` interface (send / health / outstanding); it stands in for an
upstream because these tests are about choosing members, not about HTTP.
"""

from __future__ import annotations

import asyncio

from backends.base import Backend, BackendError, BackendRequest, BackendResponse


class FakeClock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


class ScriptedBackend(Backend):
    def __init__(self, name: str, *, alive: bool = True, status: int = 502) -> None:
        self.name = name
        self.alive = alive
        self.status = status  # what a dead member answers
        self.inflight = 0
        self.sent = 0
        self.health_checks = 0
        self.hang_health = False
        self.hold: asyncio.Event | None = None  # when set, `send` waits for it (to hold requests in flight)

    async def send(self, request: BackendRequest) -> BackendResponse:
        self.sent += 1
        self.inflight += 1
        try:
            if self.hold is not None:
                await self.hold.wait()
            if not self.alive:
                raise BackendError(self.status, f"{self.name} is down", retryable=True)
            return BackendResponse(status=200, body=b'{"ok": true}', backend_name=self.name)
        finally:
            self.inflight -= 1

    def outstanding(self) -> int:
        return self.inflight

    async def health(self) -> bool:
        self.health_checks += 1
        if self.hang_health:
            await asyncio.sleep(3600)
        return self.alive


def request() -> BackendRequest:
    return BackendRequest(endpoint="chat", body={"model": "m", "messages": []}, stream=False, request_id="r1")
