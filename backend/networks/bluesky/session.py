"""Connecting a Bluesky account: a handle and an app password, never OAuth (docs.bsky.app; the lexicons
com.atproto.server.createSession / refreshSession, read 2026-11-28).

The handle resolves to a DID on the given PDS (`--pds`) or the configured base (the entryway bsky.social), the
DID's document names the account's PDS and must link back to the handle, and `createSession` there opens a session
(an access JWT for 2 hours, a refresh JWT for 90 days, lifetimes read from their `exp`). A session of the account
password (scope `com.atproto.access`: full control of the account) is closed again and refused: socialpub takes
app passwords only (scope `com.atproto.appPass`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx

from backend.config import Settings
from backend.networks.base import NetworkError
from backend.networks.bluesky import NETWORK, identity
from backend.networks.bluesky.xrpc import auth, classify, error_of, jwt_claims
from backend.networks.http import json_or_none, send
from backend.networks.oauth import Candidate, OAuthError, TokenSet
from backend.networks.tokens import GrantDead, RefreshRejected, RefreshTransient
from backend.outbound.watchdog import Watchdog

PLATFORM = NETWORK.name
APP_PASSWORD_SCOPES = frozenset({"com.atproto.appPass", "com.atproto.appPassPrivileged"})


def _oauth_error(exc: NetworkError) -> OAuthError:
    kind = "dead" if exc.auth_refused else "transient" if exc.fail_type == "retriable" else "other"
    return OAuthError(kind, exc.code or "error", exc.reason, exc.http_status)


def expiry(token: str) -> datetime | None:
    exp = jwt_claims(token).get("exp")
    return datetime.fromtimestamp(exp, UTC) if isinstance(exp, int | float) else None


def hosts_of(settings: Settings, service: str | None) -> dict[str, str]:
    own: Any = NETWORK.settings_of(settings)
    hosts = dict(own.live_hosts())
    if service:
        hosts["api"] = service.rstrip("/")
    return hosts


def _tokens(body: dict[str, Any]) -> TokenSet:
    access, refresh = str(body["accessJwt"]), str(body["refreshJwt"])
    scope = str(jwt_claims(access).get("scope") or "")
    return TokenSet(
        access, expiry(access), refresh, expiry(refresh), (scope,) if scope else (), body.get("did")
    )


def refresh(
    settings: Settings,
    client: httpx.Client,
    refresh_token: str,
    now: datetime,
    watchdog: Watchdog | None = None,
) -> TokenSet:
    """A new session from the refresh JWT (`com.atproto.server.refreshSession` on the account's PDS, found from
    the token's subject, its DID): a new access JWT AND a new refresh JWT (rotation; the PDS answers the same pair
    to a reuse within 2 hours). Raises GrantDead (revoked, expired: reconnect), RefreshTransient, RefreshRejected."""
    did = str(jwt_claims(refresh_token).get("sub") or "")
    if not did.startswith("did:"):
        raise GrantDead(PLATFORM, "InvalidToken", "the stored refresh token is not a Bluesky session's")
    extensions = {"trace": watchdog.trace} if watchdog is not None else None
    try:
        pds = identity.pds_for(client, hosts_of(settings, None), did)
        resp = send(
            client,
            "POST",
            f"{pds}/xrpc/com.atproto.server.refreshSession",
            network=PLATFORM,
            write=True,
            headers=auth(refresh_token),
            extensions=extensions,
        )
    except NetworkError as exc:
        if watchdog is not None and watchdog.fired:
            raise RefreshTransient(PLATFORM, "timeout", f"no answer within {watchdog.seconds:g} s") from None
        if exc.fail_type == "retriable":
            raise RefreshTransient(PLATFORM, exc.code or "unreachable", exc.reason) from None
        raise RefreshRejected(PLATFORM, exc.code or "refused", exc.reason) from None
    body = json_or_none(resp)
    if (
        resp.status_code == 200
        and isinstance(body, dict)
        and body.get("accessJwt")
        and body.get("refreshJwt")
    ):
        return _tokens(body)
    err = classify(resp)
    if err.auth_refused or resp.status_code == 401:
        raise GrantDead(PLATFORM, err.code or "ExpiredToken", err.reason)
    if err.fail_type == "retriable":
        raise RefreshTransient(
            PLATFORM, err.code or f"http_{resp.status_code}", err.reason, err.retry_after_s
        )
    raise RefreshRejected(PLATFORM, err.code or f"http_{resp.status_code}", err.reason)


def login(
    settings: Settings,
    client: httpx.Client,
    identifier: str,
    password: str,
    service: str | None = None,
    hosts: dict[str, str] | None = None,
) -> Candidate:
    """The account of `identifier` (a handle, or a DID) with its new session. Raises OAuthError: `dead` for a
    refused password, `transient` to retry, `other` for anything else (its message says what to do)."""
    hosts = hosts or hosts_of(settings, service)
    handle = identifier.strip().lstrip("@").lower()
    try:
        did = handle if handle.startswith("did:") else identity.resolve_handle(client, hosts["api"], handle)
        doc = identity.did_document(client, hosts, did)
        known = identity.handles_of(doc)
        if not handle.startswith("did:") and handle not in known:
            raise OAuthError(
                "other",
                "handle_mismatch",
                f"the handle {handle} resolves to {did}, whose DID document does not point back to it "
                f"(alsoKnownAs: {', '.join(known) or 'none'})",
            )
        handle = known[0] if known else handle
        pds = identity.pds_for(client, hosts, did)
        resp = send(
            client,
            "POST",
            f"{pds}/xrpc/com.atproto.server.createSession",
            network=PLATFORM,
            json={"identifier": did, "password": password},
        )
    except NetworkError as exc:
        raise _oauth_error(exc) from None
    body = json_or_none(resp)
    if resp.status_code != 200 or not isinstance(body, dict) or not body.get("accessJwt"):
        err = classify(resp)
        if resp.status_code == 401:
            raise OAuthError(
                "dead",
                err.code or "AuthenticationRequired",
                f"Bluesky refused the handle or app password: {error_of(resp)[1] or err.code}",
                401,
            )
        raise _oauth_error(err)
    tokens = _tokens(body)
    if not APP_PASSWORD_SCOPES.intersection(tokens.scopes):
        try:  # close the full-access session at once: socialpub keeps no such token
            send(
                client,
                "POST",
                f"{pds}/xrpc/com.atproto.server.deleteSession",
                network=PLATFORM,
                headers=auth(str(tokens.refresh_token)),
            )
        except NetworkError:
            pass
        raise OAuthError(
            "other",
            "app_password_required",
            "this is the account's password: create an app password in the Bluesky app (Settings → Privacy "
            "and security → App passwords) and connect with it",
            400,
        )
    return Candidate(
        did,
        str(body.get("handle") or handle),
        str(body.get("handle") or handle),
        "account",
        tokens.access_token,
        tokens.expires_at,
        tokens.refresh_token,
        tokens.refresh_expires_at,
        tokens.scopes,
    )
