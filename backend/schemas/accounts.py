"""Connected accounts (spec 2.7, 4.7) and the session-authenticated POST /v1/accounts extension."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from backend.schemas.common import CamelModel, CamelOut, NetworkName, Timestamp

Platform = NetworkName
SandboxBehaviour = Literal["ok", "fail-permanent", "fail-retriable", "rate-limited", "slow", "flaky"]


class TokenRevocation(CamelOut):
    status: Literal["revoked", "nothing_to_revoke", "not_offered", "failed"] = Field(
        description="`revoked`: the network revoked the account's token (its OAuth revocation endpoint, or the "
        "close of its session); `nothing_to_revoke`: the account held no revocable grant (a sandbox account's own "
        "session token, a grant the network no longer knows); `not_offered`: the network offers socialpub no "
        "revocation (remove its access in the network's settings); `failed`: the network refused or did not "
        "answer, or socialpub's app for it is not configured here — the account is disconnected here all the same"
    )
    message: str = Field(description="what the network said, or what to do")


class AccountOut(CamelOut):
    id: str = Field(description="use as `channelId` in POST /v1/posts targets; `accountId` of post targets")
    platform: NetworkName
    name: str = Field(description="display name at the network")
    username: str
    kind: Literal["sandbox", "live"] = Field(description="`sandbox` (emulated network) or `live`")
    status: Literal["active", "needs_reauth", "disconnected"] = Field(
        description="`active`, `needs_reauth` (reconnect it) or `disconnected`"
    )
    is_default: bool = Field(
        description="the account a plain network name in `targets` reaches: the oldest "
        "connected active account of its network"
    )
    behaviour: str | None = Field(description="sandbox accounts only: how the emulated network answers")
    connected_at: Timestamp
    token_expires_at: Timestamp | None
    token_warning: str | None = Field(
        default=None,
        description="live accounts: what needs doing about the "
        "account's authorisation, e.g. `token expires in 3 days: reconnect with "
        "socialpub accounts connect NETWORK` (a token that cannot be refreshed, "
        "within SOCIALPUB_TOKEN_WARNING_DAYS of its expiry) or that it must be "
        "reconnected (needs_reauth); null when all is well. An extension.",
    )
    granted_scopes: list[str] | None = Field(
        default=None,
        description="live accounts: the scopes (permissions) the network granted when the account was "
        "connected, as the network named them; null when unknown (a sandbox account, an account connected "
        "before socialpub recorded them, or a network that does not say). `accounts doctor` checks them "
        "against what publishing and reconciliation need. An extension.",
    )
    text_limit: int | None = Field(
        default=None,
        description="the most text a post to this account may hold when its server sets its own (a network of many "
        "servers: its server's limit, as last read when the account connected); null: the network's `maxText` "
        "(GET /v1/networks). Counted in the network's `textUnit`. An extension.",
    )
    token_revocation: TokenRevocation | None = Field(
        default=None,
        description="DELETE /v1/accounts/:id only: the outcome of revoking the account's token at its network, "
        "best effort (the disconnection never waits on the network's answer to succeed); null when there was no "
        "token to revoke (an account already disconnected). An extension.",
    )


class AccountList(CamelOut):
    items: list[AccountOut]
    limit: int = Field(description="how many accounts the workspace's plan allows connected at once")
    used: int = Field(description="accounts counted against the limit (every account not disconnected)")


class AccountCreate(CamelModel):
    """Connect a sandbox account (a live network connection needs OAuth and comes with the live adapters)."""

    platform: Platform
    name: str = Field(
        min_length=1,
        max_length=200,
        # blanks only are no name (400 validation_error `empty`), and no NUL: stated for clients
        pattern=r"^[^\u0000]*\S[^\u0000]*$",
        description="display name of the account",
    )
    kind: Literal["sandbox"] = "sandbox"
    behaviour: SandboxBehaviour = "ok"


# --- live accounts: OAuth and tokens from elsewhere (docs/accounts.md) -----------------------------------------------
TOKEN_PATTERN = r"^[\x21-\x7e]+$"


REDIRECT_URI_PATTERN = r"^https?://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:[/?][^#\s\u0000]*)?$"
"""An OAuth redirect URI: http or https (lowercase), a host name or IPv4 address, a port, a path and query, no
fragment (backend.services.oauth_connect.start checks exactly this)."""


class OAuthStart(CamelModel):
    """Start connecting live accounts of a network with OAuth (authorization code, PKCE, state kept server-side)."""

    platform: Platform
    redirect_uri: str = Field(
        min_length=1,
        max_length=2000,
        description="where the network sends the browser "
        "back with `code` and `state`: an absolute http(s) URL without a fragment, e.g. the CLI's loopback "
        "listener `http://127.0.0.1:PORT/callback` (400 invalid_redirect_uri otherwise)",
        json_schema_extra={"pattern": REDIRECT_URI_PATTERN},
    )
    name: str | None = Field(
        default=None, max_length=200, description="display name of the account, when the grant connects one"
    )
    instance: str | None = Field(
        default=None,
        max_length=300,
        description="a network made of many servers: the server the account is on, e.g. `social.example` "
        "(400 `instance_required` without it; `instance_not_supported` for another network)",
    )


class OAuthStarted(CamelOut):
    authorize_url: str = Field(description="open it in a browser: the network's consent page")
    state: str = Field(description="echoed by the network on the redirect; check it, then send it to finish")
    expires_at: Timestamp = Field(description="finish before then (10 minutes)")


class OAuthFinish(CamelModel):
    state: str = Field(min_length=1, max_length=200)
    code: str = Field(min_length=1, max_length=4000, description="the `code` of the redirect")


class OAuthCandidate(CamelOut):
    external_id: str = Field(description="the account's id at the network: pass it to connect")
    name: str
    username: str
    type: str = Field(
        description="the network's word for the account: page, member, organization, user, channel…"
    )


class OAuthFinished(CamelOut):
    grant_id: str = Field(
        description="connect the accounts picked with POST /v1/accounts/oauth/{grantId}/connect"
    )
    platform: NetworkName
    expires_at: Timestamp = Field(description="connect before then (10 minutes)")
    candidates: list[OAuthCandidate] = Field(
        description="the accounts the grant reaches (tokens stay server-side)"
    )


class OAuthConnect(CamelModel):
    external_ids: list[str] = Field(min_length=1, max_length=100, description="the candidates to connect")


class ConnectedAccounts(CamelOut):
    items: list[AccountOut]


class TokenConnect(CamelModel):
    """Connect a live account with a token obtained elsewhere (the network's own tools, another app)."""

    platform: Platform
    access_token: str = Field(
        min_length=1,
        max_length=8000,
        pattern=TOKEN_PATTERN,
        description="printable ASCII, no spaces (as every network's tokens)",
    )
    refresh_token: str | None = Field(default=None, min_length=1, max_length=8000, pattern=TOKEN_PATTERN)
    expires_in: int | None = Field(
        default=None, ge=1, le=10 * 365 * 86400, description="the access token's life in seconds, when known"
    )
    external_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="the account to "
        "connect when the token reaches several (the pages or organisations a user manages)",
    )
    name: str | None = Field(default=None, max_length=200)


