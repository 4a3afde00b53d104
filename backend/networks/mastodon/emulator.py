"""A Mastodon emulator (fidelity table: docs.md), as strict as a Mastodon instance is with a newly registered app.

Every host it is reached at is an instance (in process: `mastodon.sandbox.invalid`; served by `socialpub sandbox
serve mastodon`: the server's own `127.0.0.1:PORT`), each with its own configuration (`configure_instance`: the
version — 4.3+ advertises PKCE and the `profile` scope, before 4.3 `/.well-known/oauth-authorization-server` is a
404 and PKCE parameters are ignored — and the `/api/v2/instance` limits) and its own registered apps. The accounts
are the sandbox's (one account is reachable at every host).

Served: `POST /api/v1/apps`; `GET /oauth/authorize` (a scripted consent: the `consent` switch), `POST /oauth/token`
(authorization_code; client_secret_post or _basic; PKCE S256 only, where advertised), `POST /oauth/revoke`;
`GET /.well-known/oauth-authorization-server`; `GET /api/v2/instance`; `GET /api/v1/accounts/verify_credentials`;
`POST /api/v2/media` (an image ready at once: 200; a video processed: 202, then `GET /api/v1/media/:id` 206 until
ready: 200); `POST /api/v1/statuses` (Idempotency-Key: a replay within an hour answers the first status); `GET
/api/v1/accounts/:id/statuses`; `GET /api/v1/statuses/:id` and `/source`. Each call needs its scope (a parent
scope covers its children); refusals are Mastodon's `{"error": "<sentence>"}` (OAuth's `error` +
`error_description` on the OAuth endpoints); every answer carries `X-RateLimit-*` headers (the reset an ISO 8601
time)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import ipaddress
import secrets
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx

from backend.networks.facebook.emulator import multipart  # the emulators' multipart reader
from backend.networks.mastodon.text import status_length
from backend.networks.sandbox.core import (
    Emulator,
    Gate,
    Request,
    b62,
    exclusive,
    gate,
    get_item,
    json_response,
    new_item,
    now,
    write,
)
from backend.networks.sandbox.oauth import (
    OAuthProvider,
    authenticate,
    expiry,
    find_credential,
    install,
    redirect,
    revoke_token,
    store_credential,
)
from backend.networks.sandbox.store import SandboxAccount, SandboxGrant, SandboxItem, SandboxSetting

PLATFORM = "mastodon"
SANDBOX_HOST = "mastodon.sandbox.invalid"
IDEMPOTENCY_S = 3600  # "Idempotency keys are stored for up to 1 hour." (PostStatusService: setex 3_600)
# PostStatusService holds `with_redis_lock("idempotency:lock:status:<account>:<key>")` while it creates the status:
# a second request with the key meanwhile cannot take the lock and is answered 503 (Mastodon::RaceConditionError,
# api/error_handling.rb); Lockable's autorelease frees a lock its holder never released after 15 minutes
IDEMPOTENCY_LOCK_S = 15 * 60
STATUSES_PER_3H = 300  # RateLimiter `statuses: { limit: 300, period: 3.hours }`
MEDIA_PER_30MIN = 30  # rack_attack `throttle_api_media` 30 / 30 min
API_PER_5MIN = 300  # the rate-limit headers' window (docs: 300 / 5 min)
LISTING_MAX = 40  # "Max 40 statuses."

# the instance's defaults: upstream Mastodon's (docs.joinmastodon.org/entities/Instance/, read 2026-11-28)
INSTANCE_DEFAULTS: dict[str, Any] = {
    "version": "4.4.0",
    "max_characters": 500,
    "max_media_attachments": 4,
    "characters_reserved_per_url": 23,
    "image_size_limit": 16_777_216,
    "image_matrix_limit": 33_177_600,
    "video_size_limit": 103_809_024,
    "video_frame_rate_limit": 120,
    "video_matrix_limit": 8_294_400,
    "description_limit": 1_500,
    "supported_mime_types": [
        "image/jpeg",
        "image/png",
        "image/gif",
        "image/heic",
        "image/heif",
        "image/webp",
        "image/avif",
        "video/webm",
        "video/mp4",
        "video/quicktime",
        "video/ogg",
        "audio/wave",
        "audio/wav",
        "audio/x-wav",
        "audio/x-pn-wave",
        "audio/vnd.wave",
        "audio/ogg",
        "audio/vorbis",
        "audio/mpeg",
        "audio/mp3",
        "audio/webm",
        "audio/flac",
        "audio/aac",
        "audio/m4a",
        "audio/x-m4a",
        "audio/mp4",
        "audio/3gpp",
        "video/x-ms-asf",
    ],
}
# the scopes an instance knows (docs.joinmastodon.org/api/oauth-scopes/); `profile` from 4.3
SCOPES = (
    "read",
    "write",
    "follow",
    "push",
    "read:accounts",
    "read:blocks",
    "read:bookmarks",
    "read:favourites",
    "read:filters",
    "read:follows",
    "read:lists",
    "read:mutes",
    "read:notifications",
    "read:search",
    "read:statuses",
    "write:accounts",
    "write:blocks",
    "write:bookmarks",
    "write:conversations",
    "write:favourites",
    "write:filters",
    "write:follows",
    "write:lists",
    "write:media",
    "write:mutes",
    "write:notifications",
    "write:reports",
    "write:statuses",
)
# Doorkeeper's words (config/locales/en.yml of doorkeeper-gem)
INVALID_CLIENT = (
    "Client authentication failed due to unknown client, no client authentication included, or unsupported "
    "authentication method."
)
INVALID_GRANT = (
    "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in "
    "the authorization request, or was issued to another client."
)
INVALID_SCOPE = "The requested scope is invalid, unknown, or malformed."
INVALID_REDIRECT = "The requested redirect uri is malformed or doesn't match client redirect URI."
DENIED = "The resource owner or authorization server denied the request."
PKCE_METHOD = "The code challenge method must be S256."  # belief: the words of Doorkeeper's refusal
# Mastodon's API refusals (docs.joinmastodon.org/entities/Error/ and the services' I18n strings)
TOKEN_INVALID = "The access token is invalid"
TOKEN_REVOKED = "The access token was revoked"
OUT_OF_SCOPE = "This action is outside the authorized scopes"
NOT_FOUND = "Record not found"
NOT_PROCESSED = "Cannot attach files that have not finished processing. Try again in a moment!"
TEMPORARY = "There was a temporary problem serving your request, please try again"
TOO_MANY = "Too many requests"
ACCOUNT_STATES = {
    "unconfirmed": "Your login is missing a confirmed e-mail address",
    "pending": "Your login is currently pending approval",
    "disabled": "Your login is currently disabled",
}


# --- configuration (kept in the sandbox database: a served emulator and its tests share it) ----------------------
def instance_config(host: str) -> dict[str, Any]:
    row = SandboxSetting.get_or_none(SandboxSetting.key == f"mastodon:instance:{host}")
    return {**INSTANCE_DEFAULTS, **(row.value if row else {})}


def configure_instance(host: str, **changes: Any) -> dict[str, Any]:
    """Set an emulated instance's configuration (its version, its limits); reset=True first returns to the
    defaults. Returns the configuration in force."""
    reset = bool(changes.pop("reset", False))
    unknown = set(changes) - set(INSTANCE_DEFAULTS)
    if unknown:
        raise ValueError(f"unknown instance setting(s): {', '.join(sorted(unknown))}")
    key = f"mastodon:instance:{host}"
    with write():
        row = SandboxSetting.get_or_none(SandboxSetting.key == key)
        value = {} if reset or row is None else dict(row.value)
        value.update(changes)
        if row is None:
            SandboxSetting.create(key=key, value=value)
        else:
            SandboxSetting.update(value=value).where(SandboxSetting.key == key).execute()
    return instance_config(host)


def account_flags(acc: SandboxAccount) -> dict[str, Any]:
    row = SandboxSetting.get_or_none(SandboxSetting.key == f"mastodon:account:{acc.id}")
    return dict(row.value) if row else {}


def configure_account(sandbox_account_id: str, *, silenced: bool = False, state: str | None = None) -> None:
    """An account's standing on its instance: silenced (its public statuses become unlisted), or a login state
    that refuses its calls (unconfirmed, pending, disabled)."""
    if state is not None and state not in ACCOUNT_STATES:
        raise ValueError(f"state: one of {', '.join(ACCOUNT_STATES)}")
    key = f"mastodon:account:{sandbox_account_id}"
    with write():
        SandboxSetting.delete().where(SandboxSetting.key == key).execute()
        SandboxSetting.create(key=key, value={"silenced": silenced, "state": state})


def _version(config: dict[str, Any]) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in str(config["version"]).split(".")[:2])
    except ValueError:
        return (4, 4)


def pkce_advertised(config: dict[str, Any]) -> bool:
    return _version(config) >= (4, 3)


def known_scopes(config: dict[str, Any]) -> tuple[str, ...]:
    return (*SCOPES, "profile") if pkce_advertised(config) else SCOPES


def covers(granted: list[str] | tuple[str, ...], needed: str) -> bool:
    return needed in granted or needed.split(":", 1)[0] in granted


def _error(status: int, sentence: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return json_response(status, {"error": sentence}, headers)


def _html(status: int, sentence: str) -> httpx.Response:
    page = f"<!DOCTYPE html><title>An error has occurred</title><h2>{html.escape(sentence)}</h2>"
    return httpx.Response(status, text=page, headers={"Content-Type": "text/html; charset=utf-8"})


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _loopback_ip(host: str | None) -> bool:
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def redirect_matches(asked: str, registered: list[str]) -> bool:
    """Doorkeeper's match: the same URI, or (RFC 8252 §7.3) a loopback IP URI on any port (`localhost` is not an
    IP: it must match exactly)."""
    if asked in registered:
        return True
    a = urlsplit(asked)
    if not _loopback_ip(a.hostname):
        return False
    for uri in registered:
        r = urlsplit(uri)
        if _loopback_ip(r.hostname) and (a.scheme, a.hostname, a.path, a.query) == (
            r.scheme,
            r.hostname,
            r.path,
            r.query,
        ):
            return True
    return False


def _app_of(client_id: str | None, host: str) -> dict[str, Any] | None:
    if not client_id:
        return None
    row = SandboxSetting.get_or_none(SandboxSetting.key == f"mastodon:app:{client_id}")
    if row is None or row.value.get("host") != host:
        return None  # an app is registered on one instance
    value: dict[str, Any] = row.value
    return value


def _secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _host_of(request: Request) -> str:
    return request.url.netloc.decode("ascii").lower()


def _api_id(acc: SandboxAccount) -> str:
    return acc.external_id.split("@", 1)[0]


class MastodonOAuth(OAuthProvider):
    DEFAULTS: dict[str, Any] = {"access_ttl_s": None}  # "Tokens will not expire automatically."

    def install(self) -> None:
        self.emu.route("POST", r"/api/v1/apps", self.register_app)
        self.emu.route("GET", r"/oauth/authorize", self.authorize)
        self.emu.route("POST", r"/oauth/token", self.token)
        self.emu.route("POST", r"/oauth/revoke", self.revoke)
        self.emu.route("GET", r"/\.well-known/oauth-authorization-server", self.metadata)

    def new_code(self) -> str:
        return b62(43)

    def new_access(self) -> str:
        return b62(43)

    def grant_error(self, error: str, description: str, status: int = 400) -> httpx.Response:
        return json_response(status, {"error": error, "error_description": description})

    def pkce_error(self) -> httpx.Response:
        return self.grant_error("invalid_grant", INVALID_GRANT)

    def metadata(self, request: Request) -> httpx.Response:
        host = _host_of(request)
        config = instance_config(host)
        if not pkce_advertised(config):
            return _error(404, NOT_FOUND)  # "before 4.3.0 … a 404 Not Found error"
        base = f"https://{host}"
        return json_response(
            200,
            {
                "issuer": f"{base}/",
                "authorization_endpoint": f"{base}/oauth/authorize",
                "token_endpoint": f"{base}/oauth/token",
                "revocation_endpoint": f"{base}/oauth/revoke",
                "scopes_supported": list(known_scopes(config)),
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
                "grant_types_supported": ["authorization_code", "client_credentials"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
                "app_registration_endpoint": f"{base}/api/v1/apps",
            },
        )

    def register_app(self, request: Request) -> httpx.Response:
        """`POST /api/v1/apps`: no review, a confidential client at once (M1, M2)."""
        host = _host_of(request)
        config = instance_config(host)
        p = request.params
        name = str(p.get("client_name") or "").strip()
        if not name:
            return _error(422, "Validation failed: Application name can't be blank")
        uris = p.get("redirect_uris")
        if isinstance(uris, str):
            uris = uris.split()
        if not isinstance(uris, list) or not uris:
            return _error(422, "Validation failed: Redirect URI can't be blank")
        for uri in uris:
            parts = urlsplit(str(uri))
            if (
                not parts.scheme
                or parts.fragment
                or parts.scheme.lower() in ("data", "javascript", "vbscript")
            ):
                return _error(422, "Validation failed: Redirect URI must be an absolute URI.")
            if parts.scheme.lower() in ("http", "https") and not parts.netloc:
                return _error(422, "Validation failed: Redirect URI must be an absolute URI.")
        scopes = str(p.get("scopes") or "read").split()
        if not set(scopes) <= set(known_scopes(config)):
            return _error(
                422, "Validation failed: Scopes must only contain supported scopes"
            )  # belief: words
        client_id, secret = b62(43), b62(43)
        app: dict[str, Any] = {
            "host": host,
            "name": name,
            "website": p.get("website"),
            "scopes": scopes,
            "redirect_uris": [str(u) for u in uris],
            "secret_hash": _secret_hash(secret),
            "id": str(10_000 + SandboxSetting.select().count()),
        }
        with write():
            SandboxSetting.create(key=f"mastodon:app:{client_id}", value=app)
        body: dict[str, Any] = {
            "id": app["id"],
            "name": name,
            "website": app["website"],
            "redirect_uri": "\n".join(app["redirect_uris"]),
            "client_id": client_id,
            "client_secret": secret,
            "client_secret_expires_at": 0,
            "vapid_key": "BCk-QqERU0q-CfYZjcuB6lnyyOYfJ2AifKqfeGIm7Z-HiTU5T9eTG5GxVA0_OH5mMlI4UkkDTpaZwozy0TzdZ2M=",
        }
        if pkce_advertised(config):  # 4.3 answers the scopes and the redirect URIs as lists
            body["scopes"] = scopes
            body["redirect_uris"] = app["redirect_uris"]
        return json_response(200, body)

    def authorize(self, request: Request) -> httpx.Response:
        host = _host_of(request)
        config = instance_config(host)
        q = request.query
        app = _app_of(q.get("client_id"), host)
        if app is None:
            return _html(401, INVALID_CLIENT)  # Doorkeeper's error page: no redirect to an unknown client
        uri = q.get("redirect_uri") or ""
        if not redirect_matches(uri, app["redirect_uris"]):
            return _html(400, INVALID_REDIRECT)  # no redirect either
        state = q.get("state")
        if q.get("response_type") != "code":
            return redirect(
                uri,
                {
                    "error": "unsupported_response_type",
                    "error_description": "The authorization server does not support this response type.",
                    "state": state,
                },
            )
        scopes = (q.get("scope") or "read").split()
        if not set(scopes) <= set(app["scopes"]) or not set(scopes) <= set(known_scopes(config)):
            return redirect(
                uri, {"error": "invalid_scope", "error_description": INVALID_SCOPE, "state": state}
            )
        challenge: str | None = None
        if pkce_advertised(config) and q.get("code_challenge"):
            if q.get("code_challenge_method") != "S256":
                return redirect(
                    uri, {"error": "invalid_request", "error_description": PKCE_METHOD, "state": state}
                )
            challenge = q["code_challenge"]
        settings = self.settings()
        if q.get("sandbox_consent") == "deny" or (
            settings["consent"] == "deny" and q.get("sandbox_consent") != "grant"
        ):
            return redirect(uri, {"error": "access_denied", "error_description": DENIED, "state": state})
        subject, accounts = self.user(q.get("sandbox_user") or "Sandbox user", 1)
        code = self.new_code()
        store_credential(
            self.platform,
            code,
            "code",
            expires_at=expiry(settings["code_ttl_s"]),
            data={
                "client_id": q["client_id"],
                "redirect_uri": uri,
                "scopes": scopes,
                "subject": subject,
                "accounts": accounts,
                "code_challenge": challenge,
                "code_challenge_method": "S256" if challenge else None,
                "host": host,
            },
        )
        return redirect(uri, {"code": code, "state": state})

    def _client(self, request: Request) -> tuple[str | None, str | None]:
        auth = request.header("authorization")
        if auth.lower().startswith("basic "):
            try:
                raw = base64.b64decode(auth[6:].strip()).decode()
            except ValueError:
                return None, None
            client_id, _sep, secret = raw.partition(":")
            return client_id, secret
        return request.params.get("client_id"), request.params.get("client_secret")

    def token(self, request: Request) -> httpx.Response:
        host = _host_of(request)
        client_id, secret = self._client(request)
        app = _app_of(client_id, host)
        if app is None or not secret or not hmac.compare_digest(app["secret_hash"], _secret_hash(secret)):
            return self.grant_error("invalid_client", INVALID_CLIENT, 401)
        params = dict(request.params)
        if params.get("grant_type") != "authorization_code":
            return self.grant_error(
                "unsupported_grant_type",
                "The authorization grant type is not supported by the authorization server.",
            )
        params["client_id"], params["client_secret"] = client_id, secret
        row = find_credential(params.get("code"), self.platform, "code")
        if row is None or (row.data or {}).get("host") != host:
            return self.grant_error("invalid_grant", INVALID_GRANT)
        if not pkce_advertised(instance_config(host)):
            params.pop("code_verifier", None)  # before 4.3 PKCE is not there: the parameter is ignored
        grant = self.redeem(params)
        if isinstance(grant, httpx.Response):
            body = grant.json() if grant.status_code >= 400 else {}
            if body.get("error") == "invalid_grant":  # Doorkeeper says one sentence for every invalid grant
                return self.grant_error("invalid_grant", INVALID_GRANT)
            return grant
        token, _at = self.issue_access(grant, self.settings()["access_ttl_s"])
        return json_response(
            200,
            {
                "access_token": token,
                "token_type": "Bearer",
                "scope": " ".join(grant.scopes or []),
                "created_at": int(now().timestamp()),
            },
        )

    def revoke(self, request: Request) -> httpx.Response:
        client_id, secret = self._client(request)
        app = _app_of(client_id, _host_of(request))
        if app is None or not secret or not hmac.compare_digest(app["secret_hash"], _secret_hash(secret)):
            return self.grant_error("unauthorized_client", "You are not authorized to revoke this token", 403)
        revoke_token(str(request.params.get("token") or ""), self.platform)
        return json_response(200, {})


class MastodonEmulator(Emulator):
    platform = PLATFORM
    HOSTS = {"api": f"https://{SANDBOX_HOST}"}
    OAUTH = MastodonOAuth
    SERVE_HINT = (
        "Every host it is reached at is an instance. Connect an account on it (the data dir must allow this "
        "machine's addresses: `socialpub admin private-urls on`):\n"
        "socialpub accounts connect mastodon --instance {host}"
    )
    SERVE_ENDPOINTS = (
        ("apps", "POST /api/v1/apps"),
        ("authorize", "/oauth/authorize"),
        ("token", "POST /oauth/token"),
    )

    @classmethod
    def new_identity(cls, name: str) -> tuple[str, str]:
        """The account's id at the instance and the instance's host: `<id>@<host>`, as socialpub keeps it."""
        return f"1{secrets.randbelow(10**17):017d}@{SANDBOX_HOST}", b62(43)

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        install(self)
        self.route("GET", r"/api/v2/instance", self.instance)
        self.route("POST", r"/_sandbox/instance", self.control_instance)
        self.route("GET", r"/api/v1/accounts/verify_credentials", self.verify_credentials)
        self.route("GET", r"/api/v1/accounts/(?P<account_id>\d+)/statuses", self.account_statuses)
        self.route("POST", r"/api/v2/media", self.upload)
        self.route("GET", r"/api/v1/media/(?P<media_id>\d+)", self.media)
        self.route("PUT", r"/api/v1/media/(?P<media_id>\d+)", self.update_media)
        self.route("POST", r"/api/v1/statuses", self.post_status)
        self.route("GET", r"/api/v1/statuses/(?P<status_id>\d+)/source", self.source)
        self.route("GET", r"/api/v1/statuses/(?P<status_id>\d+)", self.get_status)

    # --- plumbing ------------------------------------------------------------------------------------------------
    def rate_headers(self, acc: SandboxAccount | None = None) -> dict[str, str]:
        t = self.now()
        window = t.replace(second=0, microsecond=0) + timedelta(minutes=5 - t.minute % 5)
        return {
            "X-RateLimit-Limit": str(API_PER_5MIN),
            "X-RateLimit-Remaining": str(API_PER_5MIN - 1),
            "X-RateLimit-Reset": _iso(window),
        }

    def auth(self, request: Request, *scopes: str) -> SandboxAccount | httpx.Response:
        """The account a call speaks for, once its token is valid and holds one of `scopes` (or their parent)."""
        found = authenticate(request.bearer(), PLATFORM)
        if found.problem == "revoked":
            return _error(401, TOKEN_REVOKED)
        if found.problem or found.account is None:
            return _error(401, TOKEN_INVALID)
        granted = list(found.grant.scopes or []) if found.grant is not None else ["read", "write", "profile"]
        if scopes and not any(covers(granted, s) for s in scopes):
            return _error(403, OUT_OF_SCOPE)
        state = account_flags(found.account).get("state")
        if state:
            return _error(403, ACCOUNT_STATES[state])
        return found.account

    def app_name(self, request: Request) -> dict[str, Any]:
        """The application a token was issued to (shown on the owner's own statuses)."""
        found = authenticate(request.bearer(), PLATFORM)
        if found.grant is not None:
            row = SandboxSetting.get_or_none(SandboxSetting.key == f"mastodon:app:{found.grant.client_id}")
            if row is not None:
                return {"name": row.value["name"], "website": row.value.get("website")}
        return {"name": "socialpub", "website": None}  # a sandbox account's own token: socialpub's app

    def new_id(self) -> str:
        """A Snowflake-like id: time first, so ids sort as they were made."""
        ms = int(self.now().timestamp() * 1000)
        return str((ms << 16) | secrets.randbelow(1 << 16))

    # --- instance --------------------------------------------------------------------------------------------------
    def instance(self, request: Request) -> httpx.Response:
        host = _host_of(request)
        c = instance_config(host)
        media: dict[str, Any] = {
            "supported_mime_types": c["supported_mime_types"],
            "image_size_limit": c["image_size_limit"],
            "image_matrix_limit": c["image_matrix_limit"],
            "video_size_limit": c["video_size_limit"],
            "video_frame_rate_limit": c["video_frame_rate_limit"],
            "video_matrix_limit": c["video_matrix_limit"],
        }
        if _version(c) >= (4, 4):
            media["description_limit"] = c["description_limit"]
        body: dict[str, Any] = {
            "domain": host,
            "title": f"Sandbox instance {host}",
            "version": c["version"],
            "source_url": "https://github.com/mastodon/mastodon",
            "description": "An emulated Mastodon instance (socialpub sandbox)",
            "configuration": {
                "statuses": {
                    "max_characters": c["max_characters"],
                    "max_media_attachments": c["max_media_attachments"],
                    "characters_reserved_per_url": c["characters_reserved_per_url"],
                },
                "media_attachments": media,
            },
            "registrations": {"enabled": False, "approval_required": False},
        }
        if pkce_advertised(c):
            body["api_versions"] = {"mastodon": 2}
        return json_response(200, body, self.rate_headers())

    def control_instance(self, request: Request) -> httpx.Response:
        """POST /_sandbox/instance {setting: value}: this host's configuration (not a real endpoint)."""
        body = request.json if isinstance(request.json, dict) else {}
        try:
            return json_response(200, configure_instance(_host_of(request), **body))
        except (TypeError, ValueError) as exc:
            return _error(400, str(exc))

    # --- accounts --------------------------------------------------------------------------------------------------
    def account_view(self, acc: SandboxAccount, host: str) -> dict[str, Any]:
        return {
            "id": _api_id(acc),
            "username": acc.username,
            "acct": acc.username,
            "display_name": acc.display_name,
            "url": f"https://{host}/@{acc.username}",
            "locked": False,
            "bot": False,
        }

    def verify_credentials(self, request: Request) -> httpx.Response:
        acc = self.auth(request, "profile", "read:accounts")
        if isinstance(acc, httpx.Response):
            return acc
        return json_response(200, self.account_view(acc, _host_of(request)), self.rate_headers(acc))

    # --- media -----------------------------------------------------------------------------------------------------
    def media_view(self, item: SandboxItem, host: str, *, accepted: bool = False) -> dict[str, Any]:
        """accepted: the 202 of an upload processed asynchronously (its url null, however fast it goes)."""
        ready = self.ready(item) and item.outcome == "ok" and not accepted
        ext = (item.data or {}).get("ext", "bin")
        return {
            "id": item.id,
            "type": item.mode,
            "url": f"https://{host}/system/media_attachments/{item.id}/original.{ext}" if ready else None,
            "preview_url": f"https://{host}/system/media_attachments/{item.id}/small.jpg",
            "remote_url": None,
            "description": (item.data or {}).get("description"),
            "meta": {},
            "blurhash": None,
        }

    def upload(self, request: Request) -> httpx.Response:
        acc = self.auth(request, "write:media")
        if isinstance(acc, httpx.Response):
            return acc
        host = _host_of(request)
        c = instance_config(host)
        if (
            self.config.limits
            and self.count_since(acc, ("media",), 1800, limit=MEDIA_PER_30MIN) >= MEDIA_PER_30MIN
        ):
            return self.too_many(acc, ("media",), 1800)
        fields, files = multipart(request)
        if "file" not in files:
            return _error(422, "Validation failed: File can't be blank")
        _name, mime, data = files["file"]
        mime = mime.split(";")[0].strip().lower()
        if mime not in c["supported_mime_types"]:
            return _error(422, "Validation failed: File content type is invalid, File is invalid")
        kind = "image" if mime.startswith("image/") and mime != "image/gif" else "video"
        if mime == "image/gif":
            kind = "gifv"
        elif mime.startswith("audio/"):
            kind = "audio"
        limit = c["image_size_limit"] if kind == "image" else c["video_size_limit"]
        if len(data) > limit:  # belief: the words (Paperclip's size validation)
            return _error(422, f"Validation failed: File file size must be less than {limit // 1_048_576} MB")
        description = fields.get("description")
        if description is not None and len(description) > c["description_limit"]:
            return _error(
                422,
                f"Validation failed: Description is too long (maximum is {c['description_limit']} characters)",
            )
        synchronous = kind == "image"  # 4.0: images processed at once (200), video, gifv, audio later (202)
        item = new_item(
            PLATFORM,
            acc,
            "media",
            self.new_id(),
            processing_s=0.0 if synchronous else self.processing_s(acc),
            mode=kind,
            outcome="failed" if acc.behaviour == "fail-permanent" and not synchronous else "ok",
            data={
                "description": description,
                "mime": mime,
                "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "ext": mime.split("/")[-1],
                "host": host,
            },
        )
        return json_response(
            200 if synchronous else 202,
            self.media_view(item, host, accepted=not synchronous),
            self.rate_headers(acc),
        )

    def _own_media(self, acc: SandboxAccount, media_id: str) -> SandboxItem | None:
        item = get_item(media_id, PLATFORM)
        if item is None or item.kind != "media" or item.account_id != acc.id:
            return None
        return item

    def media(self, request: Request, media_id: str) -> httpx.Response:
        acc = self.auth(request, "write:media")
        if isinstance(acc, httpx.Response):
            return acc
        item = self._own_media(acc, media_id)
        if item is None:
            return _error(404, NOT_FOUND)
        if not self.ready(item):
            return json_response(206, self.media_view(item, _host_of(request)), self.rate_headers(acc))
        if item.outcome != "ok":
            return _error(422, "Error processing original media")  # belief: the words
        return json_response(200, self.media_view(item, _host_of(request)), self.rate_headers(acc))

    def update_media(self, request: Request, media_id: str) -> httpx.Response:
        acc = self.auth(request, "write:media")
        if isinstance(acc, httpx.Response):
            return acc
        item = self._own_media(acc, media_id)
        if item is None:
            return _error(404, NOT_FOUND)
        description = request.params.get("description")
        if description is not None:
            update_data = {**(item.data or {}), "description": str(description)}
            with write():
                SandboxItem.update(data=update_data).where(SandboxItem.id == item.id).execute()
            item = get_item(media_id, PLATFORM) or item
        return json_response(200, self.media_view(item, _host_of(request)), self.rate_headers(acc))

    # --- statuses --------------------------------------------------------------------------------------------------
    def too_many(self, acc: SandboxAccount, kinds: tuple[str, ...], window_s: float) -> httpx.Response:
        oldest = (
            SandboxItem.select(SandboxItem.created_at)
            .where(
                (SandboxItem.platform == PLATFORM)
                & (SandboxItem.account_id == acc.id)
                & SandboxItem.kind.in_(kinds)
                & (SandboxItem.created_at > self.now() - timedelta(seconds=window_s))
            )
            .order_by(SandboxItem.created_at)
            .first()
        )
        reset = (oldest.created_at if oldest else self.now()) + timedelta(seconds=window_s)
        return _error(
            429,
            TOO_MANY,
            {"X-RateLimit-Limit": "300", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": _iso(reset)},
        )

    def status_view(self, item: SandboxItem, host: str, owner: SandboxAccount) -> dict[str, Any]:
        d = item.data or {}
        media = []
        for media_id in d.get("media_ids") or []:
            m = get_item(media_id, PLATFORM)
            if m is not None:
                media.append(self.media_view(m, host))
        return {
            "id": item.id,
            "created_at": _iso(item.created_at),
            "uri": f"https://{host}/users/{owner.username}/statuses/{item.id}",
            "url": item.url,
            "visibility": d.get("visibility"),
            "language": d.get("language"),
            "sensitive": bool(d.get("sensitive")),
            "spoiler_text": d.get("spoiler_text") or "",
            "content": "<p>" + html.escape(item.text).replace("\n", "<br />") + "</p>",
            "media_attachments": media,
            "application": d.get("application"),
            "account": self.account_view(owner, host),
            "in_reply_to_id": None,
            "reblog": None,
        }

    def _status_params(self, request: Request) -> dict[str, Any]:
        if isinstance(request.json, dict):
            return dict(request.json)
        params: dict[str, Any] = dict(request.params)
        if request.form:  # media_ids[] repeated in a form
            pairs = parse_qsl(request.content.decode("utf-8", "replace"), keep_blank_values=True)
            params["media_ids"] = [v for k, v in pairs if k in ("media_ids[]", "media_ids")]
        return params

    def post_status(self, request: Request) -> httpx.Response:
        acc = self.auth(request, "write:statuses")
        if isinstance(acc, httpx.Response):
            return acc
        host = _host_of(request)
        key = request.header("idempotency-key")
        if key and not self._take_key(acc, key):
            return _error(503, TEMPORARY)
        try:
            return self._post_status(request, acc, host, key)
        finally:
            if key:
                with write():
                    SandboxSetting.delete().where(SandboxSetting.key == _key_lock(acc, key)).execute()

    def _take_key(self, acc: SandboxAccount, key: str) -> bool:
        """The key's lock for this request (committed, so other requests and processes see it); False while another
        request holds it (one its holder never released is free after IDEMPOTENCY_LOCK_S)."""
        now = self.now().timestamp()
        with exclusive(acc):  # processes too: SQLite's write lock, PostgreSQL's account row lock
            held = SandboxSetting.get_or_none(SandboxSetting.key == _key_lock(acc, key))
            if held is not None and now - held.value["at"] < IDEMPOTENCY_LOCK_S:
                return False
            SandboxSetting.delete().where(SandboxSetting.key == _key_lock(acc, key)).execute()
            SandboxSetting.create(key=_key_lock(acc, key), value={"at": now})
        return True

    def _post_status(
        self, request: Request, acc: SandboxAccount, host: str, key: str | None
    ) -> httpx.Response:
        with exclusive(acc):
            if key:  # a replay within the hour answers the first status, whatever this body says
                row = SandboxSetting.get_or_none(SandboxSetting.key == f"mastodon:idem:{acc.id}:{key}")
                if row is not None and self.now().timestamp() - row.value["at"] < IDEMPOTENCY_S:
                    first = get_item(row.value["status"], PLATFORM)
                    if first is not None:
                        return json_response(200, self.status_view(first, host, acc), self.rate_headers(acc))
            refused = self._gate(acc)
            if refused is not None:
                return refused
            if self.config.limits and (
                self.count_since(acc, ("status",), 3 * 3600, limit=STATUSES_PER_3H) >= STATUSES_PER_3H
            ):
                return self.too_many(acc, ("status",), 3 * 3600)
            made = self._create(request, acc, host)
            if isinstance(made, httpx.Response):
                return made
            if key:  # kept only after a success (setex after the status is created)
                with write():
                    SandboxSetting.delete().where(
                        SandboxSetting.key == f"mastodon:idem:{acc.id}:{key}"
                    ).execute()
                    SandboxSetting.create(
                        key=f"mastodon:idem:{acc.id}:{key}",
                        value={"status": made.id, "at": self.now().timestamp()},
                    )
        return json_response(200, self.status_view(made, host, acc), self.rate_headers(acc))

    def _gate(self, acc: SandboxAccount) -> httpx.Response | None:
        g = gate(acc)
        if g == Gate.RETRIABLE:
            return _error(503, TEMPORARY)
        if g == Gate.RATE:
            reset = self.now() + timedelta(seconds=60)
            return _error(
                429,
                TOO_MANY,
                {"X-RateLimit-Limit": "300", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": _iso(reset)},
            )
        if acc.behaviour == "fail-permanent":
            return _error(403, ACCOUNT_STATES["disabled"])
        return None

    def _create(self, request: Request, acc: SandboxAccount, host: str) -> SandboxItem | httpx.Response:
        c = instance_config(host)
        p = self._status_params(request)
        text = str(p.get("status") or "")
        spoiler = str(p.get("spoiler_text") or "")
        media_ids = [str(m) for m in (p.get("media_ids") or [])]
        visibility = str(p.get("visibility") or "public")
        if visibility not in ("public", "unlisted", "private", "direct"):
            return _error(
                422, "Validation failed: Visibility is not included in the list"
            )  # belief: the words
        if len(media_ids) > c["max_media_attachments"]:
            return _error(422, f"Cannot attach more than {c['max_media_attachments']} files")
        media = [self._own_media(acc, m) for m in media_ids]
        if any(m is None for m in media):
            return _error(422, "Could not find media with IDs: " + ", ".join(media_ids))  # belief: the words
        found = [m for m in media if m is not None]
        if len(found) > 1 and any(m.mode in ("video", "gifv", "audio") for m in found):
            return _error(422, "Cannot attach a video to a post that already contains images")
        if any(not self.ready(m) or m.outcome != "ok" for m in found):
            return _error(422, NOT_PROCESSED)
        if not text.strip() and not found:
            return _error(422, "Validation failed: Text can't be blank")
        if status_length(text, spoiler, c["characters_reserved_per_url"]) > c["max_characters"]:
            return _error(422, f"Validation failed: Text character limit of {c['max_characters']} exceeded")
        flags = account_flags(acc)
        if visibility == "public" and flags.get("silenced"):
            visibility = "unlisted"  # PostStatusService: a silenced account's public status is unlisted
        language = p.get("language")
        if not isinstance(language, str) or len(language) not in (2, 3) or not language.isalpha():
            language = "en"  # valid_locale_cascade: the account's default
        status_id = self.new_id()
        return new_item(
            PLATFORM,
            acc,
            "status",
            status_id,
            mode=visibility,
            text=text,
            media=[{"id": m.id, "type": m.mode} for m in found],
            post_id=status_id,
            url=f"https://{host}/@{acc.username}/{status_id}",
            state="published",
            data={
                "spoiler_text": spoiler,
                "visibility": visibility,
                "language": language,
                "sensitive": bool(p.get("sensitive")) or bool(spoiler),
                "media_ids": [m.id for m in found],
                "application": self.app_name(request),
                "idempotency_key": request.header("idempotency-key") or None,
                "host": host,
            },
        )

    def _status(self, status_id: str) -> tuple[SandboxItem, SandboxAccount] | None:
        item = get_item(status_id, PLATFORM)
        if item is None or item.kind != "status" or item.state == "deleted":
            return None
        owner = SandboxAccount.get_or_none(SandboxAccount.id == item.account_id)
        return (item, owner) if owner is not None else None

    def get_status(self, request: Request, status_id: str) -> httpx.Response:
        acc = self.auth(request, "read:statuses")
        if isinstance(acc, httpx.Response):
            return acc
        found = self._status(status_id)
        if found is None or (found[1].id != acc.id and found[0].mode in ("private", "direct")):
            return _error(404, NOT_FOUND)
        return json_response(
            200, self.status_view(found[0], _host_of(request), found[1]), self.rate_headers(acc)
        )

    def source(self, request: Request, status_id: str) -> httpx.Response:
        acc = self.auth(request, "read:statuses")
        if isinstance(acc, httpx.Response):
            return acc
        found = self._status(status_id)
        if found is None or found[1].id != acc.id:
            return _error(404, NOT_FOUND)
        item = found[0]
        return json_response(
            200,
            {"id": item.id, "text": item.text, "spoiler_text": (item.data or {}).get("spoiler_text") or ""},
            self.rate_headers(acc),
        )

    def account_statuses(self, request: Request, account_id: str) -> httpx.Response:
        """Newest first, ≤ 40 a page, paged with max_id; the owner (with read:statuses) sees every visibility,
        others the public and unlisted ones (public answers without a token)."""
        owner = SandboxAccount.get_or_none(
            (SandboxAccount.platform == PLATFORM) & (SandboxAccount.external_id.startswith(f"{account_id}@"))
        )
        if owner is None:
            return _error(404, NOT_FOUND)
        viewer: SandboxAccount | None = None
        if request.bearer():
            found = self.auth(request, "read:statuses")
            if isinstance(found, httpx.Response):
                return found
            viewer = found
        try:
            limit = max(1, min(LISTING_MAX, int(request.query.get("limit") or 20)))
        except ValueError:
            limit = 20
        q = SandboxItem.select().where(
            (SandboxItem.platform == PLATFORM)
            & (SandboxItem.account_id == owner.id)
            & (SandboxItem.kind == "status")
            & (SandboxItem.state != "deleted")
        )
        if viewer is None or viewer.id != owner.id:
            q = q.where(SandboxItem.mode.in_(("public", "unlisted")))
        max_id = request.query.get("max_id")
        if max_id:
            anchor = get_item(max_id, PLATFORM)
            if anchor is not None:
                q = q.where(
                    (SandboxItem.created_at < anchor.created_at)
                    | ((SandboxItem.created_at == anchor.created_at) & (SandboxItem.id < anchor.id))
                )
        rows = list(q.order_by(SandboxItem.created_at.desc(), SandboxItem.id.desc()).limit(limit))
        host = _host_of(request)
        headers = self.rate_headers(viewer)
        if len(rows) == limit:
            headers["Link"] = (
                f"<https://{host}/api/v1/accounts/{account_id}/statuses?limit={limit}&max_id={rows[-1].id}>; "
                'rel="next"'
            )
        return json_response(200, [self.status_view(r, host, owner) for r in rows], headers)

    # --- the sandbox's listing -------------------------------------------------------------------------------------
    def describe(self, item: SandboxItem) -> dict[str, Any] | None:
        if item.kind != "status":
            return None
        d = item.data or {}
        return {
            "external_id": item.id,
            "url": item.url,
            "status": "published",
            "kind": "video"
            if any(m.get("type") in ("video", "gifv") for m in item.media or [])
            else "image"
            if item.media
            else "text",
            "text": item.text,
            "title": d.get("spoiler_text") or None,
            "media": list(item.media or []),
            "visibility": d.get("visibility"),
            "idempotency_key": d.get("idempotency_key"),
        }


def _key_lock(acc: SandboxAccount, key: str) -> str:
    return f"mastodon:idem-lock:{acc.id}:{key}"


def grants_of(host: str) -> list[SandboxGrant]:
    """The consents given to apps of `host` (tests)."""
    apps = {
        row.key.split(":", 2)[2]
        for row in SandboxSetting.select().where(SandboxSetting.key.startswith("mastodon:app:"))
        if row.value.get("host") == host
    }
    return [g for g in SandboxGrant.select().where(SandboxGrant.platform == PLATFORM) if g.client_id in apps]
