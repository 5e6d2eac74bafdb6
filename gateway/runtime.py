"""The live configuration: tenants by key hash, admin keys, and started backend pools.

A `Runtime` is immutable; a reload builds a new one and swaps one reference, so every request runs
start to finish on the runtime it began with. Pools whose configuration did not change are carried
over as they are (connections and loaded models kept); replaced pools are closed once their in-flight
requests have finished.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path

from backends.base import Backend
from backends.pool import Pool
from backends.upstream import OpenAIUpstream
from gateway.admission import pool_admission
from gateway.logs import log
from gateway.metrics import POLICY_RELOADS
from policies import loader
from policies.schema import GatewayConfig, LocalMember, Pool as PoolConfig, Tenant, UpstreamMember
from policies.tokens import TokenCounter, counter_for


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Principal:
    tenant_id: str
    tenant: Tenant
    key_name: str


@dataclass(frozen=True, slots=True)
class Runtime:
    config: GatewayConfig
    source: str
    principals: dict[str, Principal]
    admins: dict[str, str]
    pools: dict[str, Pool]
    pool_configs: dict[str, PoolConfig]
    counters: dict[str, TokenCounter]
    """Per pool: the members' tokenizer when known, else the estimate. Counted once per request."""


def build_member(pool_name: str, index: int, member: UpstreamMember | LocalMember, cfg: PoolConfig) -> Backend:
    if isinstance(member, UpstreamMember):
        return OpenAIUpstream(f"{pool_name}/{index}", member, cfg.timeouts)
    # Imported here: the local engine pulls in torch, which a pure proxy deployment never needs.
    from backends.local import LocalEngineBackend

    return LocalEngineBackend.from_member(f"{pool_name}/{index}", member)


def tokenizer_of(cfg: PoolConfig) -> str | None:
    if cfg.tokenizer is not None:
        return cfg.tokenizer
    first = cfg.members[0]
    return first.model if isinstance(first, LocalMember) else None


def build_pool(name: str, cfg: PoolConfig) -> Pool:
    members = [build_member(name, i, m, cfg) for i, m in enumerate(cfg.members)]
    admission = pool_admission(name, cfg.admission, [m.max_outstanding_tokens for m in cfg.members])
    return Pool(name, members, [m.weight for m in cfg.members], cfg.max_attempts, admission=admission)


class RuntimeManager:
    def __init__(self, config: GatewayConfig, source: str, path: Path | None = None) -> None:
        self._initial = (config, source)
        self.path = path
        self.current: Runtime | None = None
        self._lock = asyncio.Lock()
        self._watch_task: asyncio.Task | None = None
        self._retiring: set[asyncio.Task] = set()

    async def start(self) -> None:
        config, source = self._initial
        self.current = await self._build(config, source, previous=None)
        if self.path is not None:
            loop = asyncio.get_running_loop()
            try:
                loop.add_signal_handler(signal.SIGHUP, lambda: asyncio.ensure_future(self.reload("SIGHUP")))
            except (NotImplementedError, RuntimeError):  # not the main thread (tests) or no signals
                pass
            self._watch_task = asyncio.create_task(self._watch(), name="policy-watch")

    async def aclose(self) -> None:
        if self._watch_task is not None:
            self._watch_task.cancel()
        if self.current is not None:
            for pool in self.current.pools.values():
                await pool.aclose()
        for t in self._retiring:
            t.cancel()

    async def _build(self, config: GatewayConfig, source: str, previous: Runtime | None) -> Runtime:
        pools: dict[str, Pool] = {}
        started: list[Pool] = []
        try:
            for name, pcfg in config.pools.items():
                if previous is not None and previous.pool_configs.get(name) == pcfg:
                    pools[name] = previous.pools[name]
                else:
                    pool = build_pool(name, pcfg)
                    await pool.start()
                    started.append(pool)
                    pools[name] = pool
        except BaseException:
            for pool in started:
                await pool.aclose()
            raise
        principals = {
            key.sha256: Principal(tid, tenant, key.name)
            for tid, tenant in config.tenants.items()
            for key in tenant.keys
        }
        admins = {key.sha256: key.name for key in config.server.admin_keys}
        # Loading a tokenizer reads files: off the event loop.
        counters = {name: await asyncio.to_thread(counter_for, tokenizer_of(pcfg))
                    for name, pcfg in config.pools.items()}
        return Runtime(config, source, principals, admins, pools, dict(config.pools), counters)

    async def apply(self, config: GatewayConfig, source: str) -> None:
        async with self._lock:
            old = self.current
            new = await self._build(config, source, previous=old)
            self.current = new
            if old is not None:
                for name, pool in old.pools.items():
                    if new.pools.get(name) is not pool:
                        task = asyncio.create_task(self._retire(pool))
                        self._retiring.add(task)
                        task.add_done_callback(self._retiring.discard)

    async def _retire(self, pool: Pool) -> None:
        # In-flight requests keep the old pool; close it only once they are done (bounded wait).
        for _ in range(600):
            if pool.outstanding() == 0:
                break
            await asyncio.sleep(1)
        await pool.aclose()

    async def reload(self, reason: str) -> bool:
        """Load the file again; on any error keep the live policy and say why."""
        if self.path is None:
            return False
        try:
            config = await asyncio.to_thread(loader.load, self.path)
            await self.apply(config, str(self.path))
        except loader.PolicyError as exc:
            POLICY_RELOADS.labels("rejected").inc()
            log.error("policy_reload_rejected", reason=reason, file=str(self.path), problems=exc.problems)
            return False
        except Exception as exc:  # a pool that fails to start: keep serving on the old runtime
            POLICY_RELOADS.labels("failed").inc()
            log.error("policy_reload_failed", reason=reason, file=str(self.path), error=repr(exc))
            return False
        POLICY_RELOADS.labels("applied").inc()
        log.info("policy_reloaded", reason=reason, file=str(self.path),
                 tenants=len(config.tenants), pools=len(config.pools))
        return True

    async def _watch(self) -> None:
        import watchfiles

        assert self.path is not None
        target = os.path.realpath(self.path)
        # Watch the directory: editors and config managers replace files by rename.
        async for changes in watchfiles.awatch(self.path.parent, debounce=200, step=50,
                                               recursive=False):
            if any(os.path.realpath(p) == target for _, p in changes):
                await self.reload("file changed")
