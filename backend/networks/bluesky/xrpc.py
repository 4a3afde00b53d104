"""XRPC calls and how Bluesky refuses them (https://atproto.com/specs/xrpc, read 2026-11-28): every failure is
`{"error": <Name>, "message": <text>}` (the message optional, a 500 only "Internal Server Error"), the name says
what happened, not the status: an expired access token is a 400 `ExpiredToken`, a bad one a 400 `InvalidToken`."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx

from backend import clock
from backend.networks.base import NetworkError
from backend.networks.http import json_or_none
from backend.outbound.retry_after import retry_after_s

NETWORK = "Bluesky"
# the authorisation is gone: reconnect (a refresh is tried first by the token life where the token expired)
AUTH_ERRORS = frozenset(
    {"ExpiredToken", "InvalidToken", "AuthenticationRequired", "AuthMissing", "AuthRequired"}
)
ACCOUNT_ERRORS = frozenset({"AccountTakedown", "AccountDeactivated", "RepoTakendown", "RepoDeactivated"})


def error_of(resp: httpx.Response) -> tuple[str, str]:
    """(the error's name, its message); a body that is not XRPC's (a proxy's page) gives ("http_<status>", "")."""
    body = json_or_none(resp)
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return body["error"], str(body.get("message") or "")
    return f"http_{resp.status_code}", ""


def _reset_s(resp: httpx.Response) -> float | None:
    after = retry_after_s(resp)
    if after is not None:
        return after
    try:
        return max(1.0, float(resp.headers["ratelimit-reset"]) - clock.now().timestamp())
    except (KeyError, ValueError):
        return None


def classify(resp: httpx.Response) -> NetworkError:
    """An XRPC refusal as socialpub's failure kinds (docs: backend/networks/bluesky/docs.md "Errors")."""
    name, message = error_of(resp)
    s = resp.status_code
    said = f": {message}" if message else ""
    if name in AUTH_ERRORS:
        return NetworkError(
            "permanent",
            f"{NETWORK} refused the account's session ({name}{said}): reconnect it with "
            "`socialpub accounts connect bluesky --handle …` and an app password",
            code=name,
            http_status=s,
            auth_refused=True,
        )
    if name in ACCOUNT_ERRORS:
        return NetworkError(
            "permanent",
            f"{NETWORK} refused the account ({name}{said}): check the account in the Bluesky app",
            code=name,
            http_status=s,
        )
    if name == "RateLimitExceeded" or s == 429:
        return NetworkError(
            "retriable",
            f"{NETWORK}'s rate limit is reached{said}",
            code=name,
            http_status=429,
            retry_after_s=_reset_s(resp),
            wait=True,
        )
    if s >= 500 or name in ("UpstreamFailure", "NotEnoughResources", "InternalServerError"):
        return NetworkError(
            "retriable", f"{NETWORK} failed ({name}{said}); it will be retried", code=name, http_status=s
        )
    if name == "PayloadTooLarge" or s == 413:
        return NetworkError(
            "permanent", f"{NETWORK}'s server refused a file as too large{said}", code=name, http_status=s
        )
    return NetworkError("permanent", f"{NETWORK} refused the post ({name}{said})", code=name, http_status=s)


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def jwt_claims(token: str) -> dict[str, Any]:
    """The payload of a JWT, unverified (its `exp`, `scope`, `sub`): the PDS verifies it, socialpub only reads
    its life and kind."""
    try:
        part = token.split(".")[1]
        data = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    except (IndexError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
