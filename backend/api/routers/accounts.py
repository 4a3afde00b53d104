"""Connected accounts (spec 4.7) and the session-authenticated extensions to connect / disconnect."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query
from starlette.convertors import Convertor, register_url_convertor

from backend.api.deps import AuthContext, SessionAuth, SettingsDep, require_scope
from backend.api.errors import responses
from backend.schemas.accounts import (
    AccountCheck,
    AccountChoices,
    AccountCreate,
    AccountList,
    AccountOut,
    ConnectedAccounts,
    DoctorReport,
    LoginConnect,
    OAuthConnect,
    OAuthFinish,
    OAuthFinished,
    OAuthStart,
    OAuthStarted,
    TokenConnect,
)
from backend.schemas.common import NetworkName
from backend.services import accounts as svc
from backend.services import choices, doctor, networks
from backend.services import oauth_connect as oauth_svc

router = APIRouter(tags=["accounts"])


class AccountId(Convertor[str]):
    """An account id in a path: any segment but the words the accounts router uses as paths of their own
    (`/accounts/doctor`), so that another method on those is 405 with `Allow`, not an account lookup."""

    regex = "(?!doctor(?:/|$))[^/]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("account_id", AccountId())


@router.get("/accounts", operation_id="listAccounts", response_model=AccountList, responses=responses())
def list_accounts(
    settings: SettingsDep, ctx: AuthContext = Depends(require_scope("accounts:read"))
) -> dict[str, Any]:
    """Connected accounts, grouped by network, oldest first; `isDefault` marks each network's default;
    `tokenWarning` says what needs doing about a live account's authorisation."""
    return svc.listing(ctx.workspace_id, settings)


@router.get(
    "/accounts/doctor", operation_id="accountsDoctor", response_model=DoctorReport, responses=responses()
)
def accounts_doctor(
    settings: SettingsDep,
    platform: NetworkName | None = Query(None, description="only this network and its accounts"),
    ctx: AuthContext = Depends(require_scope("accounts:read")),
) -> dict[str, Any]:
    """Extension: what stands between this installation and publishing — each network's configured app
    (credentials, API version lifecycle, its own checks) and each connected account (token, granted scopes).
    Each finding says what to do; `ok` is false when any is an error. 400 `validation_error` (unknown
    platform)."""
    return doctor.report(ctx.workspace_id, settings, platform)


@router.post(
    "/accounts",
    operation_id="connectAccount",
    status_code=201,
    response_model=AccountOut,
    responses=responses(402),
)
def connect_account(body: AccountCreate, ctx: SessionAuth, settings: SettingsDep) -> dict[str, Any]:
    """Extension (owner session): connect a sandbox account. 402 `channel_limit_exceeded` over the plan."""
    networks.require_known(body.platform, "platform")
    acc = svc.connect_sandbox(settings, ctx.workspace_id, body.platform, body.name, body.behaviour)
    defaults = svc.default_ids(svc.active_accounts(ctx.workspace_id))
    return svc.to_public(acc, acc.id in defaults, settings)


@router.delete(
    "/accounts/{account_id:account_id}",
    operation_id="disconnectAccount",
    response_model=AccountOut,
    responses=responses(404),
)
def disconnect_account(account_id: str, ctx: SessionAuth, settings: SettingsDep) -> dict[str, Any]:
    """Extension (owner session): disconnect an account (frees a slot of the plan; posts keep its name) and revoke
    its token at the network where it offers that, best effort (`tokenRevocation`)."""
    acc, revocation = oauth_svc.disconnect(ctx.workspace_id, settings, account_id)
    return svc.to_public(acc, False, settings) | {"tokenRevocation": revocation}


# --- live accounts: OAuth, tokens from elsewhere, health (docs/accounts.md) ------------------------------------------
@router.post(
    "/accounts/oauth/start",
    operation_id="startAccountOAuth",
    response_model=OAuthStarted,
    responses=responses(),
)
def oauth_start(body: OAuthStart, settings: SettingsDep, ctx: SessionAuth) -> dict[str, Any]:
    """Extension (owner session): start connecting live accounts with OAuth. 400 `oauth_not_configured` (the
    network's app credentials are not set), `app_not_ready` (`accounts doctor`'s app checks found an error: each
    in the details with its fix), `invalid_redirect_uri`; a network made of many servers (Mastodon) takes the
    server as `instance`: `instance_required`, `invalid_instance`, `instance_refused` (the address rule, or the
    server is not one of the network's), 502 `network_error`."""
    networks.require_known(body.platform, "platform")
    return oauth_svc.start(
        ctx.workspace_id, settings, body.platform, body.redirect_uri, body.name, instance=body.instance
    )


