"""Who an emulated API call's token speaks for, and the tokens' death (split from oauth.py, issue 31): a sandbox
account's own token (the product's sandbox accounts, SandboxAccount.token_hash) never expires unless a test
makes it mortal (`expire_account_token` / `revoke_account_token`); a token the OAuth endpoints issued expires
and dies with its grant (`revoke_grant`, `revoke_token`).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from backend.networks.sandbox.core import _ACCOUNTS, account_for_token, now, token_hash, write
from backend.networks.sandbox.credentials import alive, find_credential, grant_of
from backend.networks.sandbox.store import SandboxAccount, SandboxGrant, SandboxToken


@dataclass
class Auth:
    """Who an API call's token speaks for. problem: None, or invalid | expired | revoked."""

    account: SandboxAccount | None
    problem: str | None = None
    kind: str = "account"  # account (a sandbox account's own token) | access | user | page
    grant: SandboxGrant | None = None
    expires_at: datetime | None = None

    def accounts(self) -> list[SandboxAccount]:
        """Every account the token reaches (a grant may reach several: pages, organisations)."""
        if self.grant is None:
            return [self.account] if self.account is not None else []
        ids = list(self.grant.account_ids or [])
        rows = {a.id: a for a in SandboxAccount.select().where(SandboxAccount.id.in_(ids))}
        return [rows[i] for i in ids if i in rows]


def authenticate(token: str | None, platform: str, owner: str | None = None) -> Auth:
    """The account an API call's token speaks for at `platform`, or the problem with the token. A sandbox
    account's own token (the product's sandbox accounts) never expires unless a test made it mortal; a token
    the OAuth endpoints issued expires and dies with its grant. owner: the external id the call acts on (the
    Graph API's /{id}/…), choosing among a user token's accounts."""
    acc = account_for_token(token)
    if acc is not None:
        return Auth(acc) if acc.platform == platform else Auth(None, "invalid")
    row = find_credential(token, platform, "access", "user", "page", "account")
    if row is None:
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
