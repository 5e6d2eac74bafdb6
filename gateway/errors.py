"""Client-facing errors in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`.

Every error the gateway returns goes through `APIError`, so the status, type and code stay consistent
with what the official SDKs map to exception classes (400 BadRequestError, 401 AuthenticationError,
403 PermissionDeniedError, 404 NotFoundError, 413/422 APIStatusError, 429 RateLimitError, 5xx
InternalServerError). Messages are written for the client: no tracebacks, keys or paths.
"""

from __future__ import annotations

from aiohttp import web

from backends.wire import error_body

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "invalid_request_error",
    405: "invalid_request_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    429: "rate_limit_error",
    500: "server_error",
    502: "upstream_error",
    503: "service_unavailable",
    504: "timeout_error",
}


class APIError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: str | None = None,
        param: str | None = None,
        type: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.param = param
        self.type = type or _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
        self.headers = headers or {}

    def body(self) -> bytes:
        return error_body(self.message, self.type, self.param, self.code)

    def response(self, extra_headers: dict[str, str] | None = None) -> web.Response:
        headers = dict(self.headers)
        if extra_headers:
            headers.update(extra_headers)
        return web.Response(status=self.status, body=self.body(), content_type="application/json", headers=headers)
