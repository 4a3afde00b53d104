"""Authentication dependencies: API keys (x-api-key) with scopes, and owner sessions (Authorization: Bearer)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Request

from backend.config import Settings
from backend.errors import ApiError
from backend.services import keys as keys_service
from backend.services import ratelimit, security
from backend.services.scopes import ALL_SCOPES, satisfies
from backend.store.models import Owner


@dataclass
class AuthContext:
    """Who is calling: the workspace reached, and through which credential."""

    workspace_id: str
    scopes: tuple[str, ...]
    key_id: str | None = None
    owner_id: str | None = None
    is_session: bool = False
    is_operator: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


async def get_settings(request: Request) -> Settings:
    # async: a plain `def` dependency would be run in the thread pool (a thread hop for an attribute read)
    settings: Settings = request.app.state.settings  # set by create_app
    return settings


SettingsDep = Annotated[Settings, Depends(get_settings)]


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "invalid_session", "Authorization must be 'Bearer <session token>'")
    return token.strip()


def _session_context(request: Request, token: str) -> AuthContext:
    secret = request.app.state.session_secret
    claims = security.decode_session(secret, token)

    owner = Owner.get_or_none(Owner.id == claims["sub"])
    if owner is None or owner.workspace_id != claims["ws"]:
        raise ApiError(401, "invalid_session", "the session's owner no longer exists: log in again")
    return AuthContext(
        workspace_id=claims["ws"],
        scopes=ALL_SCOPES,
        owner_id=owner.id,
        is_session=True,
        is_operator=bool(claims.get("op")),
    )


def require_session(request: Request) -> AuthContext:
    """Key management and other dashboard actions: an owner session only; an API key is refused."""
    token = _bearer(request)
    if token is None:
        if request.headers.get("x-api-key"):
            raise ApiError(
                403,
                "session_required",
                "this route needs the owner's dashboard session (Authorization: Bearer <session "
                "token>), not an API key. Get one with POST /v1/auth/login",
            )
        raise ApiError(
            401,
            "session_required",
            "log in first: POST /v1/auth/login, then send Authorization: Bearer <session token>",
        )
    return _session_context(request, token)


def key_context(request: Request, presented: str, scope: str) -> AuthContext:
    """An API key presented in x-api-key: authenticated, counted against its per-minute budget (429
    rate_limit_exceeded) and checked for `scope` (403 insufficient_scope)."""
    key = keys_service.authenticate(presented.strip())
    settings: Settings = request.app.state.settings
    decision = ratelimit.hit(f"key:{key.id}", settings.rate_limit_per_minute)
    # Added to whatever response this request ends with (ApiMiddleware), including
    # routes that return a Response object directly.
    request.state.ratelimit_headers = decision.headers()
    if not decision.allowed:
        raise ApiError(
            429,
            "rate_limit_exceeded",
            f"more than {decision.limit} requests a minute with this key: "
            f"wait {decision.reset_s} s (see Retry-After)",
            headers=decision.headers(),
        )
    if not satisfies(key.scopes, scope):
        raise ApiError(
            403,
            "insufficient_scope",
            f"this API key lacks the scope {scope!r}",
            [{"required": scope, "held": list(key.scopes)}],
        )
    return AuthContext(workspace_id=key.workspace_id, scopes=tuple(key.scopes), key_id=key.id)


def require_scope(scope: str) -> Callable[..., AuthContext]:
    """An API key holding `scope` (or a scope implying it), or an owner session (which holds every scope).

    Each API-key request counts against the key's per-minute budget (429 rate_limit_exceeded).
    """
    if scope not in ALL_SCOPES:
        raise ValueError(f"unknown scope {scope}")

    def dependency(request: Request) -> AuthContext:
        # A plain `def`: FastAPI runs it in the thread pool, so its statements (key by hash, the rate-limit
        # upsert) never block the event loop, even while SQLite's write lock is busy.
        presented = request.headers.get("x-api-key")
        if presented is None:
            token = _bearer(request)
            if token is not None:
                return _session_context(request, token)
            raise ApiError(401, "invalid_api_key", "send your API key in the x-api-key header")
        return key_context(request, presented, scope)

    dependency.__name__ = f"require_{scope.replace(':', '_')}"
    dependency.required_scope = scope  # type: ignore[attr-defined]  # read back by the tests that walk the routes by their scope
    return dependency


SessionAuth = Annotated[AuthContext, Depends(require_session)]
