"""Owner login: POST /v1/auth/login returns a signed session token (a documented extension, spec 5.1)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from backend import clock
from backend.api.errors import responses
from backend.errors import ApiError
from backend.schemas.auth import LoginRequest, SessionOut
from backend.services import ratelimit, security
from backend.store.models import Owner

router = APIRouter(tags=["auth"])


@router.post("/auth/login", operation_id="login", response_model=SessionOut, responses=responses())
def login(body: LoginRequest, request: Request) -> SessionOut:
    settings = request.app.state.settings
    email = body.email.strip().lower()
    decision = ratelimit.login_attempt(
        ratelimit.client_of(request.client.host if request.client else None), email
    )
    if not decision.allowed:
        raise ApiError(
            429,
            "rate_limit_exceeded",
            f"too many login attempts from this client: wait {decision.reset_s} s",
            headers=decision.headers(),
        )
    owner = Owner.get_or_none(Owner.email == email)
    # Verify a hash even for unknown emails so that timing does not reveal which emails exist.
    stored = owner.password_hash if owner else request.app.state.dummy_password_hash
    if not security.verify_password(body.password, stored) or owner is None:
        raise ApiError(401, "invalid_credentials", "wrong email or password")
    token, expires = security.issue_session(
        request.app.state.session_secret, owner.id, owner.workspace_id, settings.session_ttl_s
    )
    return SessionOut(
        session_token=token, expires_at=clock.iso(expires) or "", workspace_id=owner.workspace_id
    )
