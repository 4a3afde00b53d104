"""Mastodon's OAuth side: an app per instance (oauth_types.Instances), registered at connect (docs.md; connect.py holds
the decisions). Sources read 2026-11-28: docs.joinmastodon.org/methods/apps/, /methods/oauth/, /spec/oauth/,
/api/oauth-tokens/, /methods/accounts/.

prepare: `GET /.well-known/oauth-authorization-server` (200 with S256: PKCE and the `profile` scope where listed;
404: an instance before 4.3, no PKCE), `GET /api/v2/instance` (a Mastodon 4.0+ instance, its limits), then `POST
/api/v1/apps` when no stored app covers the scopes. The code is exchanged at `/oauth/token` (form, the app's
credentials); the token answer has no `expires_in` and no `refresh_token`: "Tokens will not expire automatically"
(never refreshed). The account: `GET /api/v1/accounts/verify_credentials`, kept as `<id>@<host>`."""

from __future__ import annotations

from typing import Any

import httpx

from backend.config import Settings
from backend.networks.base import NetworkError
from backend.networks.http import json_or_none
from backend.networks.mastodon import NETWORK
from backend.networks.mastodon.adapter import base_url, where
from backend.networks.mastodon.connect import (
    PUBLISH_SCOPES,
    ConnectRefused,
    RegisteredApp,
    instance_host,
    needs_registration,
    pkce_supported,
    registered_app,
    registration_body,
    scopes_for,
)
from backend.networks.mastodon.instance import InstanceLimits, NotAnInstance, parse_instance
from backend.networks.mastodon.refusal import refusal
from backend.networks.oauth import Candidate, OAuthError, TokenSet, call, json_body
from backend.networks.oauth_types import App, Endpoints, InstanceCredentials, Instances, OAuthApp, Prepared

PLATFORM = NETWORK.name
LABEL = NETWORK.label
SCOPES = (*PUBLISH_SCOPES, "profile")

# the paths; the origin is each instance's (Instances.app)
ENDPOINTS = Endpoints(
    "/oauth/authorize", "/oauth/token", "/oauth/revoke", SCOPES, " ", pkce=True, refreshable=False
)


def _refused(host: str, exc: Exception) -> OAuthError:
    return OAuthError("other", "instance_refused", f"{host}: {exc}")


def prepare(
    settings: Settings, client: httpx.Client, host: str, stored: InstanceCredentials | None
) -> Prepared:
    base = base_url(host)
    meta = call(client, "GET", f"{base}/.well-known/oauth-authorization-server", PLATFORM)
    if meta.status_code >= 500 or meta.status_code == 429:
        raise OAuthError(
            "transient", f"http_{meta.status_code}", f"{host} answered {meta.status_code}; try again"
        )
    metadata = json_or_none(meta) if meta.status_code == 200 else None
    try:
        pkce = pkce_supported(meta.status_code, metadata)
        limits = parse_instance(json_body(PLATFORM, call(client, "GET", f"{base}/api/v2/instance", PLATFORM)))
    except (ConnectRefused, NotAnInstance) as exc:
        raise _refused(host, exc) from None
    except OAuthError as exc:
        if exc.kind == "transient":
            raise
        raise OAuthError(
            "other",
            "not_an_instance",
            f"{host} is not a Mastodon 4.0+ instance (/api/v2/instance: {exc.message})",
        ) from None
    scopes = scopes_for(metadata if isinstance(metadata, dict) else None)
    current = (
        RegisteredApp(host, stored.client_id, stored.client_secret, stored.scopes, stored.redirect_uris)
        if stored is not None
        else None
    )
    if stored is not None and current is not None and not needs_registration(current, scopes):
        return Prepared(stored, False, pkce, scopes, limits.to_dict())
    resp = call(client, "POST", f"{base}/api/v1/apps", PLATFORM, json=registration_body(scopes))
    if resp.status_code >= 500 or resp.status_code == 429:
        raise OAuthError(
            "transient", f"http_{resp.status_code}", f"{host} answered {resp.status_code}; try again"
        )
    try:
        app = registered_app(host, scopes, json_or_none(resp))
    except ConnectRefused as exc:
        raise _refused(host, exc) from None
    creds = InstanceCredentials(app.client_id, app.client_secret, app.scopes, app.redirect_uris)
    return Prepared(creds, True, pkce, scopes, limits.to_dict())


