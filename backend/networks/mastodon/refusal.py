"""How a Mastodon instance refuses an API call (docs.joinmastodon.org/entities/Error/, read 2026-11-28): a body
`{"error": "<a sentence>"}` (plus `error_description` on the OAuth endpoints), and "the most important part of an
error response is the HTTP status code". So the status decides, the sentence only refines it: 401 the token is
gone (reconnect); 403 either a missing scope (reconnect with the scopes) or the account's state on its instance
(confirm the e-mail, wait for approval: permanent, said); 404 and 422 permanent, except the sentence of media
still processing (retriable); 429 waits until `X-RateLimit-Reset` (an ISO 8601 time, no Retry-After: rack_attack.rb);
5xx retriable. A 503 or a cut on POST /api/v1/statuses is ambiguous: the adapter retries it with the same
Idempotency-Key (PostStatusService's lock answers 503 to a concurrent request with one key)."""

from __future__ import annotations

import httpx

from backend.networks.base import NetworkError
from backend.networks.http import json_or_none
from backend.outbound.retry_after import reset_in_s, retry_after_s

NETWORK = "Mastodon"
# 403s that are the account's state on its instance, not the app's grant (Api::BaseController#require_user!)
ACCOUNT_STATES = {
    "Your login is missing a confirmed e-mail address": "confirm the account's e-mail address on {host}",
    "Your login is currently pending approval": "the account waits for the approval of {host}'s moderators",
    "Your login is currently disabled": "the account is disabled on {host}: see its moderators",
}
SCOPE_REFUSAL = "This action is outside the authorized scopes"
# PostStatusService#validate_media!: media attached before the instance finished processing it
NOT_PROCESSED = "Cannot attach files that have not finished processing"


def message_of(resp: httpx.Response) -> str:
    body = json_or_none(resp)
    if isinstance(body, dict):
        for key in ("error_description", "error"):
            value = body.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return ""


def refusal(resp: httpx.Response, host: str = "the instance") -> NetworkError:
    """An instance's refusal as socialpub's failure kinds; the instance's sentence is kept in the reason."""
    s = resp.status_code
    said = message_of(resp)
    quoted = f' ("{said}")' if said else ""
    if s == 401:
        return NetworkError(
            "permanent",
            f"{host} refused the account's token{quoted}: reconnect it with "
            f"`socialpub accounts connect mastodon --instance {host}`",
            code="token_invalid",
            http_status=s,
            auth_refused=True,
        )
    if s == 403:
        for sentence, what in ACCOUNT_STATES.items():
            if said.startswith(sentence):
                return NetworkError(
                    "permanent", f"{what.format(host=host)}{quoted}", code="account_state", http_status=s
                )
        if said.startswith(SCOPE_REFUSAL):
            return NetworkError(
                "permanent",
                f"{host} says the account's grant lacks a scope{quoted}: reconnect it to grant the scopes",
                code="scope_missing",
                http_status=s,
                auth_refused=True,
            )
        return NetworkError("permanent", f"{host} refused the call{quoted}", code="forbidden", http_status=s)
    if s == 422 and said.startswith(NOT_PROCESSED):
        return NetworkError(
            "retriable",
            f"{host} is still processing the media{quoted}",
            code="media_not_ready",
            http_status=s,
        )
    if s == 429:
        wait = retry_after_s(resp)
        if wait is None:
            wait = reset_in_s(resp)
        return NetworkError(
            "retriable",
            f"{host} limits the rate of calls{quoted}",
            code="rate_limited",
            http_status=s,
            retry_after_s=wait,
        )
    if s >= 500:
        return NetworkError(
            "retriable",
            f"{host} answered {s}{quoted}",
            code=f"http_{s}",
            http_status=s,
            retry_after_s=retry_after_s(resp),
        )
    return NetworkError("permanent", f"{host} refused ({s}){quoted}", code=f"http_{s}", http_status=s)
