"""The emulators' OAuth state (issue 17 item 6), apart from their endpoints (oauth.py): each network's switches
(lifetimes, the scripted consent, a dead grant or a transient failure of the token endpoint), the credentials
issued (every code, access, refresh and page token by its SHA-256 only, store.py) with their grants, who an API
call's token speaks for (`authenticate`), and revocation. Kept in the sandbox database, so a standalone emulator
(`socialpub sandbox serve`) and the tests driving it share them. docs/sandbox.md lists every switch.

The sandbox accounts the product connects with `accounts add-sandbox` keep their own never-expiring token
(SandboxAccount.token_hash); `expire_account_token` / `revoke_account_token` make one mortal for a test.
Lifetimes follow ../shared/ANCHORS.md ("OAuth and token life") and are switches too (`configure_oauth`).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from backend.networks.sandbox.core import (
    _ACCOUNTS,
    account_for_token,
    emulator_type,
    known_account,
    now,
    token_hash,
    write,
)
from backend.networks.sandbox.store import SandboxAccount, SandboxGrant, SandboxSetting, SandboxToken

DAY = 86400
# Each network's own switches and their defaults (its lifetimes, in seconds, None: never expires; the behaviours
# of its token endpoint) are its provider's DEFAULTS (its package's emulator_oauth.py); these every network has.
COMMON: dict[str, Any] = {
    "code_ttl_s": 600,  # an authorization code is good for 10 minutes, once
    "consent": "grant",  # grant | deny: what the scripted user answers at the authorize endpoint
    "token_failure": None,  # None | "invalid_grant" (dead grant) | "server_error" (a 5xx, transient)
    "pages": 1,  # the pages (organisations…) a new user manages, where the network has them
}
TOKEN_FAILURES = (None, "invalid_grant", "server_error")


# --- switches ----------------------------------------------------------------------------------------------
def defaults(platform: str) -> dict[str, Any]:
    """The network's own switches with their defaults (ValueError for a network without an OAuth side)."""
    provider = emulator_type(platform).OAUTH
    if provider is None:
        raise ValueError(f"{platform}'s emulator has no OAuth side")
    found: dict[str, Any] = provider.DEFAULTS
    return found


def oauth_settings(platform: str) -> dict[str, Any]:
    """The OAuth switches of a network: defaults, overridden by what configure_oauth stored."""
    own = defaults(platform)
    row = SandboxSetting.get_or_none(SandboxSetting.key == f"oauth:{platform}")
    return {**COMMON, **own, **(row.value if row else {})}


def configure_oauth(platform: str, **changes: Any) -> dict[str, Any]:
    """Set OAuth switches of a network (kept in the sandbox database: a served emulator sees them at once).
    A value of None for a lifetime means "never expires"; reset=True first returns every switch to its default.
    Returns the switches now in force."""
    own = defaults(platform)
    reset = bool(changes.pop("reset", False))
    allowed = set(COMMON) | set(own)
    unknown = set(changes) - allowed
    if unknown:
        raise ValueError(
            f"unknown OAuth switch(es) for {platform}: {', '.join(sorted(unknown))}; "
            f"one of {', '.join(sorted(allowed))}"
        )
    if changes.get("token_failure") not in TOKEN_FAILURES:
        raise ValueError("token_failure: null, invalid_grant or server_error")
    if changes.get("consent", "grant") not in ("grant", "deny"):
        raise ValueError("consent: grant or deny")
    for k, v in changes.items():
        if k.endswith("_ttl_s") and v is not None and (not isinstance(v, int | float) or v < 0):
            raise ValueError(f"{k}: seconds (>= 0) or null")
    key = f"oauth:{platform}"
    with write():
        row = SandboxSetting.get_or_none(SandboxSetting.key == key)
        value = {} if reset or row is None else dict(row.value)
        value.update(changes)
        if row is None:
            SandboxSetting.create(key=key, value=value)
        else:
            SandboxSetting.update(value=value).where(SandboxSetting.key == key).execute()
    return oauth_settings(platform)


def expiry(ttl: float | None) -> datetime | None:
    return None if ttl is None else now() + timedelta(seconds=float(ttl))


def seconds_left(at: datetime | None, default: int = 0) -> int:
    return default if at is None else max(0, int((at - now()).total_seconds()))


# --- credentials ---------------------------------------------------------------------------------------------
def store_credential(
    platform: str,
    token: str,
    kind: str,
    *,
    grant_id: str | None = None,
    account_id: str | None = None,
    expires_at: datetime | None = None,
    data: dict[str, Any] | None = None,
) -> str:
    with write():
        SandboxToken.create(
            id=token_hash(token),
            platform=platform,
            grant_id=grant_id,
            kind=kind,
            account_id=account_id,
            expires_at=expires_at,
            data=data or {},
            created_at=now(),
        )
    return token


def find_credential(token: str | None, platform: str, *kinds: str) -> SandboxToken | None:
    if not token:
        return None
    row = SandboxToken.get_or_none(SandboxToken.id == token_hash(token))
    if row is None or row.platform != platform or (kinds and row.kind not in kinds):
        return None
    return row


def grant_of(row: SandboxToken) -> SandboxGrant | None:
    return SandboxGrant.get_or_none(SandboxGrant.id == row.grant_id) if row.grant_id else None


