"""Admin endpoints of the cache, under /admin/cache. The gateway mounts `admin_routes(service)` behind
its admin-key middleware (which sets `request[ADMIN_NAME]`); these handlers assume auth passed.

Every change is logged (structlog) with the admin who made it. Errors use OpenAI's error shape.

  GET    /admin/cache/openapi.yaml                  this API described (cache/openapi_admin.yaml)
  GET    /admin/cache/tenants                       tenants with entries, and their stats
  GET    /admin/cache/{tenant}/stats                entries, bytes, hit ratios, lookup latency
  GET    /admin/cache/{tenant}/entries              list (?limit, ?offset, ?contains) or search (?q, ?min_similarity)
  GET    /admin/cache/{tenant}/entries/{id}         one entry
  DELETE /admin/cache/{tenant}/entries/{id}         delete one entry
  POST   /admin/cache/{tenant}/delete               {"ids": [...]} | {"older_than_seconds": N} |
                                                    {"query": "...", "min_similarity": 0.9}
  DELETE /admin/cache/{tenant}                      flush the tenant (also POST /admin/cache/{tenant}/flush)
  GET    /admin/cache/{tenant}/threshold            effective override (null = policy value)
  PUT    /admin/cache/{tenant}/threshold            {"threshold": 0.8}   run-time override
  DELETE /admin/cache/{tenant}/threshold            drop the override
  GET    /admin/cache/{tenant}/export               JSONL, one entry per line (with vectors)
  POST   /admin/cache/{tenant}/import               JSONL body, as exported; lines go into {tenant}
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import orjson
import structlog
from aiohttp import StreamReader, web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError

from backends.wire import error_body
from cache.entry import CacheEntry, valid_entry_id
from cache.importing import BadImportLine
from cache.service import CacheService
from policies.schema import CachePolicy

log = structlog.get_logger("switchyard.cache.admin")

_TENANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}")  # fullmatch: "$" would let a final newline in
MAX_LIST = 1000
MAX_IMPORT_LINE = 16 * 1024 * 1024
ENTRY_ID_RULE = "an entry id is 16 lower-case hex digits, the first of them 0-7"


class NoEncoder(Exception):
    pass


class BadRequest(Exception):
    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param


def _error(status: int, message: str, type_: str = "invalid_request_error", param: str | None = None,
           code: str | None = None) -> web.Response:
    return web.Response(status=status, body=error_body(message, type_, param, code), content_type="application/json")


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, body=orjson.dumps(data), content_type="application/json")


def _entry_view(entry: CacheEntry, similarity: float | None = None) -> dict:
    view = entry.to_dict(with_vector=False)
    view.pop("exact_key", None)
    view.pop("context_key", None)
    view["bytes"] = entry.size_bytes()
    if similarity is not None:
        view["similarity"] = round(similarity, 4)
    return view


ADMIN_NAME = web.RequestKey("admin_name", str)
"""Set by the admin-key middleware: who is acting, for the audit log."""


def _who(request: web.Request) -> str:
    return str(request.get(ADMIN_NAME) or "unknown")


def valid_tenant_id(tenant: str) -> bool:
    return _TENANT.fullmatch(tenant) is not None


def _tenant(request: web.Request) -> str:
    tenant = request.match_info["tenant"]
    if not valid_tenant_id(tenant):
        raise BadRequest(f"invalid tenant id {tenant!r}", "tenant")
    return tenant


async def _body(request: web.Request) -> dict:
    try:
        data = orjson.loads(await request.read())
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"body is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise BadRequest("body must be a JSON object")
    return data


def _number(data: dict, name: str, low: float, high: float) -> float:
    value = data.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise BadRequest(f"{name} must be a number between {low} and {high}", name)
    return float(value)


def _query_int(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query.get(name)
    if raw is None:
        return default
    # ASCII digits only: str.isdigit() also accepts "²", which int() refuses; and no more digits than
    # `high` has, checked before int() (which raises past 4,300 digits) is asked
    if not (raw.isascii() and raw.isdigit()) or len(raw) > len(str(high)) or not low <= int(raw) <= high:
        raise BadRequest(f"{name} must be an integer between {low} and {high}", name)
    return int(raw)


def _query_number(request: web.Request, name: str, default: float, low: float, high: float) -> float:
    raw = request.query.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not low <= value <= high:  # NaN fails too
        raise BadRequest(f"{name} must be a number between {low} and {high}", name)
    return value


async def body_lines(content: StreamReader, max_line: int) -> AsyncIterator[bytes | None]:
    """The lines of a streamed body, without their newlines; None in place of a line longer than
    `max_line`, which is read to its end but not kept. (aiohttp's own line reader raises past 512 KiB,
    and an exported entry with a long prompt is a longer line.)"""
    buffer, scanned, too_long = bytearray(), 0, False
    async for chunk in content.iter_any():
        buffer += chunk
        while (end := buffer.find(b"\n", scanned)) >= 0:
            yield None if too_long or end > max_line else bytes(buffer[:end])
            del buffer[:end + 1]
            scanned, too_long = 0, False
        scanned = len(buffer)
        if len(buffer) > max_line:
            buffer.clear()
            scanned, too_long = 0, True
    if buffer or too_long:
        yield None if too_long else bytes(buffer)


OPENAPI_SPEC = Path(__file__).with_name("openapi_admin.yaml")  # what this module serves, described


def admin_routes(service: CacheService,
                 policy_of: Callable[[str], CachePolicy | None] = lambda tenant: None) -> list[web.RouteDef]:
    """The routes; `policy_of(tenant)` gives a tenant's cache policy (None: unknown), so that imported
    entries keep that tenant's TTL and entry bound."""
    def unavailable() -> web.Response | None:
        if not service.healthy:
            return _error(503, "cache store unavailable", "service_unavailable", code="cache_store_down")
        return None

    async def tenants(request: web.Request) -> web.Response:
        names = await service.tenants()
        return _json({"tenants": [await service.stats(t) for t in names], "store": service.status()})

    async def stats(request: web.Request) -> web.Response:
        return _json(await service.stats(_tenant(request)))

    async def list_entries(request: web.Request) -> web.Response:
        tenant = _tenant(request)
        limit = _query_int(request, "limit", 100, 1, MAX_LIST)
        if "q" in request.query:
            min_sim = _query_number(request, "min_similarity", 0.5, 0.0, 1.0)
            if not request.query["q"].strip():
                raise BadRequest("q must be a non-empty search text", "q")
            if service.encoder is None:
                raise NoEncoder
            found = await service.similar(tenant, request.query["q"], min_sim, limit)
            return _json({"object": "list", "data": [_entry_view(e, s) for e, s in found]})
        offset = _query_int(request, "offset", 0, 0, 10**9)
        contains = request.query.get("contains", "").lower()
        out, skipped = [], 0
        async for entry in service.entries(tenant):
            if contains and contains not in entry.text.lower() and contains not in entry.response_text.lower():
                continue
            if skipped < offset:
                skipped += 1
                continue
            out.append(_entry_view(entry))
            if len(out) >= limit:
                break
        return _json({"object": "list", "data": out, "offset": offset, "limit": limit})

    async def get_entry(request: web.Request) -> web.Response:
        tenant, entry_id = _tenant(request), request.match_info["entry_id"]
        if not valid_entry_id(entry_id):
            return _error(400, ENTRY_ID_RULE, param="entry_id")
        entry = await service.get_entry(tenant, entry_id)
        if entry is None:
            return unavailable() or _error(404, f"no entry {entry_id} for tenant {tenant}", code="entry_not_found")
        return _json(_entry_view(entry))

    async def delete_entry(request: web.Request) -> web.Response:
        tenant, entry_id = _tenant(request), request.match_info["entry_id"]
        if not valid_entry_id(entry_id):
            return _error(400, ENTRY_ID_RULE, param="entry_id")
        if (down := unavailable()) is not None:
            return down
        deleted = await service.delete_entries(tenant, [entry_id])
        if not deleted:
            return _error(404, f"no entry {entry_id} for tenant {tenant}", code="entry_not_found")
        log.info("cache.admin.delete", admin=_who(request), tenant=tenant, ids=[entry_id], deleted=deleted)
        return _json({"deleted": deleted, "ids": [entry_id]})

    async def delete_many(request: web.Request) -> web.Response:
        tenant = _tenant(request)
        data = await _body(request)
        if (down := unavailable()) is not None:
            return down
        modes = [k for k in ("ids", "older_than_seconds", "query") if k in data]
        if len(modes) != 1:
            return _error(400, "give exactly one of: ids, older_than_seconds, query")
        mode = modes[0]
        if mode == "ids":
            ids = data["ids"]
            if not isinstance(ids, list) or not all(isinstance(i, str) and valid_entry_id(i) for i in ids):
                return _error(400, f"ids must be a list of entry ids: {ENTRY_ID_RULE}", param="ids")
            deleted = await service.delete_entries(tenant, ids)
            detail: dict[str, Any] = {"ids": ids}
        elif mode == "older_than_seconds":
            seconds = _number(data, "older_than_seconds", 0, 10**10)
            deleted = await service.delete_older_than(tenant, seconds)
            detail = {"older_than_seconds": seconds}
        else:
            query = data["query"]
            if not isinstance(query, str) or not query.strip():
                return _error(400, "query must be a non-empty string", param="query")
            min_sim = _number(data, "min_similarity", 0.0, 1.0) if "min_similarity" in data else 0.9
            if service.encoder is None:
                raise NoEncoder
            found = await service.similar(tenant, query, min_sim, limit=10_000)
            ids = [e.id for e, _ in found]
            deleted = await service.delete_entries(tenant, ids) if ids else 0
            detail = {"query": query, "min_similarity": min_sim, "ids": ids}
        log.info("cache.admin.delete", admin=_who(request), tenant=tenant, mode=mode, deleted=deleted, **detail)
        return _json({"deleted": deleted, **detail})

    async def flush(request: web.Request) -> web.Response:
        tenant = _tenant(request)
        if (down := unavailable()) is not None:
            return down
        deleted = await service.flush(tenant)
        log.info("cache.admin.flush", admin=_who(request), tenant=tenant, deleted=deleted)
        return _json({"flushed": tenant, "deleted": deleted})

    async def get_threshold(request: web.Request) -> web.Response:
        tenant = _tenant(request)
        return _json({"tenant": tenant, "threshold_override": service.threshold_overrides().get(tenant)})

    async def put_threshold(request: web.Request) -> web.Response:
        tenant = _tenant(request)
        value = _number(await _body(request), "threshold", 0.0, 1.0)
        previous = service.threshold_overrides().get(tenant)
        service.set_threshold(tenant, value)
        log.info("cache.admin.threshold", admin=_who(request), tenant=tenant, threshold=value, previous=previous)
        return _json({"tenant": tenant, "threshold_override": value, "previous": previous})

    async def delete_threshold(request: web.Request) -> web.Response:
        tenant = _tenant(request)
        previous = service.threshold_overrides().get(tenant)
        service.set_threshold(tenant, None)
        log.info("cache.admin.threshold", admin=_who(request), tenant=tenant, threshold=None, previous=previous)
        return _json({"tenant": tenant, "threshold_override": None, "previous": previous})

    async def export(request: web.Request) -> web.StreamResponse:
        tenant = _tenant(request)
        if (down := unavailable()) is not None:
            return down
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson",
                                               "Content-Disposition": f'attachment; filename="cache-{tenant}.jsonl"'})
        await response.prepare(request)
        count = 0
        async for entry in service.entries(tenant):
            await response.write(orjson.dumps(entry.to_dict()) + b"\n")
            count += 1
        await response.write_eof()
        log.info("cache.admin.export", admin=_who(request), tenant=tenant, entries=count)
        return response

    async def import_entries(request: web.Request) -> web.Response:
        tenant = _tenant(request)
        if (down := unavailable()) is not None:
            return down
        who, policy = _who(request), policy_of(tenant)
        imported, errors, line_no = 0, [], 0
        started = time.perf_counter()

        def audit(**outcome) -> None:  # every import is logged, also one the store cut short
            log.info("cache.admin.import", admin=who, tenant=tenant, imported=imported, errors=len(errors),
                     seconds=round(time.perf_counter() - started, 3), **outcome)

        try:
            async for raw in body_lines(request.content, MAX_IMPORT_LINE):  # streamed: imports can be large
                line_no += 1
                if raw is None:
                    errors.append({"line": line_no, "error": f"longer than {MAX_IMPORT_LINE} bytes"})
                    continue
                line = raw.strip()
                if not line:
                    continue
                try:
                    await service.import_entry(tenant, orjson.loads(line), who=who, policy=policy)
                    imported += 1
                except orjson.JSONDecodeError as exc:
                    errors.append({"line": line_no, "error": f"not valid JSON: {exc}"[:300]})
                except BadImportLine as exc:
                    errors.append({"line": line_no, "error": str(exc)[:300]})
                except ConnectionError:
                    audit(stopped_at_line=line_no)
                    return _error(503, f"cache store became unavailable at line {line_no}; {imported} entries "
                                       f"were imported before it", "service_unavailable", code="cache_store_down")
        except (RequestPayloadError, HttpProcessingError):  # a body that is cut short or mis-encoded
            audit(stopped_at_line=line_no + 1)
            return _error(400, f"the request body could not be read past line {line_no}; {imported} entries "
                               f"were imported before it", param="body", code="unreadable_body")
        audit()
        result = {"imported": imported, "errors": errors[:100], "error_count": len(errors)}
        if errors and not imported:
            first = errors[0]
            body = orjson.loads(error_body(f"no entry imported: {len(errors)} bad lines; line {first['line']}: "
                                           f"{first['error']}", "invalid_request_error", "body", "invalid_import"))
            return _json({**body, **result}, 400)
        return _json(result)

    def guarded(handler):
        async def run(request: web.Request) -> web.StreamResponse:
            try:
                return await handler(request)
            except BadRequest as exc:
                return _error(400, exc.message, param=exc.param)
            except NoEncoder:
                return _error(503, "the encoder is not loaded yet: semantic search is unavailable",
                              "service_unavailable", code="encoder_not_ready")
        return run

    async def openapi(request: web.Request) -> web.Response:
        return web.Response(body=OPENAPI_SPEC.read_bytes(), content_type="application/yaml")

    base = "/admin/cache"
    routes = [
        web.get(f"{base}/openapi.yaml", openapi),
        web.get(f"{base}/tenants", tenants),
        web.get(f"{base}/{{tenant}}/stats", stats),
        web.get(f"{base}/{{tenant}}/entries", list_entries),
        web.get(f"{base}/{{tenant}}/entries/{{entry_id}}", get_entry),
        web.delete(f"{base}/{{tenant}}/entries/{{entry_id}}", delete_entry),
        web.post(f"{base}/{{tenant}}/delete", delete_many),
        web.delete(f"{base}/{{tenant}}", flush),
        web.post(f"{base}/{{tenant}}/flush", flush),
        web.get(f"{base}/{{tenant}}/threshold", get_threshold),
        web.put(f"{base}/{{tenant}}/threshold", put_threshold),
        web.delete(f"{base}/{{tenant}}/threshold", delete_threshold),
        web.get(f"{base}/{{tenant}}/export", export),
        web.post(f"{base}/{{tenant}}/import", import_entries),
    ]
    return [web.route(r.method, r.path, guarded(r.handler)) for r in routes]