@router.post(
    "/accounts/oauth/finish",
    operation_id="finishAccountOAuth",
    response_model=OAuthFinished,
    responses=responses(502),
)
def oauth_finish(body: OAuthFinish, settings: SettingsDep, ctx: SessionAuth) -> dict[str, Any]:
    """Extension (owner session): exchange the code of the redirect and list the accounts the grant reaches. 400
    `invalid_oauth_state` (unknown, expired or used), `oauth_code_rejected`; 502 `network_error`."""
    return oauth_svc.finish(ctx.workspace_id, settings, body.state, body.code)


@router.post(
    "/accounts/oauth/{grant_id}/connect",
    operation_id="connectOAuthAccounts",
    status_code=201,
    response_model=ConnectedAccounts,
    responses=responses(402, 404),
)
def oauth_connect(
    grant_id: str, body: OAuthConnect, settings: SettingsDep, ctx: SessionAuth
) -> dict[str, Any]:
    """Extension (owner session): the accounts picked become live accounts (an account already connected gets
    the new token). 400 `invalid_oauth_state`, `unknown_external_id`; 402 `channel_limit_exceeded`."""
    return {"items": oauth_svc.connect(ctx.workspace_id, settings, grant_id, body.external_ids)}


@router.post(
    "/accounts/connect/token",
    operation_id="connectAccountToken",
    status_code=201,
    response_model=AccountOut,
    responses=responses(402, 409, 502),
)
def connect_token(body: TokenConnect, settings: SettingsDep, ctx: SessionAuth) -> dict[str, Any]:
    """Extension (owner session): connect a live account with a token obtained elsewhere. 400
    `invalid_access_token`, `unknown_external_id`, `no_account_found`; 409 `account_choice_required` (several
    accounts: the details list them); 402 `channel_limit_exceeded`; 502 `network_error`."""
    networks.require_known(body.platform, "platform")
    return oauth_svc.connect_token(
        ctx.workspace_id,
        settings,
        body.platform,
        body.access_token,
        body.refresh_token,
        body.expires_in,
        body.external_id,
        body.name,
    )


@router.post(
    "/accounts/connect/login",
    operation_id="connectAccountLogin",
    status_code=201,
    response_model=AccountOut,
    responses=responses(402, 502),
)
def connect_login(body: LoginConnect, settings: SettingsDep, ctx: SessionAuth) -> dict[str, Any]:
    """Extension (owner session): connect a live account of a network that takes a login (Bluesky: a handle and an
    app password; `service` its PDS when the handle does not resolve through the network's default server). 400
    `login_not_supported`, `invalid_credentials` (the network refused the identifier or password),
    `network_refused` (e.g. an account password instead of an app password); 402 `channel_limit_exceeded`; 502
    `network_error`."""
    networks.require_known(body.platform, "platform")
    return oauth_svc.connect_login(
        ctx.workspace_id, settings, body.platform, body.identifier, body.password, body.service, body.name
    )


@router.post(
    "/accounts/{account_id:account_id}/check",
    operation_id="checkAccount",
    response_model=AccountCheck,
    responses=responses(404),
)
def check_account(account_id: str, settings: SettingsDep, ctx: SessionAuth) -> dict[str, Any]:
    """Extension (owner session): try the account's token on its network's cheapest authenticated call; a dead
    grant marks the account `needs_reauth`."""
    return oauth_svc.check(ctx.workspace_id, settings, account_id)


@router.get(
    "/accounts/{account_id:account_id}/choices",
    operation_id="getAccountChoices",
    response_model=AccountChoices,
    responses=responses(404, 502),
)
def account_choices(
    account_id: str, settings: SettingsDep, ctx: AuthContext = Depends(require_scope("accounts:read"))
) -> dict[str, Any]:
    """Extension: what the account's network says its creator may choose now, per option of
    `options.<platform>` (TikTok: creator_info — the privacy levels this app may post with among those the
    account offers, the interactions the creator turned off, the longest video, the creator's nickname, the
    consent sentence). A network that tells none: `supported` false. Answers are kept 30 s. 404
    `account_not_found`; 400 `channel_not_connected` (reconnect it), `network_refused` (the network refused the
    call); 502 `network_error` (the network could not be reached: try again)."""
    return choices.account_choices(ctx.workspace_id, settings, account_id)
