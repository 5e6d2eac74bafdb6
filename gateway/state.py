"""What the running gateway holds: the live runtime and the optional shared services."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from gateway.context import RequestContext
from gateway.runtime import RuntimeManager


@dataclass
class GatewayState:
    runtime: RuntimeManager
    log_requests: bool = True
    services: dict[str, Any] = field(default_factory=dict)

    async def admit(self, ctx: RequestContext) -> None:
        """Rate limits and admission, before the backend is asked. Raises `APIError(429)` when over."""
        limiter = self.services.get("limiter")
        if limiter is not None:
            await limiter.admit(ctx)


STATE = web.AppKey("switchyard_state", GatewayState)
