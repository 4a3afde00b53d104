"""TikTok's error switches (backend/networks/sandbox/errors.py): NETWORKS.md section 1's codes, in TikTok's
envelope with a `log_id`."""

from __future__ import annotations

from typing import Any

import httpx

from backend.networks.sandbox.core import digits, json_response
from backend.networks.sandbox.faults import Fault


def _tiktok_body(f: Fault) -> httpx.Response:
    log_id = "2025" + digits(28, "0")
    return json_response(
        f.status, {"data": {}, "error": {"code": f.code, "message": f.message, "log_id": log_id}}
    )


def _tt(code: str, status: int, action: str, message: str, **kw: Any) -> Fault:
    return Fault(code, status, action, message, _tiktok_body, **kw)


# section 1, the `error.code` table by HTTP status (the caps' action from the fail_reason table)
FAULT_LIST = [
    _tt("invalid_param", 400, "permanent", "The request parameters are invalid."),
    _tt("invalid_params", 400, "permanent", "The request parameters are invalid."),
    _tt(
        "app_version_check_failed", 400, "permanent", "The user's TikTok app version does not support drafts."
    ),
    _tt("invalid_publish_id", 400, "permanent", "The publish_id does not exist."),
    _tt(
        "token_not_authorized_for_specified_publish_id",
        400,
        "permanent",
        "The access token is not authorized for this publish_id.",
    ),
    _tt("publish_not_cancellable", 400, "permanent", "The publish is no longer cancellable."),
    _tt("access_token_invalid", 401, "reauth", "The access token is invalid or not found in the request."),
    _tt(
        "scope_not_authorized",
        401,
        "reauth",
        "The user did not authorize the scope required for this endpoint.",
    ),
    _tt(
        "spam_risk_too_many_posts",
        403,
        "wait",
        "The daily post cap from the API is reached for this creator.",
    ),
    _tt("spam_risk_user_banned_from_posting", 403, "permanent", "The user is banned from making new posts."),
    _tt(
        "spam_risk_too_many_pending_share",
        403,
        "wait",
        "The daily cap of pending shares (5 in 24 hours) is reached for this creator.",
    ),
    _tt(
        "reached_active_user_cap",
        403,
        "wait",
        "The daily quota of active publishing users of the client is reached.",
    ),
    _tt(
        "unaudited_client_can_only_post_to_private_accounts",
        403,
        "permanent",
        "Unaudited clients can only post to a private account.",
    ),
    _tt(
        "url_ownership_unverified",
        403,
        "permanent",
        "The URL's domain or prefix is not verified for the app.",
    ),
    _tt(
        "privacy_level_option_mismatch",
        403,
        "permanent",
        "privacy_level is not one of the creator's privacy_level_options.",
    ),
    _tt("rate_limit_exceeded", 429, "wait", "The API rate limit was exceeded. Please try again later."),
    _tt("internal_error", 500, "retry", "Something went wrong on TikTok's side. Please try again later."),
]

FAULTS = {f.code: f for f in FAULT_LIST}

# endpoint names a switch's `path` may give: (methods, regular expression on the request path); "publish" (the
# default) is the network's first write of a publication
ERROR_ENDPOINTS: dict[str, tuple[tuple[str, ...], str]] = {
    "publish": (("POST",), r"^/v2/post/publish/(?:video|inbox/video|content)/init/?$"),
    "creator_info": (("POST",), r"^/v2/post/publish/creator_info/query/?$"),
    "status": (("POST",), r"^/v2/post/publish/status/fetch/?$"),
    "upload": (("PUT",), r"^/upload/video/?$"),
    "list": (("POST",), r"^/v2/video/list/?$"),
}
