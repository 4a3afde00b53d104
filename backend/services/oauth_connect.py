"""Connecting live accounts with OAuth, with a token from elsewhere, and checking an account's token
(issue 17 items 1 and 5; docs/accounts.md).

The server makes and keeps the PKCE verifier and the state (`oauth_session`, migration 0021): the client only
carries the user to the authorize URL and brings back `state` and `code`. The code is exchanged here, the
accounts the grant reaches are discovered and kept with their tokens in that row (encrypted) until the user picks
which become accounts. Tokens are never returned and never logged. These are the few requests that call a network
inline: the user waits on the answer.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import secrets
from datetime import datetime, timedelta
from typing import Any

from backend import clock
from backend.config import Settings
from backend.errors import ApiError
from backend.ids import new_id
from backend.networks import oauth, oauth_apps, oauth_types, registry
from backend.outbound.guard import FetchError, check_url
from backend.schemas.accounts import REDIRECT_URI_PATTERN
from backend.services import accounts, adapters, doctor, network_instances, tokens
from backend.store.db import locked, tx
from backend.store.instance import address_rule
from backend.store.models import Account, OAuthSession, Workspace

log = logging.getLogger(__name__)

SESSION_LIFE = timedelta(minutes=10)  # from start to finish, and from finish to connect


def _refuse_login_network(platform: str) -> None:
    """A network that connects with a login (Bluesky's handle and app password) takes neither OAuth nor a token
    from elsewhere: 400 `oauth_not_supported`, saying how to connect it."""
    network = registry.find(platform)
    if network is not None and network.login:
        raise ApiError(
            400,
            "oauth_not_supported",
            f"{network.label} accounts connect with a login, not OAuth: "
            f"`socialpub accounts connect {platform} --handle HANDLE` and an app password",
        )


def _app(platform: str, settings: Settings) -> oauth_types.App:
    _refuse_login_network(platform)
    try:
        return oauth_apps.app(platform, settings)
    except oauth_apps.NotConfigured as exc:
        raise ApiError(400, "oauth_not_configured", str(exc)) from None


def _hash(state: str) -> str:
    return hashlib.sha256(state.encode("utf-8", "replace")).hexdigest()


def _bad_state() -> ApiError:
    return ApiError(
        400,
        "invalid_oauth_state",
        "unknown, expired or already used OAuth state: start the connection "
        "again (`socialpub accounts connect NETWORK`)",
    )


def _network_error(exc: oauth.OAuthError, step: str) -> ApiError:
    """An OAuthError as the API's error (its message names no token)."""
    if exc.kind == "transient":
        return ApiError(502, "network_error", f"{exc.message} ({step}); try again")
    if step == "code exchange":
        return ApiError(400, "oauth_code_rejected", f"{exc.message}: start the connection again")
    if exc.kind == "dead":
        return ApiError(400, "invalid_access_token", f"{exc.message}: get a new token or connect with OAuth")
    if (
        exc.status is not None and 400 <= exc.status < 500
    ):  # refused for a reason of the caller's (scopes, kind)
        return ApiError(400, "network_refused", f"{exc.message} ({step})")
    return ApiError(502, "network_error", f"{exc.message} ({step})")


# --- start / finish / connect -------------------------------------------------------------------------------------
def _require_app_ready(platform: str, settings: Settings) -> None:
    """`accounts doctor`'s app checks of `platform` (services/doctor.py), before any browser step: an error
    (a sunset API version, scopes the app's products do not grant…) would make the consent or every call fail,
    so the connection does not start: 400 `app_not_ready`, each error with its fix in the details."""
    errors = doctor.app_errors(settings, platform)
    if errors:
        first = errors[0]
        more = (
            f" (and {len(errors) - 1} more: `socialpub accounts doctor {platform}`)"
            if len(errors) > 1
            else ""
        )
        raise ApiError(
            400, "app_not_ready", f"{first.message}: {first.fix}{more}", [f.to_dict() for f in errors]
        )


def _instances(platform: str) -> oauth_types.Instances | None:
    """The network's servers, when it is made of many (Mastodon): connecting then names one."""
    _refuse_login_network(platform)
    try:
        return oauth_apps.oauth_app(platform).instances
    except oauth_apps.NotConfigured:
        return None


def _instance_app(
    settings: Settings, platform: str, instances: oauth_types.Instances, given: str
) -> tuple[str, oauth_types.App]:
    """The server's host and socialpub's app there: the one registered before when it still covers the scopes,
    else registered now (kept per server, its secret encrypted: services/network_instances). The host must be
    one the data dir's address rule lets socialpub reach (a public address, unless private ones are allowed)."""
    try:
        host = instances.host(given)
    except ValueError as exc:
        raise ApiError(400, "invalid_instance", str(exc)) from None
    try:
        check_url(f"https://{host}/", address_rule(settings))
    except FetchError as exc:
        raise ApiError(400, "instance_refused", f"{host}: {exc.message}") from None
    label = registry.label(platform)
    try:
        ready = network_instances.prepare(settings, platform, instances, host)
    except oauth.OAuthError as exc:
        log.info("oauth %s instance %s: %s %s", platform, host, exc.kind, exc.code)
        if exc.kind == "transient":
            raise ApiError(502, "network_error", f"{exc.message} (reaching {host}); try again") from None
        raise ApiError(400, "instance_refused", f"{exc.message}: is {host} a {label} server?") from None
    return host, instances.app(host, ready.credentials, ready.pkce, ready.scopes)


def _session_app(settings: Settings, s: OAuthSession) -> oauth_types.App:
    """The app a session was started with: the configured one, or the one registered on its server."""
    instances = _instances(s.platform)
    if not s.instance or instances is None:
        return _app(s.platform, settings)
    stored = network_instances.app_of(s.platform, s.instance)
    if stored is None:
        raise _bad_state()
    creds = oauth_types.InstanceCredentials(
        stored.client_id, stored.client_secret, stored.scopes, stored.redirect_uris
    )
    return instances.app(s.instance, creds, bool(s.verifier), stored.scopes)


def start(
    workspace_id: str,
    settings: Settings,
    platform: str,
    redirect_uri: str,
    name: str | None,
    instance: str | None = None,
) -> dict[str, Any]:
    """A new OAuth session: the authorize URL to send the user to, with a fresh state and PKCE challenge (where
    the network, or its server, takes PKCE). A network made of many servers connects on `instance`."""
    instances = _instances(platform)
    if instances is None and instance:
        raise ApiError(
            400,
            "instance_not_supported",
            f"{registry.label(platform)} has no servers to choose: leave out instance",
        )
    if instances is not None and not (instance or "").strip():
        raise ApiError(
            400,
            "instance_required",
            f"a {registry.label(platform)} account connects on its server: give its host as instance "
            f"(`socialpub accounts connect {platform} --instance HOST`)",
        )
    if not re.fullmatch(REDIRECT_URI_PATTERN, redirect_uri):
        raise ApiError(
            400,
            "invalid_redirect_uri",
            "redirectUri must be an absolute http(s) URL without a fragment "
            "(the CLI's loopback listener, e.g. http://127.0.0.1:PORT/callback)",
        )
    host: str | None = None
    if instances is not None:
        host, app = _instance_app(settings, platform, instances, str(instance))
    else:
        app = _app(platform, settings)
        _require_app_ready(platform, settings)
    state = secrets.token_urlsafe(32)
    verifier, challenge = oauth.pkce_pair(app.endpoints.pkce_encoding)
    if host is not None and not app.endpoints.pkce:
        verifier = (
            ""  # a server without PKCE: nothing sent at the exchange (finish reads the session's choice)
        )
    now = clock.now()
    expires = now + SESSION_LIFE
    with tx():
        OAuthSession.create(
            id=new_id("oas"),
            workspace=workspace_id,
            platform=platform,
            state_hash=_hash(state),
            redirect_uri=redirect_uri,
            name=(name or "").strip() or None,
            instance=host,
            verifier=verifier,
            status="started",
            expires_at=expires,
            created_at=now,
        )
    return {
        "authorizeUrl": oauth.authorize_url(app, redirect_uri, state, challenge),
        "state": state,
        "expiresAt": clock.iso(expires),
    }


def _dump(c: oauth.Candidate) -> dict[str, Any]:
    return {
        "externalId": c.external_id,
        "name": c.name,
        "username": c.username,
        "type": c.type,
        "accessToken": c.access_token,
        "expiresAt": clock.iso(c.expires_at),
        "refreshToken": c.refresh_token,
        "refreshExpiresAt": clock.iso(c.refresh_expires_at),
        "grantedScopes": list(c.granted_scopes),
    }


def finish(workspace_id: str, settings: Settings, state: str, code: str) -> dict[str, Any]:
    """Check the state (once), exchange the code, discover the accounts; keep their tokens here."""
    now = clock.now()
    with tx():
        s = locked(OAuthSession.select().where(OAuthSession.state_hash == _hash(state))).get_or_none()
        if s is None or s.workspace_id != workspace_id or s.status != "started" or s.expires_at <= now:
            raise _bad_state()
        app = _session_app(settings, s)  # not configured (any more): the state is left unused
        s.status = "finishing"  # the state is used now, whatever the network answers
        s.save()
    step = "code exchange"
    try:
        with adapters.network_client(settings, s.platform) as client:
            tokens = oauth.exchange_code(app, client, code, s.redirect_uri, s.verifier)
            step = "discovering the accounts"
            instances = _instances(s.platform) if s.instance else None
            found = (
                instances.discover(settings, client, s.instance, tokens)
                if instances is not None and s.instance
                else oauth.discover(s.platform, settings, client, tokens)
            )
    except oauth.OAuthError as exc:
        OAuthSession.update(status="failed", verifier="").where(OAuthSession.id == s.id).execute()
        log.info("oauth %s %s failed: %s %s", s.id, s.platform, exc.kind, exc.code)
        raise _network_error(exc, step) from None
    expires = clock.now() + SESSION_LIFE
    with tx():
        OAuthSession.update(
            status="finished",
            verifier="",
            tokens=json.dumps([_dump(c) for c in found]),
            finished_at=clock.now(),
            expires_at=expires,
        ).where(OAuthSession.id == s.id).execute()
    return {
        "grantId": s.id,
        "platform": s.platform,
        "expiresAt": clock.iso(expires),
        "candidates": [c.public() for c in found],
    }


def _upsert(workspace_id: str, platform: str, c: dict[str, Any], name: str | None) -> tuple[Account, bool]:
    """The live account of this external id, its tokens replaced (created when new). Inside a transaction."""
    expires = datetime.fromisoformat(c["expiresAt"].replace("Z", "+00:00")) if c.get("expiresAt") else None
    refresh_expires = (
        datetime.fromisoformat(c["refreshExpiresAt"].replace("Z", "+00:00"))
        if c.get("refreshExpiresAt")
        else None
    )
    acc = locked(
        Account.select().where(
            (Account.workspace == workspace_id)
            & (Account.platform == platform)
            & (Account.kind == "live")
            & (Account.external_id == c["externalId"])
            & (Account.status != "disconnected")
        )
    ).get_or_none()
    if acc is not None:
        # a new grant replaces the whole token set: an old refresh token kept beside a new access token is the
        # dead one a needs_reauth account is reconnected for (Google is asked prompt=consent: it re-issues one)
        acc.access_token = c["accessToken"]
        acc.refresh_token = c.get("refreshToken") or None
        acc.refresh_expires_at = refresh_expires if acc.refresh_token else None
        acc.token_expires_at = expires
        acc.token_warned_for = None  # a new expiry: warned about afresh (services/tokens.py)
        acc.token_refresh_until = None
        acc.token_refresh_lease = None
        acc.status = "active"
        acc.granted_scopes = _scopes(c)
        if name:
            acc.name = name
        acc.username = c.get("username") or acc.username
        acc.save()
        return acc, False
    now = clock.now()
    return Account.create(
        id=new_id("acc"),
        workspace=workspace_id,
        platform=platform,
        name=(name or c.get("name") or platform)[:200],
        username=(c.get("username") or "")[:200],
        kind="live",
        status="active",
        behaviour=None,
        external_id=c["externalId"],
        access_token=c["accessToken"],
        refresh_token=c.get("refreshToken"),
        refresh_expires_at=refresh_expires,
        token_expires_at=expires,
        granted_scopes=_scopes(c),
        connected_at=now,
        created_at=now,
    ), True


def _scopes(c: dict[str, Any]) -> str | None:
    """The granted scopes as stored: space-separated, None when the network did not say."""
    return " ".join(c.get("grantedScopes") or ()) or None


def _exists(workspace_id: str, platform: str, external_id: str) -> bool:
    return (
        Account.select()
        .where(
            (Account.workspace == workspace_id)
            & (Account.platform == platform)
            & (Account.kind == "live")
            & (Account.external_id == external_id)
            & (Account.status != "disconnected")
        )
        .exists()
    )


def _save(workspace_id: str, platform: str, chosen: list[dict[str, Any]], name: str | None) -> list[Account]:
    """Create or update the chosen accounts, the plan's limit applying to the new ones. Inside a transaction."""
    ws = locked(Workspace.select().where(Workspace.id == workspace_id)).get_or_none()
    if ws is None:
        raise ApiError(404, "workspace_not_found", "workspace not found")
    new = sum(1 for c in chosen if not _exists(workspace_id, platform, c["externalId"]))
    if new:
        accounts._check_limit(ws, extra=new)
    return [_upsert(workspace_id, platform, c, name if len(chosen) == 1 else None)[0] for c in chosen]


def _public(workspace_id: str, settings: Settings, accs: list[Account]) -> list[dict[str, Any]]:
    defaults = accounts.default_ids(accounts.active_accounts(workspace_id))
    return [accounts.to_public(a, a.id in defaults, settings) for a in accs]


def connect(
    workspace_id: str, settings: Settings, grant_id: str, external_ids: list[str]
) -> list[dict[str, Any]]:
    """The picked accounts of a finished session become live accounts (once)."""
    with tx():
        s = locked(
            OAuthSession.select().where(
                (OAuthSession.id == grant_id) & (OAuthSession.workspace == workspace_id)
            )
        ).get_or_none()
        if s is None:
            raise ApiError(404, "oauth_grant_not_found", "no such OAuth grant in this workspace")
        if s.status != "finished" or s.expires_at <= clock.now():
            raise ApiError(
                400,
                "invalid_oauth_state",
                "this OAuth grant is already used or expired: start the connection again",
            )
        found = {c["externalId"]: c for c in json.loads(s.tokens or "[]")}
        unknown = [x for x in external_ids if x not in found]
        if unknown:
            raise ApiError(
                400,
                "unknown_external_id",
                f"the grant does not reach {', '.join(unknown)}",
                [{"externalId": x, "candidates": sorted(found)} for x in unknown],
            )
        picked = [found[x] for x in dict.fromkeys(external_ids)]
        saved = _save(workspace_id, s.platform, picked, s.name)
        OAuthSession.update(status="connected", tokens=None).where(OAuthSession.id == s.id).execute()
    return _public(workspace_id, settings, saved)


def connect_token(
    workspace_id: str,
    settings: Settings,
    platform: str,
    access_token: str,
    refresh_token: str | None = None,
    expires_in: int | None = None,
    external_id: str | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    """A token obtained elsewhere: the accounts it reaches are discovered; exactly one (or the one named by
    external_id) becomes a live account. Several without external_id: 409 listing them."""
    _refuse_login_network(platform)
    if _instances(platform) is not None:  # which server the token is of cannot be told from the token
        raise ApiError(
            400,
            "instance_required",
            f"a {registry.label(platform)} account connects on its server, by OAuth: POST /v1/accounts/oauth/start "
            f"with its host as instance (`socialpub accounts connect {platform} --instance HOST`)",
        )
    expires = clock.now() + timedelta(seconds=expires_in) if expires_in else None
    tokens = oauth.TokenSet(access_token, expires, refresh_token or None)
    try:
        with adapters.network_client(settings, platform) as client:
            found = oauth.discover(platform, settings, client, tokens)
    except oauth.OAuthError as exc:
        log.info("connect-token %s failed: %s %s", platform, exc.kind, exc.code)
        raise _network_error(exc, "discovering the accounts") from None
    if external_id:
        found = [c for c in found if c.external_id == external_id]
        if not found:
            raise ApiError(400, "unknown_external_id", f"the token does not reach {external_id}")
    if not found:
        raise ApiError(400, "no_account_found", f"the token reaches no {platform} account that can publish")
    if len(found) > 1:
        raise ApiError(
            409,
            "account_choice_required",
            "the token reaches several accounts: name one with externalId",
            [c.public() for c in found],
        )
    with tx():
        saved = _save(workspace_id, platform, [_dump(found[0])], (name or "").strip() or None)
    return _public(workspace_id, settings, saved)[0]


def connect_login(
    workspace_id: str,
    settings: Settings,
    platform: str,
    identifier: str,
    password: str,
    service: str | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    """A network connected with a login (its registry entry's `login`: Bluesky's handle and app password): the
    session it opens becomes a live account (its tokens replaced when already connected). The password is sent
    once, to the account's own server, and kept nowhere."""
    login = registry.get(platform).login_fn()
    if login is None:
        raise ApiError(
            400,
            "login_not_supported",
            f"{platform} accounts connect with OAuth or a token: `socialpub accounts connect {platform}`",
        )
    try:
        with adapters.network_client(settings, platform) as client:
            found = login(settings, client, identifier, password, service)
    except oauth.OAuthError as exc:
        log.info("connect-login %s failed: %s %s", platform, exc.kind, exc.code)
        if exc.kind == "dead":
            raise ApiError(400, "invalid_credentials", exc.message) from None
        if exc.code == "address_refused":  # a server the address rule refuses (backend/outbound/guarded.py)
            raise ApiError(400, "address_refused", f"{exc.message} (opening a session)") from None
        if (
            service and exc.kind == "transient"
        ):  # the server the caller named cannot be reached: the caller's to fix
            raise ApiError(
                400,
                "service_unreachable",
                f"{exc.message} (opening a session at {service}): check the address",
            ) from None
        raise _network_error(exc, "opening a session") from None
    with tx():
        saved = _save(workspace_id, platform, [_dump(found)], (name or "").strip() or None)
    return _public(workspace_id, settings, saved)[0]


def disconnect(
    workspace_id: str, settings: Settings, account_id: str
) -> tuple[Account, dict[str, str] | None]:
    """Disconnect an account (services/accounts.disconnect: the one local change, made first, never failing for
    the network), then revoke the token it held at its network, best effort (`revoke_grant`). Returns the account
    and the revocation's outcome (`status`, `message`), None when it held no token (already disconnected)."""
    held = Account.get_or_none((Account.id == account_id) & (Account.workspace == workspace_id))
    acc = accounts.disconnect(workspace_id, account_id)
    if held is None or held.status == "disconnected" or not held.access_token:
        return acc, None
    return acc, revoke_grant(settings, held)


def revoke_grant(settings: Settings, held: Account) -> dict[str, str]:
    """Ask the account's network to revoke the token `held` (the account as it was before its tokens were dropped)
    through its app's `revoke` (backend/networks/oauth_types.OAuthApp): `revoked`, `nothing_to_revoke` (a sandbox
    account's own session token, a grant the network no longer knows), `not_offered` (the network has none
    socialpub can call: the user removes its access in the network's settings) or `failed` (refused, unreachable,
    socialpub's app for it not configured here: said, and logged without the token). A sandbox account's network
    is its emulator."""
    entry = registry.find(held.platform)
    app = entry.oauth_app() if entry is not None and entry.app else None
    label = entry.label if entry is not None else held.platform
    if app is None or app.revoke is None:
        return {
            "status": "not_offered",
            "message": f"{label} offers socialpub no way to revoke the token: remove socialpub's access in "
            f"{label}'s settings",
        }
    creds: oauth_types.InstanceCredentials | None = None
    host = app.instances.host_of(held.external_id) if app.instances is not None else None
    stored = network_instances.app_of(held.platform, host) if host else None
    if stored is not None:
        creds = oauth_types.InstanceCredentials(
            stored.client_id, stored.client_secret, stored.scopes, stored.redirect_uris
        )
    try:
        with adapters.network_client(settings, held.platform, held.kind) as client:
            said = app.revoke(
                settings, client, held.external_id, held.access_token, held.refresh_token, creds
            )
    except oauth.OAuthError as exc:
        if exc.code == "oauth_not_configured" and held.kind == "sandbox":
            # the emulator's account, made by `init --sandbox`: no grant of a socialpub app to revoke, and no
            # network settings page for the user to visit
            return {
                "status": "nothing_to_revoke",
                "message": f"a sandbox account: its emulated {label} token goes with it (socialpub's {label} app "
                "is not configured here, so the emulator was not asked to revoke it)",
            }
        log.info("revoking the token of %s at %s failed: %s %s", held.id, held.platform, exc.kind, exc.code)
        return {
            "status": "failed",
            "message": f"{exc.message} (the account is disconnected here all the same)",
        }
    if said is None:
        return {"status": "nothing_to_revoke", "message": f"the account held no {label} grant to revoke"}
    log.info("revoked the token of %s at %s", held.id, held.platform)
    return {"status": "revoked", "message": said}


def prune_sessions(now: datetime) -> int:
    """Sessions past their life (10 minutes) are deleted, with the tokens a finished but never connected grant
    holds (a Ctrl+C at the picker): nothing of a grant outlives its session. The housekeeping job, every 5 min."""
    with tx():
        deleted: int = OAuthSession.delete().where(OAuthSession.expires_at < now).execute()
        return deleted


# --- health ---------------------------------------------------------------------------------------------------------
def check(workspace_id: str, settings: Settings, account_id: str) -> dict[str, Any]:
    """The account's token tried on its network's cheapest authenticated call: `ok`, `expiring` (a token that
    cannot be refreshed dies within SOCIALPUB_TOKEN_WARNING_DAYS), `needs_reauth` (the network says the grant is
    dead: the account is marked so by services/tokens.mark_needs_reauth, the one way, with its event and its
    pending targets failed) or `error` (the network's error; a transient one changes nothing). A refused token
    that a refresh token can renew is refreshed first (services/tokens.refresh_account) and tried again."""
    acc = accounts.connected(workspace_id, account_id)
    now = clock.now()
    with adapters.network_client(settings, acc.platform, acc.kind) as client:
        health = oauth.check(acc.platform, settings, client, acc.external_id, acc.access_token)
    refresh_failed: Exception | None = None
    if health.status == "dead" and acc.kind == "live" and acc.status == "active" and acc.refresh_token:
        try:
            renewed = tokens.refresh_account(acc.id, settings, force=True)
        except Exception as exc:  # noqa: BLE001  (busy, transient, rejected, not configured: never a disconnection)
            log.info("refreshing %s before its check failed: %s", acc.id, type(exc).__name__)
            refresh_failed = exc
        else:
            acc = accounts.connected(workspace_id, account_id)
            if renewed.result == "refreshed":
                with adapters.network_client(settings, acc.platform, acc.kind) as client:
                    health = oauth.check(acc.platform, settings, client, acc.external_id, acc.access_token)
    left = (acc.token_expires_at - now) if acc.token_expires_at else None
    out: dict[str, Any] = {
        "accountId": acc.id,
        "platform": acc.platform,
        "name": acc.name,
        "kind": acc.kind,
        "status": "ok",
        "code": health.code,
        "message": health.message,
        "tokenExpiresAt": clock.iso(acc.token_expires_at),
        "expiresInS": int(left.total_seconds()) if left is not None else None,
        "accountStatus": acc.status,
        "checkedAt": clock.iso(now),
    }
    if acc.status == "needs_reauth":
        out.update(
            status="needs_reauth",
            message=f"reconnect it ({tokens.reconnect_command(acc)})"
            + (f": {health.message}" if health.status == "dead" else ""),
        )
    elif health.status == "ok":
        # the warning accounts list shows (services/tokens.token_warning): a token that cannot be refreshed, or
        # the refresh token itself, ends within SOCIALPUB_TOKEN_WARNING_DAYS
        warning = tokens.token_warning(acc, settings, now)
        if warning is not None:
            out["status"] = "expiring"
            out["message"] = warning
    elif health.status == "dead" and refresh_failed is not None:
        out.update(
            status="error",
            code="access_token_expired",
            message="the access token was refused and could not be renewed just now "
            f"({refresh_failed}); the account stays connected and the worker tries again",
        )
    elif health.status == "dead":
        tokens.mark_needs_reauth(acc.id, health.message)
        out.update(
            status="needs_reauth",
            accountStatus="needs_reauth",
            message=f"reconnect it ({tokens.reconnect_command(acc)}): {health.message}",
        )
    else:
        out["status"] = "error"
    return out