def alive(row: SandboxToken, grant: SandboxGrant | None) -> str | None:
    """None when the credential is usable, else why not: revoked | expired | used."""
    if row.state == "revoked" or (grant is not None and grant.state == "revoked"):
        return "revoked"
    if row.state in ("used", "rotated"):
        return row.state
    if row.expires_at is not None and now() >= row.expires_at:
        return "expired"
    return None


@dataclass
class Auth:
    """Who an API call's token speaks for. problem: None, or invalid | expired | revoked."""

    account: SandboxAccount | None
    problem: str | None = None
    kind: str = "account"  # account (a sandbox account's own token) | access | user | page
    grant: SandboxGrant | None = None
    expires_at: datetime | None = None
    reached: list[SandboxAccount] | None = field(default=None, repr=False)  # accounts(), read once

    def accounts(self) -> list[SandboxAccount]:
        """Every account the token reaches (a grant may reach several: pages, organisations); read once per
        Auth, i.e. per call (authenticate chooses among them, the emulator's route reads them again)."""
        if self.grant is None:
            return [self.account] if self.account is not None else []
        if self.reached is None:
            ids = list(self.grant.account_ids or [])
            rows = {a.id: a for a in SandboxAccount.select().where(SandboxAccount.id.in_(ids))}
            self.reached = [rows[i] for i in ids if i in rows]
        return self.reached


def authenticate(token: str | None, platform: str, owner: str | None = None) -> Auth:
    """The account an API call's token speaks for at `platform`, or the problem with the token. A sandbox
    account's own token (the product's sandbox accounts) never expires unless a test made it mortal; a token
    the OAuth endpoints issued expires and dies with its grant. owner: the external id the call acts on (the
    Graph API's /{id}/…), choosing among a user token's accounts.

    A token's hash is either a sandbox account's own or an issued credential's, never both (making an account's
    token mortal moves it into the credentials and retires the account's hash; that clears the cache), so the
    order of the look-ups decides nothing: the accounts already seen (no query), then the credentials (the
    OAuth-connected accounts' every call: one query), then the accounts."""
    acc = known_account(token)
    row = None if acc is not None else find_credential(token, platform, "access", "user", "page", "account")
    if row is None:
        acc = acc or account_for_token(token)
        if acc is not None:
            return Auth(acc) if acc.platform == platform else Auth(None, "invalid")
        return Auth(None, "invalid")
    grant = grant_of(row)
    problem = alive(row, grant)
    if problem:
        return Auth(None, problem, row.kind, grant, row.expires_at)
    auth = Auth(None, None, row.kind, grant, row.expires_at)
    if row.account_id:
        auth.account = SandboxAccount.get_or_none(SandboxAccount.id == row.account_id)
    else:
        mine = [a for a in auth.accounts() if a.platform == platform]
        chosen = [a for a in mine if a.external_id == owner] if owner else mine
        auth.account = chosen[0] if chosen else (mine[0] if mine else None)
    if auth.account is None:
        auth.problem = "invalid"
    return auth


def _mortal(acc: SandboxAccount, state: str, expires_at: datetime | None) -> None:
    """Move a sandbox account's own token into the issued credentials (so it can expire or be revoked)."""
    row = SandboxToken.get_or_none((SandboxToken.kind == "account") & (SandboxToken.account_id == acc.id))
    with write():
        if row is None:
            SandboxToken.create(
                id=acc.token_hash,
                platform=acc.platform,
                kind="account",
                account_id=acc.id,
                expires_at=expires_at,
                state=state,
                created_at=now(),
            )
            SandboxAccount.update(token_hash=token_hash("retired." + secrets.token_hex(16))).where(
                SandboxAccount.id == acc.id
            ).execute()
        else:
            SandboxToken.update(state=state, expires_at=expires_at).where(SandboxToken.id == row.id).execute()
    _ACCOUNTS.clear()


def expire_account_token(sandbox_account_id: str, in_s: float = 0.0) -> None:
    """Make a sandbox account's own token expire `in_s` seconds from now (tests: the clock moved past it)."""
    acc = SandboxAccount.get_by_id(sandbox_account_id)
    _mortal(acc, "active", now() + timedelta(seconds=in_s))


def revoke_account_token(sandbox_account_id: str) -> None:
    """Revoke a sandbox account's own token: its API calls then meet the network's revoked-token error."""
    acc = SandboxAccount.get_by_id(sandbox_account_id)
    _mortal(acc, "revoked", None)


def revoke_grant(grant_id: str) -> None:
    with write():
        SandboxGrant.update(state="revoked").where(SandboxGrant.id == grant_id).execute()
        SandboxToken.update(state="revoked").where(SandboxToken.grant_id == grant_id).execute()


def revoke_token(token: str, platform: str) -> bool:
    """Revoke what `token` belongs to: its whole grant (every access, refresh and page token of the consent),
    or a sandbox account's own token. False: the emulator does not know the token."""
    acc = account_for_token(token)
    if acc is not None and acc.platform == platform:
        revoke_account_token(acc.id)
        return True
    row = find_credential(token, platform)
    if row is None or row.kind == "code":
        return False
    if row.grant_id:
        revoke_grant(row.grant_id)
    else:
        with write():
            SandboxToken.update(state="revoked").where(SandboxToken.id == row.id).execute()
    return True


def grants(platform: str | None = None) -> list[SandboxGrant]:
    q = SandboxGrant.select().order_by(SandboxGrant.created_at)
    return list(q.where(SandboxGrant.platform == platform) if platform else q)
