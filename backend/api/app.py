"""The FastAPI app factory: every path under /v1, OpenAPI at /openapi.json, docs at /docs."""

from __future__ import annotations

import importlib
import logging
from typing import Any

from fastapi import FastAPI

from backend.api.errors import install_error_handlers
from backend.api.middleware import BodyLimitMiddleware, RateLimitHeadersMiddleware
from backend.api.routers import HOST_ROUTERS, ROUTERS
from backend.config import Settings, get_settings
from backend.services import security
from backend.store.db import init_database

log = logging.getLogger("socialpub.api")


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app. The store is bound and migrated here. The worker is not part of the API: `socialpub serve`
    and the embedded backend start it beside the app (backend.operator.runtime)."""
    settings = settings or get_settings()
    init_database(settings)
    secret = security.load_secret(settings)

    app = FastAPI(
        title="socialpub",
        version="1.0.0",
        description="Social publishing and content-creation service: the /v1 API. "
        "API keys go in `x-api-key`; key management uses an owner session (`Authorization: Bearer`). "
        "Every error is `{error, message, details}` with a stable code; no string may contain the NUL character "
        "(400 validation_error); a method a path does not offer is 405 with `Allow`.",
        openapi_url="/openapi.json",
        docs_url="/docs",
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.session_secret = secret
    app.state.dummy_password_hash = security.dummy_password_hash()
    install_error_handlers(app)

    # Each router is included with the /v1 prefix directly (not through a /v1 router): FastAPI walks the
    # routers included in an included router on every request: one level less is ~15-25 us per request.
    for module_name in ROUTERS:
        app.include_router(importlib.import_module(module_name).router, prefix="/v1")

    @app.get("/v1/health", operation_id="getHealth", tags=["meta"], include_in_schema=True)
    def health() -> dict[str, Any]:
        return {"ok": True, "version": app.version}

    _openapi_without_422(app)
    for module_name in HOST_ROUTERS:
        app.include_router(importlib.import_module(module_name).host_router)

    app.add_middleware(RateLimitHeadersMiddleware)
    app.add_middleware(
        BodyLimitMiddleware,
        default_limit=settings.max_body_bytes,
        limits={"/v1/media": settings.max_media_body_bytes},
    )
    from backend.media.fetch import log_policy

    log_policy(settings)  # says loudly when SOCIALPUB_ALLOW_PRIVATE_URLS=1 lifts the address rule
    return app


def _openapi_without_422(app: FastAPI) -> None:
    """We answer validation failures with 400 `validation_error`, never 422: say so in the document."""
    from fastapi.openapi.utils import get_openapi

    from backend.schemas.common import ErrorBody

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        doc = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        schemas = doc.setdefault("components", {}).setdefault("schemas", {})
        schemas.setdefault("ErrorBody", ErrorBody.model_json_schema())
        for path_item in doc.get("paths", {}).values():
            for operation in path_item.values():
                responses = operation.get("responses", {})
                if responses.pop("422", None) is not None and "400" not in responses:
                    responses["400"] = {"description": "invalid request (validation_error)",
                                        "content": {"application/json": {
                                            "schema": {"$ref": "#/components/schemas/ErrorBody"}}}}
        for name in ("HTTPValidationError", "ValidationError"):
            schemas.pop(name, None)
        app.openapi_schema = doc
        return doc

    app.openapi = openapi  # type: ignore[method-assign]
