"""Shared wire-format helpers: camelCase on the wire, snake_case in Python."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class CamelModel(BaseModel):
    """Base for request and response bodies. Unknown request fields are refused."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class CamelOut(BaseModel):
    """Base for response bodies (serialised by alias)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class Ok(BaseModel):
    ok: bool = True


class ErrorBody(BaseModel):
    """The error envelope of every non-2xx response."""

    error: str = Field(description="stable machine-readable code")
    message: str = Field(description="what happened and what to do, in plain words")
    details: list[dict[str, Any]] = Field(default_factory=list)
