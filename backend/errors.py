"""Errors are values with codes: ApiError and the JSON envelope {error, message, details}."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An error a client can act on. Rendered as {error, message, details} with `status`."""

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
        self.details = details or []
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {"error": self.code, "message": self.message, "details": self.details}

    def __repr__(self) -> str:
        return f"ApiError({self.status}, {self.code!r}, {self.message!r})"


def not_found(what: str, code: str = "not_found") -> ApiError:
    return ApiError(404, code, f"{what} not found in this workspace")


def bad_request(code: str, message: str, details: list[dict[str, Any]] | None = None) -> ApiError:
    return ApiError(400, code, message, details)
