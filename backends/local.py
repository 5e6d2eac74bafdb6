"""The in-process local engine as a Backend: the gateway's embedded default.

Every in-process backend of a process shares one engine (`EngineHost`): one worker thread, so
local models never fight each other for the CPU, and each model directory is loaded once (the
bundled "large" and "small" share the draft's weights). Model work runs in that thread; `send()`
only validates, submits and relays events. The host loads models on a backend's `start()` and
stops the engine after the last backend's `aclose()`.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backends import wire
from backends.base import Backend, BackendError, BackendRequest, BackendResponse, StreamInterrupted
from backends.engine import (
    DEFAULT_SPEC_K_UNDER_LOAD,
    DEFAULT_SPEC_MAX_BATCH,
    Engine,
    LoadedModel,
    ServedModel,
    check_pair,
    load_model,
    make_scheduler,
)
from backends.engine.openai_api import InvalidRequest, parse_request
from backends.engine.responses import GenerationFailed, Meta, collect, stream_chunks, wait_started


@dataclass(frozen=True, slots=True)
class ModelSpec:
    model: Path
    draft: Path | None = None
    device: str | None = None

    @property
    def key(self) -> str:
        """The engine-internal served-model name of this target/draft pair."""
        return str(self.model) + (f"+draft={self.draft}" if self.draft else "") + (f"@{self.device}" if self.device else "")


def resolve_model_dir(value: str | Path) -> Path:
    """A directory, or `bundled:target` / `bundled:draft` for the shipped models."""
    text = str(value)
    if text.startswith("bundled:"):
        from backends.models import bundled_models

        shipped = bundled_models()
        which = text.split(":", 1)[1]
        if which not in shipped:
            raise ValueError(f"unknown bundled model {text!r}; have {sorted('bundled:' + k for k in shipped)}")
        return shipped[which]
    return Path(text).expanduser().resolve()


@dataclass(frozen=True, slots=True)
class EngineOptions:
    """Scheduling options of the in-process engine, as `switchyard engine serve` takes them
    (docs/scheduling.md). From the environment: SWITCHYARD_ENGINE_SCHEDULE (fifo, token,
    continuous), SWITCHYARD_ENGINE_MAX_RUNNING, SWITCHYARD_ENGINE_STEP_TOKEN_BUDGET,
    SWITCHYARD_ENGINE_BATCH_THRESHOLD, SWITCHYARD_ENGINE_SPEC_MAX_BATCH (-1: always speculate
    freely), SWITCHYARD_ENGINE_SPEC_K_UNDER_LOAD."""

    schedule: str = "continuous"
    max_running: int | None = None
    step_token_budget: int = 256
    batch_threshold: int = 256
    spec_max_batch: int | None = DEFAULT_SPEC_MAX_BATCH
    spec_k_under_load: int = DEFAULT_SPEC_K_UNDER_LOAD

    @classmethod
    def from_env(cls, env=os.environ, settings: Any = None) -> EngineOptions:
        """`settings` (the policy's `server.local_engine`) wins field by field over the environment."""

        def pick(field: str, key: str, default):
            value = getattr(settings, field, None) if settings is not None else None
            if value is not None:
                return value
            text = env.get(key, "").strip()
            if not text:
                return default
            if field == "schedule":
                return text
            try:
                return int(text)
            except ValueError:
                raise ValueError(f"{key}={text!r} is not an integer") from None

        spec = pick("spec_max_batch", "SWITCHYARD_ENGINE_SPEC_MAX_BATCH", DEFAULT_SPEC_MAX_BATCH)
        return cls(
            schedule=pick("schedule", "SWITCHYARD_ENGINE_SCHEDULE", "continuous"),
            max_running=pick("max_running", "SWITCHYARD_ENGINE_MAX_RUNNING", None),
            step_token_budget=pick("step_token_budget", "SWITCHYARD_ENGINE_STEP_TOKEN_BUDGET", 256),
            batch_threshold=pick("batch_threshold", "SWITCHYARD_ENGINE_BATCH_THRESHOLD", 256),
            spec_max_batch=None if spec is not None and spec < 0 else spec,
            spec_k_under_load=max(0, pick("spec_k_under_load", "SWITCHYARD_ENGINE_SPEC_K_UNDER_LOAD",
                                          DEFAULT_SPEC_K_UNDER_LOAD)),
        )


class EngineHost:
    """One engine per process for all in-process backends, with a cache of loaded directories."""

    def __init__(self, options: EngineOptions | None = None) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._loaded: dict[tuple[Path, str | None], LoadedModel] = {}
        self.options = options or EngineOptions.from_env()
        o = self.options
        scheduler = make_scheduler(o.schedule, max_running=o.max_running, step_token_budget=o.step_token_budget,
                                   batch_threshold=o.batch_threshold)
        self.engine = Engine({}, scheduler, spec_max_batch=o.spec_max_batch, spec_k_under_load=o.spec_k_under_load)

    def _load(self, path: Path, device: str | None) -> LoadedModel:
        key = (path, device)
        if key not in self._loaded:
            self._loaded[key] = load_model(path, device=device)
        return self._loaded[key]

    def acquire(self, spec: ModelSpec) -> str:
        """Load (once) and register `spec`, start the engine; returns the served-model name.
        Blocking: call it in a thread."""
        with self._lock:
            if spec.key not in self.engine.models:
                target = self._load(spec.model, spec.device)
                draft = self._load(spec.draft, spec.device) if spec.draft else None
                if draft is not None:
                    check_pair(target, draft)
                label = spec.model.name + (f"+{spec.draft.name}" if spec.draft else "")
                self.engine.models[spec.key] = ServedModel(name=spec.key, target=target, draft=draft, label=label)
            self.engine.start()
            self._users += 1
            return spec.key

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users <= 0:
                self._users = 0
                self.engine.shutdown()
                self.engine.models.clear()
                self._loaded.clear()


_host: EngineHost | None = None
_host_lock = threading.Lock()


def engine_host() -> EngineHost:
    global _host
    with _host_lock:
        if _host is None:
            _host = EngineHost()
        return _host


def configure_engine_host(options: EngineOptions) -> EngineHost:
    """Set the process's engine options before the first local backend starts. The engine is
    process-wide and built once: a later call with other options (a policy reload) keeps the running
    engine and its options, and says so by returning it unchanged."""
    global _host
    with _host_lock:
        if _host is None or (_host._users == 0 and _host.options != options):
            _host = EngineHost(options)
        return _host


class LocalEngineBackend(Backend):
    def __init__(self, spec: ModelSpec, *, name: str | None = None, host: EngineHost | None = None) -> None:
        self.spec = spec
        self.name = name or f"local:{spec.model.name}"
        self.host = host or engine_host()
        self.served: str | None = None
        self._start_lock = asyncio.Lock()

    @classmethod
    def from_dirs(
        cls, model_dir: str | Path, draft_dir: str | Path | None = None, *, name: str | None = None, device: str | None = None
    ) -> LocalEngineBackend:
        spec = ModelSpec(resolve_model_dir(model_dir), resolve_model_dir(draft_dir) if draft_dir else None, device)
        return cls(spec, name=name)

    @classmethod
    def from_member(cls, name: str, member: Any) -> LocalEngineBackend:
        """From a policy pool member (`kind: local`, `model`, optional `draft`, optional `device`)."""
        return cls.from_dirs(member.model, member.draft, name=name, device=getattr(member, "device", None))

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        async with self._start_lock:
            if self.served is None:
                self.served = await asyncio.to_thread(self.host.acquire, self.spec)

    async def aclose(self) -> None:
        async with self._start_lock:
            if self.served is not None:
                self.served = None
                await asyncio.to_thread(self.host.release)

    @property
    def engine(self) -> Engine:
        return self.host.engine

    def outstanding(self) -> int:
        return self.engine.outstanding() if self.served else 0

    async def health(self) -> bool:
        return self.served is not None and self.engine.alive

    def metrics_snapshot(self) -> dict[str, Any]:
        if self.served is None:
            return {"loaded": False}
        return {"loaded": True, "waiting": self.engine.waiting, "running": self.engine.running, "alive": self.engine.alive}

    # ------------------------------------------------------------ requests

    async def send(self, request: BackendRequest) -> BackendResponse:
        await self.start()
        engine = self.engine
        if not engine.alive or self.served not in engine.models:
            raise BackendError(503, "local engine is not running", type="server_error", retryable=True)
        served = engine.models[self.served]
        try:
            parsed = await asyncio.to_thread(parse_request, request.endpoint, request.body, served, request.request_id,
                                             fit_max_tokens=request.max_tokens_is_cap)
        except InvalidRequest as e:
            raise BackendError(400, e.message, type=e.type, code=e.code, param=e.param) from None
        meta = Meta(id=wire.new_id(request.endpoint), created=wire.now(), model=parsed.model_name)
        handle = engine.submit(parsed.generation)
        try:
            await wait_started(handle)
        except GenerationFailed as e:
            raise BackendError(500, str(e), type="server_error") from None
        if request.stream:
            events = _interruptible(stream_chunks(handle, parsed, meta, request.want_usage))
            return BackendResponse(events=events, backend_name=self.name, member=self.name)
        try:
            body, finished = await collect(handle, parsed, meta)
        except GenerationFailed as e:
            raise BackendError(500, str(e), type="server_error") from None
        return BackendResponse(
            body=body,
            backend_name=self.name,
            member=self.name,
            usage=wire.usage(finished.prompt_tokens, finished.completion_tokens),
        )


async def _interruptible(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """Engine failures after the first byte become StreamInterrupted, as the interface says;
    closing this iterator closes `chunks`, which cancels generation."""
    try:
        async for chunk in chunks:
            yield chunk
    except GenerationFailed as e:
        raise StreamInterrupted(str(e)) from None
    finally:
        await chunks.aclose()  # type: ignore[attr-defined]


def bundled_backends(device: str | None = None) -> dict[str, LocalEngineBackend]:
    """The embedded default's public models: "large" = the shipped target decoding speculatively
    with the shipped draft, "small" = the draft alone."""
    from backends.models import bundled_models

    dirs = bundled_models()
    return {
        "large": LocalEngineBackend(ModelSpec(dirs["target"], dirs["draft"], device), name="local:large"),
        "small": LocalEngineBackend(ModelSpec(dirs["draft"], None, device), name="local:small"),
    }
