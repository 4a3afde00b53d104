"""Shared wire-format helpers: camelCase on the wire, snake_case in Python."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

# A network's name (spec 1: a target of POST /v1/posts, `platform` everywhere). The networks are the registry's
# (backend/networks/registry.py), which the wire format does not import: in Python any string, and in the OpenAPI
# document (and a recipe's JSON Schema) the enum of the networks the server has, filled in where this mark stands
# (`fill_network_enums`). The services check a name where it matters (an unknown target: `invalid_target`).
NETWORK_MARK = "x-socialpub-network"
NetworkName = Annotated[str, Field(max_length=100, json_schema_extra={NETWORK_MARK: True})]


def fill_network_enums(node: Any, names: Sequence[str]) -> Any:
    """`node` (a JSON Schema or an OpenAPI document) with the enum of `names` wherever a network's name is marked."""
    if isinstance(node, dict):
        out = {k: fill_network_enums(v, names) for k, v in node.items() if k != NETWORK_MARK}
        if node.get(NETWORK_MARK):
            out["enum"] = list(names)
        return out
    if isinstance(node, list):
        return [fill_network_enums(v, names) for v in node]
    return node


# Wire types: plain strings in Python, with their format stated in the OpenAPI document.
Timestamp = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
"""ISO 8601 in UTC (`2030-01-01T09:00:00.000Z`)."""
Url = Annotated[str, Field(json_schema_extra={"format": "uri"})]


def cursor_pattern(tag: str, id_prefix: str) -> str:
    """A list's cursor, exactly (backend.services.cursors): `<tag>.<the last row's id>`, given as `nextCursor`,
    passed back as `cursor`. The document states it whole, so that every string it allows is a cursor the API
    takes (a forged one that matches merely pages from that id)."""
    return rf"^{tag}\.{id_prefix}_[0-9a-z]{{26}}$"


MEDIA_CURSOR = cursor_pattern("m1", "med")
GENERATION_CURSOR = cursor_pattern("g1", "gen")
CREDIT_CURSOR = cursor_pattern("c1", "cre")
DELIVERY_CURSOR = cursor_pattern("d1", "whd")
# a post list's cursor is a position in either order: the section (s: scheduled, r: the rest), the due time (µs
# since 1970, clamped to the dates the store holds) and the post's id (backend.services.posts)
POST_CURSOR = r"^p1\.[sr]\.-?[0-9]{1,18}\.post_[0-9a-z]{26}$"


def not_nullable(*names: str):  # type: ignore[no-untyped-def]  # returns pydantic's json_schema_extra callable, whose type pydantic does not export
    """A json_schema_extra for PATCH bodies: these fields may be left out, never sent as null (the service
    answers null with 400 `validation_error`); the document says so (no `null` branch, no default)."""

    def extra(schema: dict[str, Any]) -> None:
        for name in names:
            prop = schema["properties"][name]
            branches = [b for b in prop.pop("anyOf", []) if b.get("type") != "null"]
            if len(branches) == 1:
                prop.update(branches[0])
            elif branches:
                prop["anyOf"] = branches
            prop.pop("default", None)

    return extra


def _unstorable(value: Any) -> str | None:
    """Why a string in `value` (nested in lists and dicts, keys included) cannot be stored, or None. JSON text may
    carry a NUL (`\\u0000`) or a lone UTF-16 surrogate (`\\ud800` without its pair): neither is a character the
    store (UTF-8) can hold."""
    if isinstance(value, str):
        if "\x00" in value:
            return "the NUL character is not allowed"
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return (
                    "a lone UTF-16 surrogate (a \\ud800-\\udfff escape without its pair) is not a character: "
                    "send the pair, or the character itself"
                )
        return None
    if isinstance(value, list | tuple):
        return next((why for v in value if (why := _unstorable(v))), None)
    if isinstance(value, dict):
        return next((why for k, v in value.items() if (why := _unstorable(k) or _unstorable(v))), None)
    return None


class CamelModel(BaseModel):
    """Base for request bodies. Unknown fields are refused; so are NUL characters and lone surrogates in every
    string. Strict: a JSON value must have the field's type — no string for a number (`"durationSec": "10"`), no
    number for a string, no boolean for an integer, no 10.0 for an integer — 400 `validation_error` naming the
    field. (Query parameters are not models of this base: they are strings on the wire and stay lax.)"""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", strict=True)

    @field_validator("*", mode="before")
    @classmethod
    def _refuse_unstorable(cls, value: Any) -> Any:
        why = _unstorable(value)
        if why:
            raise ValueError(why)
        return value


class CamelOut(BaseModel):
    """Base for response bodies (serialised by alias). Built on first use (`defer_build`): the routes encode
    their answers themselves, so a response model is needed only by the OpenAPI document and the client that
    parses it — not at start-up."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, defer_build=True)


class Ok(BaseModel):
    model_config = ConfigDict(defer_build=True)
    ok: bool = True


class ErrorBody(BaseModel):
    """The error envelope of every non-2xx response."""

    model_config = ConfigDict(defer_build=True)

    error: str = Field(description="stable machine-readable code")
    message: str = Field(description="what happened and what to do, in plain words")
    details: list[dict[str, Any]] = Field(default_factory=list)
