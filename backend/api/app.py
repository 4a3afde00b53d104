"""The FastAPI app factory: every path under /v1, OpenAPI at /openapi.json, docs at /docs."""

from __future__ import annotations

import importlib
import logging
from typing import Any

import anyio.to_thread
from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from backend.api.errors import install_error_handlers
from backend.api.middleware import ApiMiddleware, TrailingSlashRedirect
from backend.api.routers import HOST_ROUTERS, ROUTERS
from backend.config import Settings, get_settings
from backend.media.policy import log_policy
from backend.schemas.common import ErrorBody, fill_network_enums
from backend.services import networks, security
from backend.store.db import init_database

log = logging.getLogger("socialpub.api")


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app. The store is bound and migrated here. The worker is not part of the API: `socialpub serve`
    and the embedded backend start it beside the app (backend.operator.runtime)."""
    settings = settings or get_settings()
    networks.check_settings(
        settings
    )  # a configuration naming networks wrongly stops here, not at a publication
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
        redirect_slashes=False,  # TrailingSlashRedirect does it, with a relative Location (never from Host)
    )
    app.state.settings = settings
    app.state.session_secret = secret
    app.state.dummy_password_hash = security.dummy_password_hash()
    install_error_handlers(app)

    @app.get("/v1/health", operation_id="getHealth", tags=["meta"], include_in_schema=True)
    def health() -> dict[str, Any]:
        return {"ok": True, "version": app.version}

    routers = Routers(app)
    _openapi_without_422(app, routers)

    app.add_middleware(TrailingSlashRedirect, routes=lambda: app.router.routes)
    app.add_middleware(IncludeRouters, routers=routers)
    app.add_middleware(
        ApiMiddleware,
        default_limit=settings.max_body_bytes,
        limits={"/v1/media": settings.max_media_body_bytes},
        body_timeout_s=settings.server_body_timeout_s,
    )

    log_policy(settings)  # says loudly when SOCIALPUB_ALLOW_PRIVATE_URLS=1 lifts the address rule
    return app


_PATHS = ROUTERS | HOST_ROUTERS  # module -> the path its routes live under


class Routers:
    """The resource routers (backend.api.routers), each imported and included on the first request under its
    path: a router module with the schemas and services it brings costs ~5-100 ms to import and build (the media
    one brings the image and download pipelines), and an app that serves the posts need not pay for the others
    first — the TUI's launch, a CLI command, `serve`'s start. A request under no router's path, and the OpenAPI
    document, include them all first, so every answer is the one the whole app gives (a 404, a 405)."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        self.pending = dict.fromkeys(_PATHS)  # the modules not included yet

    def modules_for(self, path: str) -> list[str]:
        """The routers to include before answering `path`: its own when not included yet (none when it is); for
        a path no router holds, every router not included yet."""
        for module, prefix in _PATHS.items():
            if path.startswith(prefix) and path[len(prefix) : len(prefix) + 1] in ("", "/"):
                return [module] if module in self.pending else []
        return list(self.pending)

    def include(self, modules: list[str]) -> None:
        """Import (if not yet) and include `modules`, those not included yet (call it on the event loop's thread,
        or before the app serves: FastAPI's route list is not changed from two threads at once)."""
        for module in modules:
            if module not in self.pending:
                continue
            imported = importlib.import_module(module)
            del self.pending[module]
            if module in ROUTERS:
                # Each router is included with the /v1 prefix directly (not through a /v1 router): FastAPI walks
                # the routers included in an included router on every request: one level less is ~15-25 us.
                self.app.include_router(imported.router, prefix="/v1")
            else:
                self.app.include_router(imported.host_router)

    def include_all(self) -> None:
        self.include(list(self.pending))


class IncludeRouters:
    """ASGI middleware: before a request reaches the routes, the router that holds its path is included
    (`Routers`); the module is imported in a worker thread, so the event loop keeps serving meanwhile. Once every
    router is in, it only passes requests on."""

    def __init__(self, app: ASGIApp, routers: Routers) -> None:
        self.app = app
        self.routers = routers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.routers.pending and scope["type"] == "http":
            modules = self.routers.modules_for(scope["path"])
            if modules:
                await anyio.to_thread.run_sync(_import_all, modules)
                self.routers.include(modules)
        await self.app(scope, receive, send)


def _import_all(modules: list[str]) -> None:
    for module in modules:
        importlib.import_module(module)