def app_for(host: str, creds: InstanceCredentials, pkce: bool, scopes: tuple[str, ...]) -> App:
    base = base_url(host)
    endpoints = Endpoints(
        f"{base}/oauth/authorize",
        f"{base}/oauth/token",
        f"{base}/oauth/revoke",
        scopes or SCOPES,
        " ",
        pkce=pkce,
        refreshable=False,
    )
    return App(PLATFORM, creds.client_id, creds.client_secret, endpoints)


def discover_at(settings: Settings, client: httpx.Client, host: str, tokens: TokenSet) -> list[Candidate]:
    """The one account a grant reaches: verify_credentials, kept as `<id>@<host>`; the token never expires."""
    me = json_body(
        PLATFORM,
        call(
            client,
            "GET",
            f"{base_url(host)}/api/v1/accounts/verify_credentials",
            PLATFORM,
            headers={"Authorization": f"Bearer {tokens.access_token}"},
        ),
    )
    username = str(me.get("acct") or me.get("username") or "")
    return [
        Candidate(
            f"{me['id']}@{host}",
            str(me.get("display_name") or username),
            f"{username}@{host.split(':')[0]}" if "@" not in username else username,
            "user",
            tokens.access_token,
            None,
            granted_scopes=tokens.scopes,
        )
    ]


def discover(settings: Settings, client: httpx.Client, tokens: Any) -> list[Candidate]:
    """Without an instance there is nothing to ask: a Mastodon account connects on its instance."""
    raise OAuthError(
        "other",
        "instance_required",
        f"a {LABEL} account connects on its instance: `socialpub accounts connect mastodon --instance HOST`",
    )


def check(settings: Settings, client: httpx.Client, external_id: str, token: str) -> httpx.Response:
    """verify_credentials on the account's instance (401: the token was revoked — reconnect)."""
    try:
        _id, host = where(external_id)
    except NetworkError as exc:
        raise OAuthError("other", exc.code or "no_instance", exc.reason) from None
    return call(
        client,
        "GET",
        f"{base_url(host)}/api/v1/accounts/verify_credentials",
        PLATFORM,
        headers={"Authorization": f"Bearer {token}"},
    )


def api_refusal(resp: httpx.Response) -> NetworkError:
    return refusal(resp, resp.request.url.netloc.decode("ascii"))


def host_of(external_account_id: str) -> str | None:
    """The instance of a connected account (its external id `<id>@<host>`), None when it names none."""
    try:
        return where(external_account_id)[1]
    except NetworkError:
        return None


def text_limit(limits: dict[str, Any]) -> int | None:
    """The instance's `max_characters`, from its cached limits."""
    return InstanceLimits.from_cache(limits).max_characters


def revoke(
    settings: Settings,
    client: httpx.Client,
    external_id: str,
    access_token: str,
    refresh_token: str | None,
    creds: InstanceCredentials | None,
) -> str:
    """`POST /oauth/revoke` on the account's instance with socialpub's app there (client_id, client_secret) and the
    token (docs.joinmastodon.org/methods/oauth/#revoke): 200 `{}` — the token is dead, the app leaves the user's
    authorised apps. Raises OAuthError (403 `unauthorized_client`: not this app's token; unreachable)."""
    host = host_of(external_id)
    if host is None:
        raise OAuthError("other", "no_instance", f"the account {external_id} names no instance")
    if creds is None:
        raise OAuthError(
            "other",
            "no_app",
            f"socialpub's app on {host} is not known here: remove it in {host}'s settings "
            "(Preferences → Account → Authorized apps)",
        )
    resp = call(
        client,
        "POST",
        f"{base_url(host)}/oauth/revoke",
        PLATFORM,
        data={"client_id": creds.client_id, "client_secret": creds.client_secret, "token": access_token},
    )
    if resp.status_code == 200:
        return f"the token was revoked at {host}"
    body = json_or_none(resp)
    said = body.get("error_description") or body.get("error") if isinstance(body, dict) else None
    kind = "transient" if resp.status_code >= 500 or resp.status_code == 429 else "other"
    raise OAuthError(
        kind, f"http_{resp.status_code}", f"{host} answered {resp.status_code}: {said or 'no reason'}"
    )


INSTANCES = Instances(
    host=instance_host,
    prepare=prepare,
    app=app_for,
    discover=discover_at,
    host_of=host_of,
    text_limit=text_limit,
)
APP = OAuthApp(
    ENDPOINTS, discover, check, api_refusal, oauth_error_bodies=True, instances=INSTANCES, revoke=revoke
)