class LoginConnect(CamelModel):
    """Connect a live account of a network that takes a login instead of OAuth (Bluesky: a handle and an app
    password). The password is used once to open a session and never stored."""

    platform: Platform
    identifier: str = Field(
        min_length=1,
        max_length=300,
        # a handle (a domain name, atproto's handle syntax) or a DID: anything else never names an account
        pattern=r"^(?:(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
        r"|did:[a-z]+:[A-Za-z0-9._:%-]*[A-Za-z0-9._-])$",
        description="the account: a handle (alice.bsky.social) or a DID",
    )
    password: str = Field(
        min_length=1, max_length=300, description="an app password (never the account's password)"
    )
    service: str | None = Field(
        default=None,
        max_length=500,
        pattern=r"^https?://[A-Za-z0-9.-]+(?::[0-9]{1,5})?/?$",
        description="the server that resolves the handle (its PDS), when it is not the network's default",
    )
    name: str | None = Field(default=None, max_length=200)

    def __repr__(self) -> str:  # never the password
        return f"<LoginConnect {self.platform} {self.identifier}>"


class AccountCheck(CamelOut):
    account_id: str
    platform: NetworkName
    name: str
    kind: Literal["sandbox", "live"]
    status: Literal["ok", "expiring", "needs_reauth", "error"] = Field(
        description="`ok`; `expiring` (a token that "
        "cannot be refreshed dies within 7 days); "
        "`needs_reauth` (reconnect); `error` (the "
        "network's error, see code and message)"
    )
    code: str | None = Field(description="the network's error code, when not ok")
    message: str | None
    token_expires_at: Timestamp | None
    expires_in_s: int | None = Field(description="seconds until the access token expires (negative: expired)")
    account_status: Literal["active", "needs_reauth", "disconnected"]
    checked_at: Timestamp


