"""The one exception a client caller handles: ApiError(status, code, message, details).

Hierarchy (everything a client call can raise):

    ApiError                  an error answer of the API, in its envelope {error, message, details}
    ├── NetworkError          status 0: the backend could not be reached or the connection broke
    └── ConfigError           status 0: no usable backend configured (bad profile, data dir not initialised)
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An API error: HTTP `status`, stable `code` (the spec's error codes), `message`, `details`."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details: list[dict[str, Any]] = list(details or [])
        self.headers: dict[str, str] = dict(headers or {})

    def body(self) -> dict[str, Any]:
        """The error as the envelope the API uses (what `--json` prints on stderr)."""
        out: dict[str, Any] = {"error": self.code, "message": self.message, "details": self.details}
        if self.status:
            out["status"] = self.status
        return out

    def __str__(self) -> str:
        head = (
            f"{self.code}: {self.message}"
            if self.status == 0
            else f"{self.status} {self.code}: {self.message}"
        )
        return head

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, code={self.code!r}, message={self.message!r})"


class NetworkError(ApiError):
    """The backend could not be reached (connection refused, DNS, timeout, broken connection)."""

    def __init__(self, message: str, code: str = "network_error") -> None:
        super().__init__(0, code, message)


class ConfigError(ApiError):
    """No usable backend: unknown profile, missing API key, data dir not initialised."""

    def __init__(self, message: str, code: str = "config_error") -> None:
        super().__init__(0, code, message)


def from_response(status: int, body: Any, headers: dict[str, str] | None = None) -> ApiError:
    """Map an error response to ApiError; tolerate bodies that are not our envelope (proxies, other servers)."""
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        details = body.get("details")
        if not isinstance(details, list):
            details = [details] if isinstance(details, dict) else []
        message = body.get("message")
        return ApiError(
            status,
            body["error"],
            str(message) if message else body["error"],
            [d if isinstance(d, dict) else {"detail": d} for d in details],
            headers,
        )
    if isinstance(body, dict) and "detail" in body:  # a plain FastAPI/Starlette error from another service
        detail = body["detail"]
        return ApiError(
            status,
            _default_code(status),
            detail if isinstance(detail, str) else "request failed",
            detail if isinstance(detail, list) else [],
            headers,
        )
    text = body.strip()[:300] if isinstance(body, str) and body.strip() else "request failed"
    return ApiError(status, _default_code(status), text, [], headers)


def _default_code(status: int) -> str:
    return {
        400: "bad_request",
        401: "unauthorized",
        403: "forbidden",
        404: "not_found",
        405: "method_not_allowed",
        409: "conflict",
        413: "payload_too_large",
        429: "rate_limit_exceeded",
        500: "internal_error",
        502: "bad_gateway",
        503: "service_unavailable",
        504: "gateway_timeout",
    }.get(status, f"http_{status}")


class WaitTimeout(ApiError):
    """`wait_post` gave up before the post reached a final state; `.post` is the last state read."""

    def __init__(self, message: str, post: Any = None) -> None:
        super().__init__(0, "wait_timeout", message)
        self.post = post
