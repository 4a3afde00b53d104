"""What connecting to a Mastodon instance decides, before and around its calls (the calls themselves are the
connect flow's, not built yet: docs.md "State"). Sources read 2026-11-28: docs.joinmastodon.org/methods/apps/,
/methods/oauth/, /spec/oauth/, /api/oauth-scopes/.

- `instance_host`: the `--instance HOST` a user gives, as one host name (a URL or a handle's host is read too).
- The app is registered once per instance (`POST /api/v1/apps`, no review) with REDIRECT_URI, a loopback IP
  without a port: Doorkeeper matches a loopback IP redirect on any port (RFC 8252 §7.3), `localhost` it does not.
- The scopes: the scopes asked at authorization must be a subset of those the app was registered with, "otherwise,
  authorization will fail" — `needs_registration` says when the stored app no longer covers them.
- `profile` (4.3+) where the instance lists it in `scopes_supported`, else `read:accounts`, for verify_credentials.
- PKCE (S256 only) where `/.well-known/oauth-authorization-server` advertises it (4.3+); before 4.3 that answers
  404 and no `code_challenge` / `code_verifier` is sent."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

REDIRECT_URI = "http://127.0.0.1/callback"
CLIENT_NAME = "socialpub"
# publishing and reconciliation: post, upload and follow media, read the account's own statuses of any visibility
PUBLISH_SCOPES = ("write:statuses", "write:media", "read:statuses")
_HOST_LABEL = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"


class ConnectRefused(ValueError):
    """The instance cannot be connected this way; the message says why and what to do."""


def instance_host(given: str) -> str:
    """The instance's host from what the user typed: `social.example`, `https://social.example/`, or a handle
    `@alice@social.example`; lowercase, IDNA-encoded. A path, a user:password@ or a query is refused."""
    text = given.strip()
    if text.startswith("@") and text.count("@") == 2:
        text = text.rsplit("@", 1)[1]
    parts = urlsplit(text if "://" in text else f"https://{text}")
    if (
        parts.scheme not in ("https", "http")
        or parts.username
        or parts.password
        or parts.query
        or parts.fragment
    ):
        raise ConnectRefused(f"{given!r} is not an instance's host name (e.g. mastodon.social)")
    if parts.path not in ("", "/"):
        raise ConnectRefused(
            f"{given!r} has a path: give the instance's host name only (e.g. mastodon.social)"
        )
    host = (parts.hostname or "").rstrip(".")
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        raise ConnectRefused(f"{given!r} is not a valid host name") from None
    labels = host.split(".")
    if len(labels) < 2 or not all(re.fullmatch(_HOST_LABEL, label) for label in labels):
        raise ConnectRefused(f"{given!r} is not an instance's host name (e.g. mastodon.social)")
    port = f":{parts.port}" if parts.port else ""
    return host + port


def scopes_for(metadata: dict[str, Any] | None) -> tuple[str, ...]:
    """The scopes to register and ask: PUBLISH_SCOPES and `profile` where the instance supports it (4.3+, listed in
    its metadata's `scopes_supported`), else `read:accounts`."""
    supported = (metadata or {}).get("scopes_supported")
    profile = isinstance(supported, list) and "profile" in supported
    return (*PUBLISH_SCOPES, "profile" if profile else "read:accounts")


def pkce_supported(status: int, metadata: Any) -> bool:
    """Whether to send a PKCE challenge: the metadata answered 200 and lists S256. A 404 is an instance before 4.3
    (no PKCE); any other answer says nothing reliable: ConnectRefused (try again later)."""
    if status == 404:
        return False
    if status != 200 or not isinstance(metadata, dict):
        raise ConnectRefused(
            f"the instance's /.well-known/oauth-authorization-server answered {status}: try again later"
        )
    methods = metadata.get("code_challenge_methods_supported")
    return isinstance(methods, list) and "S256" in methods


def registration_body(scopes: Iterable[str], website: str | None = None) -> dict[str, Any]:
    """The JSON body of `POST /api/v1/apps`."""
    body: dict[str, Any] = {
        "client_name": CLIENT_NAME,
        "redirect_uris": [REDIRECT_URI],
        "scopes": " ".join(scopes),
    }
    if website:
        body["website"] = website
    return body


@dataclass(frozen=True)
class RegisteredApp:
    """An app registered on one instance (stored per instance, the secret encrypted)."""

    host: str
    client_id: str
    client_secret: str = field(repr=False)
    scopes: tuple[str, ...]
    redirect_uris: tuple[str, ...]


def registered_app(host: str, asked_scopes: Iterable[str], body: Any) -> RegisteredApp:
    """The instance's answer to the registration; ConnectRefused when it is not an app with credentials. An answer
    without `scopes` (instances before 4.3 do not echo them) registered what was asked."""
    if not isinstance(body, dict):
        raise ConnectRefused(f"{host} answered the app registration without JSON")
    client_id, secret = body.get("client_id"), body.get("client_secret")
    if not isinstance(client_id, str) or not client_id or not isinstance(secret, str) or not secret:
        error = body.get("error")
        said = f": {error}" if isinstance(error, str) else ""
        raise ConnectRefused(f"{host} did not register socialpub's app{said}")
    scopes = body.get("scopes")
    uris = body.get("redirect_uris")
    if not isinstance(uris, list):
        uris = [body["redirect_uri"]] if isinstance(body.get("redirect_uri"), str) else [REDIRECT_URI]
    return RegisteredApp(
        host=host,
        client_id=client_id,
        client_secret=secret,
        scopes=tuple(scopes) if isinstance(scopes, list) else tuple(asked_scopes),
        redirect_uris=tuple(u for u in uris if isinstance(u, str)),
    )


def needs_registration(app: RegisteredApp | None, wanted: Iterable[str]) -> bool:
    """Whether to register (again): no app yet, its scopes do not cover what connect asks, or its redirect URIs
    lack REDIRECT_URI."""
    if app is None:
        return True
    return not set(wanted) <= set(app.scopes) or REDIRECT_URI not in app.redirect_uris
