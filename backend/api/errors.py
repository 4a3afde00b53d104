"""Exception handlers: every error leaves in the envelope {error, message, details} with a stable code."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import peewee
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from backend.errors import ApiError
from backend.schemas.common import ErrorBody

log = logging.getLogger("socialpub.api")

_HTTP_CODES = {
    400: ("bad_request", "the request could not be understood"),
    401: ("unauthorized", "authentication required"),
    403: ("forbidden", "not allowed"),
    404: ("not_found", "no such route: check the path and the /v1 prefix"),
    405: ("method_not_allowed", "this route does not accept that HTTP method"),
    406: ("not_acceptable", "cannot produce the requested representation"),
    408: ("request_timeout", "the request took too long to arrive"),
    413: ("payload_too_large", "request body too large"),
    415: ("unsupported_media_type", "send application/json"),
    429: ("rate_limit_exceeded", "too many requests"),
}


def _envelope(
    status: int,
    code: str,
    message: str,
    details: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    return JSONResponse(
        status_code=status,
        content={"error": code, "message": message, "details": details or []},
        headers=headers,
    )


# Where pydantic names the branch of a union it tried (`targets.0.constrained-str`, `targets.0.TargetRef.platform`,
# `function-after[...]`) rather than a field of the request: left out of a detail's `field`.
_BRANCH_TAG = re.compile(
    r"^(?:[a-z]+(?:-[a-z]+)*-(?:str|int|float|bool|python|after|before|wrap|plain)|.*\[.*\]|"
    r"[A-Z][A-Za-z0-9]*(?:Ref|Model|Options|Create|Patch|In|Out))$"
)


def _loc(loc: tuple[Any, ...]) -> str:
    parts = [
        str(p)
        for i, p in enumerate(loc)
        if not (i == 0 and p == "body") and not (isinstance(p, str) and _BRANCH_TAG.match(p))
    ]
    return ".".join(parts) if parts else "body"


def validation_details(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for err in errors:
        kind = str(err.get("type", "invalid"))
        message = re.sub(r" or instance of \w+$", "", str(err.get("msg", "invalid value")))
        loc = tuple(err.get("loc", ()))
        if kind == "json_invalid":  # its loc is ("body", <character offset>)
            at = loc[-1] if loc and isinstance(loc[-1], int) else None
            field, message = "body", message + (f" (at character {at})" if at is not None else "")
        else:
            field = _loc(loc)
        out.append({"field": field, "error": kind, "message": message})
    return out


_METHOD_ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE")


def _allow_table(app: Any) -> list[tuple[re.Pattern[str], str]]:
    """(path regex, Allow value) of every path of the OpenAPI document, built once per app."""
    table = getattr(app.state, "allow_table", None)
    if table is None:
        table = []
        for path, item in app.openapi().get("paths", {}).items():
            methods = {m.upper() for m in item if m.upper() in _METHOD_ORDER}
            if "GET" in methods:
                methods.add("HEAD")  # a GET's HEAD is answered for it (ApiMiddleware, /media/{key} its own)
            pattern = re.compile("^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(path)) + "$")
            table.append((pattern, ", ".join(m for m in _METHOD_ORDER if m in methods)))
        app.state.allow_table = table
    return table


def allowed_methods(request: Request) -> str:
    """The `Allow` header of a 405: every method the document declares for this path (Starlette's own header
    lists only the methods of the first route it matched, while GET, PATCH and DELETE of a path are three)."""
    path = request.url.path
    for pattern, allow in _allow_table(request.app):
        if pattern.match(path):
            return allow
    return ""


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return _envelope(exc.status, exc.code, exc.message, exc.details, exc.headers or None)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        if any(e.get("type") == "json_invalid" for e in errors):
            return _envelope(
                400, "invalid_json", "the request body is not valid JSON", validation_details(errors)
            )
        if (
            len(errors) == 1
            and errors[0].get("type") == "missing"
            and tuple(errors[0].get("loc", ())) == ("body",)
        ):
            return _envelope(
                400, "validation_error", "a JSON request body is required", validation_details(errors)
            )
        fields = ", ".join(sorted({d["field"] for d in validation_details(errors)}))
        return _envelope(400, "validation_error", f"invalid request: {fields}", validation_details(errors))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code, default = _HTTP_CODES.get(exc.status_code, ("http_error", "request failed"))
        message = exc.detail if isinstance(exc.detail, str) and exc.detail else default
        if exc.status_code == 400 and "parsing the body" in message:
            code, message = "invalid_body", "the request body could not be read as JSON"
        if exc.status_code == 404 and message == "Not Found":
            message = _HTTP_CODES[404][1]
        headers = getattr(exc, "headers", None)
        if exc.status_code == 405:
            allow = allowed_methods(request)
            message = f"{request.method} is not allowed here: use {allow}"
            headers = {**(headers or {}), "Allow": allow}
        return _envelope(exc.status_code, code, message, None, headers)

    @app.exception_handler(peewee.DataError)
    async def _data_error(request: Request, exc: peewee.DataError) -> JSONResponse:
        # A value the database cannot hold (NUL byte, out-of-range number) that slipped past validation.
        log.warning("data error on %s %s: %s", request.method, request.url.path, exc)
        return _envelope(
            400, "invalid_value", "a value in the request cannot be stored (e.g. a NUL character)"
        )

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        # Starlette raises the error again once this answer is sent, and the server then closes the connection:
        # `Connection: close` tells the client so, or its next request on that keep-alive connection is reset.
        return _envelope(
            500,
            "internal_error",
            "an unexpected error occurred; it has been logged",
            headers={"Connection": "close"},
        )


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "invalid request (validation_error, invalid_json, …)"},
    401: {
        "model": ErrorBody,
        "description": "invalid_api_key, api_key_revoked, api_key_expired, invalid_session",
    },
    403: {"model": ErrorBody, "description": "insufficient_scope, session_required"},
    408: {"model": ErrorBody, "description": "request_timeout (a request body too slow to arrive)"},
    413: {"model": ErrorBody, "description": "payload_too_large"},
    429: {"model": ErrorBody, "description": "rate_limit_exceeded (see Retry-After)"},
}


def responses(*extra: int) -> dict[int | str, dict[str, Any]]:
    """The common error responses plus route-specific statuses, for the OpenAPI document."""
    out = dict(ERROR_RESPONSES)
    for status in extra:
        out[status] = {
            "model": ErrorBody,
            "description": {
                402: "insufficient_credits, subscription_required, channel_limit_exceeded",
                404: "not found in this workspace",
                409: "conflict with the current state",
                502: "storage_error / upstream failure",
            }.get(status, "error"),
        }
    return out


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))
