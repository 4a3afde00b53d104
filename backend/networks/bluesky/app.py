"""Bluesky has no OAuth app to configure: accounts connect with an app password (session.py). This is what the
accounts' health check and the refusals' reading need: `com.atproto.server.getSession` on the account's PDS is the
cheapest authenticated call, and XRPC's errors are read by xrpc.classify (their body `{error, message}` is not an
OAuth token endpoint's, though it looks like one)."""

from __future__ import annotations

import httpx

from backend.config import Settings
from backend.networks.base import NetworkError
from backend.networks.bluesky import NETWORK, identity
from backend.networks.bluesky.session import hosts_of, refresh
from backend.networks.bluesky.xrpc import auth, classify
from backend.networks.http import send
from backend.networks.oauth import OAuthError
from backend.networks.oauth_types import Endpoints, InstanceCredentials, OAuthApp

PLATFORM = NETWORK.name

# no OAuth: the session endpoints, for what reads them (refresh: com.atproto.server.refreshSession)
ENDPOINTS = Endpoints(
    "",
    "/xrpc/com.atproto.server.refreshSession",
    "/xrpc/com.atproto.server.deleteSession",
    (),
    " ",
    pkce=False,
    refreshable=True,
    rotates_refresh=True,
)


def discover(settings: Settings, client: httpx.Client, tokens: object) -> list[object]:
    raise NotImplementedError("Bluesky accounts connect with a handle and an app password, not OAuth")


def check(settings: Settings, client: httpx.Client, external_id: str, token: str) -> httpx.Response:
    try:
        pds = identity.pds_for(client, hosts_of(settings, None), external_id)
    except NetworkError as exc:
        return httpx.Response(
            502 if exc.fail_type == "retriable" else 400,
            json={"error": exc.code or "PdsNotFound", "message": exc.reason},
        )
    return send(
        client, "GET", f"{pds}/xrpc/com.atproto.server.getSession", network=PLATFORM, headers=auth(token)
    )


def refusal(resp: httpx.Response) -> NetworkError:
    return classify(resp)


def revoke(
    settings: Settings,
    client: httpx.Client,
    external_id: str,
    access_token: str,
    refresh_token: str | None,
    creds: InstanceCredentials | None = None,
) -> str | None:
    """`com.atproto.server.deleteSession` on the account's PDS with the session's refresh JWT as bearer (the access
    JWT is refused there: `InvalidToken`): the session's refresh token is revoked (a refresh after it: 400
    `ExpiredToken` "Token has been revoked"; reference PDS, 2026-11-28) — only it: an access JWT already issued
    stays valid until it expires (≤ 2 h; deleteSession.ts revokes the refresh token alone), which the answer says.
    None: a session without a refresh token
    (a sandbox account's own) has nothing to close. Raises OAuthError."""
    if not refresh_token:
        return None
    try:
        pds = identity.pds_for(client, hosts_of(settings, None), external_id)
        resp = send(
            client,
            "POST",
            f"{pds}/xrpc/com.atproto.server.deleteSession",
            network=PLATFORM,
            write=True,
            headers=auth(refresh_token),
        )
    except NetworkError as exc:
        raise OAuthError(
            "transient" if exc.fail_type == "retriable" else "other", exc.code or "error", exc.reason
        ) from None
    if resp.status_code == 200:
        return f"the session was closed at {pds} (its last access token lapses within 2 hours)"
    err = classify(resp)
    kind = "transient" if err.fail_type == "retriable" else "other"
    raise OAuthError(kind, err.code or f"http_{resp.status_code}", err.reason, resp.status_code)


APP = OAuthApp(ENDPOINTS, discover, check, refusal, oauth_error_bodies=False, refresh=refresh, revoke=revoke)
