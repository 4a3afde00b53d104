"""Connected accounts (spec 4.7) and the session-authenticated extensions to connect / disconnect."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from backend.api.deps import AuthContext, SessionAuth, SettingsDep, require_scope
from backend.api.errors import responses
from backend.schemas.accounts import AccountCreate, AccountList, AccountOut
from backend.services import accounts as svc

router = APIRouter(tags=["accounts"])


@router.get("/accounts", operation_id="listAccounts", response_model=AccountList, responses=responses())
def list_accounts(settings: SettingsDep, ctx: AuthContext = Depends(require_scope("accounts:read"))) -> dict[str, Any]:
    """Connected accounts, grouped by network, oldest first; `isDefault` marks each network's default;
    `tokenWarning` says what needs doing about a live account's authorisation."""
    return svc.listing(ctx.workspace_id, settings)


@router.post("/accounts", operation_id="connectAccount", status_code=201, response_model=AccountOut, responses=responses(402))
def connect_account(body: AccountCreate, ctx: SessionAuth, settings: SettingsDep) -> dict[str, Any]:
    """Extension (owner session): connect a sandbox account. 402 `channel_limit_exceeded` over the plan."""
    acc = svc.connect_sandbox(ctx.workspace_id, body.platform, body.name, body.behaviour)
    defaults = svc.default_ids(svc.active_accounts(ctx.workspace_id))
    return svc.to_public(acc, acc.id in defaults, settings)


@router.delete("/accounts/{account_id}", operation_id="disconnectAccount", response_model=AccountOut, responses=responses(404))
def disconnect_account(account_id: str, ctx: SessionAuth, settings: SettingsDep) -> dict[str, Any]:
    """Extension (owner session): disconnect an account (frees a slot of the plan; posts keep its name)."""
    acc = svc.disconnect(ctx.workspace_id, account_id)
    return svc.to_public(acc, False, settings)
