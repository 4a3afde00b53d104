"""The networks this server publishes to, for the API and the services: the registry (backend/networks/registry.py)
as the wire format sees it.

- `catalogue()`: GET /v1/networks (an extension): each network's name, label, badge, colour, limits, the JSON Schema
  of its options, whether it has a sandbox emulator.
- `post_options_model()`: the pydantic model of `options` in POST /v1/posts and PATCH /v1/posts/{id}: one optional
  field per network that takes options, its own model (the API's request bodies and the document use it).
- `parse_options(raw)`: a post's stored or given options, each network's checked by its model.
- `require_known(name, field)`: a network's name where only a registered one may stand (400 `validation_error`).
- `check_settings(settings)`: what the configuration says of the networks makes sense (SOCIALPUB_MEDIA_BY_URL).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field, ValidationError, create_model

from backend.config import Settings
from backend.errors import ApiError
from backend.networks import registry
from backend.schemas.options import WireModel


def names() -> tuple[str, ...]:
    return registry.names()


def label(name: str) -> str:
    return registry.label(name)


def catalogue() -> list[dict[str, Any]]:
    """GET /v1/networks: every registered network, built-ins first (its wire form, camelCase)."""
    return list(_catalogue())


@functools.cache
def _catalogue() -> tuple[dict[str, Any], ...]:
    out = []
    for n in registry.networks():
        model = n.options_model()
        out.append(
            {
                "name": n.name,
                "label": n.label,
                "badge": n.badge,
                "colour": n.colour,
                "limits": n.limits.model_dump(by_alias=True),
                "options": model.model_json_schema(by_alias=True) if model is not None else None,
                "sandbox": n.emulator is not None,
                "builtin": n.builtin,
            }
        )
    return tuple(out)


def require_known(name: str | None, field: str) -> None:
    """400 `validation_error` naming `field` when `name` is not a registered network (None passes: not given)."""
    if name is None or registry.find(name) is not None:
        return
    known = names()
    choices = ", ".join(repr(n) for n in known[:-1]) + (
        f" or {known[-1]!r}" if len(known) > 1 else repr(known[0])
    )
    message = f"Input should be {choices}"
    raise ApiError(
        400,
        "validation_error",
        f"{field}: {message}",
        [{"field": field, "error": "literal_error", "message": message}],
    )


@functools.cache
def post_options_model() -> type[BaseModel]:
    """`options` of POST /v1/posts: each network's own options, as its package's model (unknown keys refused)."""
    fields: dict[str, Any] = {}
    for n in registry.networks():
        model = n.options_model()
        if model is not None:
            fields[n.name] = (model | None, Field(default=None, alias=n.name))
    built: type[BaseModel] = create_model(
        "PostOptions",
        __base__=WireModel,
        __doc__="`options` of POST /v1/posts: per network, its own settings (GET /v1/networks gives each one's "
        "JSON Schema); only the networks named here take any.",
        **fields,
    )
    return built


def parse_options(raw: Mapping[str, Any] | BaseModel | None) -> dict[str, Any]:
    """The post's options, each network's as its model: {name: model}. 400 `validation_error` when one is refused
    (the API checked them already; stored options are re-read here)."""
    if isinstance(raw, BaseModel):
        return {k: v for k, v in raw if v is not None}
    try:
        parsed = post_options_model().model_validate(dict(raw or {}))
    except ValidationError as exc:
        details = [
            {
                "field": ".".join(str(p) for p in ("options", *e["loc"])),
                "error": e["type"],
                "message": e["msg"],
            }
            for e in exc.errors(include_url=False)
        ]
        raise ApiError(
            400, "validation_error", f"invalid options: {details[0]['message']}", details
        ) from None
    return {k: v for k, v in parsed if v is not None}


def wire_options(parsed: Mapping[str, Any]) -> dict[str, Any]:
    """Parsed options back to their wire form ({"network": {camelCase: value}}), as stored with the post."""
    return {name: model.model_dump(by_alias=True, exclude_none=True) for name, model in parsed.items()}


def check_settings(settings: Settings) -> None:
    """ValueError naming the setting when the configuration names networks wrongly (the service's start-up)."""
    allowed = [n.name for n in registry.networks() if n.media_by_url]
    unknown = sorted(settings.media_by_url_networks - set(allowed))
    if unknown:
        raise ValueError(
            f"SOCIALPUB_MEDIA_BY_URL: {', '.join(unknown)} cannot be chosen: comma-separated names "
            f"among {', '.join(allowed)}"
        )