def _openapi_without_422(app: FastAPI, routers: Routers) -> None:
    """We answer validation failures with 400 `validation_error`, never 422: say so in the document."""
    from fastapi.openapi.utils import get_openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        routers.include_all()  # the document describes every path
        doc: dict[str, Any] = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        doc = fill_network_enums(doc, networks.names())  # the registry's networks, plugins included
        schemas = doc.setdefault("components", {}).setdefault("schemas", {})
        schemas.setdefault("ErrorBody", ErrorBody.model_json_schema())
        for path_item in doc.get("paths", {}).values():
            for operation in path_item.values():
                responses = operation.get("responses", {})
                if responses.pop("422", None) is not None and "400" not in responses:
                    responses["400"] = {
                        "description": "invalid request (validation_error)",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}
                        },
                    }
        for name in ("HTTPValidationError", "ValidationError"):
            schemas.pop(name, None)
        _no_nul(doc)
        for path_item in doc.get("paths", {}).values():
            for operation in path_item.values():
                unstated = UNSTATED_RULES.get(operation.get("operationId", ""))
                if unstated:
                    operation["description"] = (
                        operation.get("description", "").rstrip() + "\n\n**Not stated by the schema** (a "
                        "request it allows may still be refused with the code named): " + unstated
                    )
        app.openapi_schema = doc
        return doc

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to extend the OpenAPI document is replacing app.openapi


# The rules of an operation that no JSON Schema can state: they depend on the store, the clock, the server's
# configuration or another server. The document names them in the operation's description; `make fuzz` excludes
# these operations, by name, from its check that every request the schema allows is accepted
# (tests/api/schemathesis.toml lists the same operations: tests/api/test_openapi_contract.py compares them).
UNSTATED_RULES: dict[str, str] = {
    "createPost": "each target's network rules as they apply to the workspace's accounts and this text and media "
    "(`invalid_targets`: `channel_not_connected` for a channelId that names no account of the workspace, "
    "`media_unreadable` for a media URL that cannot be read, `media_required_for_target`, "
    "`content_required_for_target`, `video_out_of_range_for_target` … per network), `scheduled_at_in_past` "
    "(the clock); 409 `idempotency_key_reused` (a key already used with another body).",
    "updatePost": "the same per-target rules as on creation, for the post's accounts and the new text or media "
    "(`invalid_targets`), `scheduled_at_in_past` (the clock).",
    "uploadMedia": "the file must be an image or a video that decodes (`unsupported_media_type`, `not_an_image`, "
    "`not_a_video`, `invalid_base64` for base64 that does not decode to one), and a `url` must be reachable "
    "(`fetch_failed`).",
    "publishTiktokPhoto": "each URL must name a file ingested into this workspace through POST /v1/media "
    "(`media_not_on_media_host`, `media_unreadable`, `unsupported_media_type`), and a live account must reach it.",
    "publishTiktokVideo": "the URL must name a video ingested into this workspace through POST /v1/media "
    "(`media_not_on_media_host`, `media_unreadable`, `unsupported_media_type`), and a live account must reach it.",
    "connectAccount": "402 `channel_limit_exceeded` once the plan's accounts are connected.",
    "createGeneration": "a start image (`sourceUrls`) must be readable: a file of this workspace's media host or "
    "a public https image (`source_url_unreadable`, `source_not_an_image`); 402 `insufficient_credits` "
    "when the balance does not cover it.",
    "createWebhook": "the URL's host must resolve to a public address (`invalid_webhook_url`); 409 "
    "`webhook_limit_reached`.",
    "updateWebhook": "the URL's host must resolve to a public address (`invalid_webhook_url`).",
    "finishAccountOAuth": "the state must be one this server gave, unused and unexpired (`invalid_oauth_state`); "
    "the network must accept the code (`oauth_code_rejected`).",
    "connectOAuthAccounts": "the grant must be one this server holds (`invalid_oauth_state`) and reach each "
    "external id (`unknown_external_id`); 402 `channel_limit_exceeded`.",
    "connectAccountToken": "the network must accept the token (`invalid_access_token`, `network_refused`) and it "
    "must reach an account (`no_account_found`, `unknown_external_id`); 402 `channel_limit_exceeded`; a network "
    "that connects with a login takes no token (`oauth_not_supported`).",
    "startAccountOAuth": "the network must connect by OAuth (`oauth_not_supported` for one that takes a login) and "
    "its app be configured and ready on this server (`oauth_not_configured`, `app_not_ready`: the doctor's errors).",
    "connectAccountLogin": "the network must connect with a login (`login_not_supported`), and the account's "
    "server must open a session for it (`invalid_credentials`, `network_refused`, `service_unreachable` for a named `service` that cannot be reached); 402 `channel_limit_exceeded`.",
}

NO_NUL = "^[^\\u0000]*$"
"""Every string the API reads refuses the NUL character (400 validation_error): the document states it on each
string it gives no other pattern, enum, constant or format."""


def _no_nul(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("type") == "string" and not {"pattern", "enum", "const", "format"} & node.keys():
            node["pattern"] = NO_NUL
        for value in node.values():
            _no_nul(value)
    elif isinstance(node, list):
        for value in node:
            _no_nul(value)
