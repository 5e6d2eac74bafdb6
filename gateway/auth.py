"""API key → tenant, and admin keys. Keys are only ever held as SHA-256 hashes."""

from __future__ import annotations

import hashlib

from aiohttp import web

from gateway.errors import APIError
from gateway.runtime import Principal, Runtime


def presented_key(request: web.Request) -> str | None:
    auth = request.headers.get("Authorization")
    if auth:
        scheme, _, key = auth.partition(" ")
        if scheme.lower() == "bearer" and key.strip():
            return key.strip()
        return None
    return request.headers.get("api-key") or request.headers.get("x-api-key")


def principal_for(request: web.Request, runtime: Runtime) -> Principal:
    key = presented_key(request)
    if key is None:
        raise APIError(401, "Missing API key: send it as 'Authorization: Bearer <key>'.", code="missing_api_key")
    principal = runtime.principals.get(hashlib.sha256(key.encode()).hexdigest())
    if principal is None:
        raise APIError(401, "Incorrect API key provided.", code="invalid_api_key")
    return principal


def admin_for(request: web.Request, runtime: Runtime) -> str:
    """The admin key's name; 401 without a key, 403 for a valid tenant key that is not an admin key."""
    key = presented_key(request)
    if key is None:
        raise APIError(401, "Missing admin key: send it as 'Authorization: Bearer <key>'.", code="missing_api_key")
    digest = hashlib.sha256(key.encode()).hexdigest()
    name = runtime.admins.get(digest)
    if name is not None:
        return name
    if digest in runtime.principals:
        raise APIError(403, "This key is not allowed to use admin endpoints.", code="admin_required")
    raise APIError(401, "Incorrect API key provided.", code="invalid_api_key")