# --- accounts doctor (issue 29; backend/services/doctor.py) ---------------------------------------------------------
class DoctorFinding(CamelOut):
    code: str = Field(
        description="what was found, e.g. `app_credentials_missing`, `api_version_sunset`, `api_version_ending`, "
        "`token_expired`, `token_expiring`, `needs_reauth`, or a network's own code (a scope the app or the "
        "account lacks…)"
    )
    severity: Literal["error", "warning"] = Field(
        description="`error`: connecting or publishing will fail until it is fixed; `warning`: it works now, "
        "but the user must know (a version ending soon, posts that will be private)"
    )
    message: str = Field(description="what is wrong, in the user's terms")
    fix: str = Field(description="what to do about it")


class DoctorNetwork(CamelOut):
    platform: NetworkName
    redirect_uri: str | None = Field(
        default=None,
        description="the loopback redirect URI registered on the network's app (SOCIALPUB_<NETWORK>_REDIRECT_PORT), "
        "where `accounts connect` listens; null when none is configured or the network does not match exactly",
    )
    findings: list[DoctorFinding] = Field(
        description="the network's configured app: credentials, API version, the network's own checks; "
        "errors first"
    )


class DoctorAccount(CamelOut):
    id: str
    platform: NetworkName
    name: str
    findings: list[DoctorFinding] = Field(
        description="the account's authorisation and granted scopes (a sandbox account: none); errors first"
    )


class DoctorReport(CamelOut):
    ok: bool = Field(description="false when any finding is an error")
    networks: list[DoctorNetwork]
    accounts: list[DoctorAccount] = Field(description="the workspace's connected (not disconnected) accounts")


# --- what the network lets the creator choose (backend/services/choices.py) -------------------------------------------
class ChoiceField(CamelOut):
    field: str = Field(
        description="the option's name in `options.<platform>` of POST /v1/posts, e.g. `privacyLevel`"
    )
    allowed: list[str] | None = Field(
        default=None, description="the values the creator may choose now (null: not a list of values)"
    )
    offered: list[str] | None = Field(
        default=None,
        description="what the network offers the account; more than `allowed` when this installation may not use "
        "some (e.g. an app the network has not reviewed)",
    )
    required: bool = Field(default=False, description="the creator must choose: nothing is pre-selected")
    locked: bool = Field(
        default=False,
        description="the creator's own settings fix it (shown greyed, unticked; nothing is sent for it)",
    )
    note: str = Field(default="", description="why `allowed` is narrower than `offered`, or why it is locked")


class ChoiceCreator(CamelOut):
    name: str | None = Field(description="the creator's name on the network (shown before posting)")
    handle: str | None = Field(description="the creator's handle on the network")


class AccountChoices(CamelOut):
    account_id: str
    platform: NetworkName
    name: str = Field(description="the account's name in this workspace")
    supported: bool = Field(
        description="false when the account's network tells no choices (then `fields` is empty)"
    )
    creator: ChoiceCreator | None
    fields: list[ChoiceField]
    limits: dict[str, float] = Field(
        description="e.g. `maxVideoDurationS`: the longest video the account may post"
    )
    notes: list[str] = Field(description="what the user must know before choosing")
    consent: str | None = Field(
        description="the sentence to show before sending (the network's rules), word for word"
    )
    network_answer: dict[str, Any] = Field(description="the network's own answer, verbatim")
    fetched_at: Timestamp | None = Field(description="when the network answered (answers are kept 30 s)")
