"""Fault injection: a switch per error code of ../shared/NETWORKS.md's tables (issue 17 item 6).

    configure_errors("facebook", "190/463", times=1)           # Python (the sandbox database opened last)
    POST /_sandbox/errors {"code": "190/463", "times": 1}       # a served emulator (`socialpub sandbox serve`)

Arms the emulator to answer the next `times` matching calls with exactly that network's error body and HTTP status
(and its Retry-After or `is_transient` where the network sends one), instead of serving them. A call matches when
its path matches `path`: an endpoint name of the network (ENDPOINTS; the default is the network's publishing call,
its first `write` of a publication) or a regular expression searched in the request path (any method). Several
switches may be armed at once; a call consumes the first that matches. Kept in the sandbox database
(`emulator_setting`, key `errors:<network>`) like the OAuth switches, so a served emulator and a test share them.

CATALOGUE holds, per network, each code as NETWORKS.md names it → its HTTP status, body builder, and NETWORKS.md's
action (`ACTIONS`): what the product must make of it. Codes marked `extra` are not in NETWORKS.md's tables (a
network's token refusals as docs/sandbox.md describes them, a plain 5xx where the table has none).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from backend.networks.sandbox.core import b64url, digits, json_response, write
from backend.networks.sandbox.store import SandboxSetting

# NETWORKS.md's "action", as the product must apply it to a target:
ACTIONS = {
    "permanent": "the target fails `permanent` (fix the post, the media or the account)",
    "retry": "retriable: the target is tried again (and succeeds once the error stops)",
    "wait": "a limit: the target waits `pending` with nextAttemptAt (the network's reset or Retry-After)",
    "reauth": "the token is refused: the target fails `permanent` and the account turns `needs_reauth`",
}


@dataclass(frozen=True)
class Fault:
    code: str  # as NETWORKS.md names it (Instagram/Facebook `code/subcode`)
    status: int  # the HTTP status the network answers with
    action: str  # a key of ACTIONS
    message: str
    build: Callable[[Fault], httpx.Response]
    retry_after_s: int | None = None  # a Retry-After header, where the network sends one
    transient: bool | None = None  # Graph's `is_transient`
    extra: bool = False  # not in NETWORKS.md's tables (see the module's docstring)

    def response(self) -> httpx.Response:
        resp = self.build(self)
        if self.retry_after_s is not None:
            resp.headers["Retry-After"] = str(self.retry_after_s)
        return resp

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "action": self.action, "message": self.message}
        if self.retry_after_s is not None:
            out["retryAfter"] = self.retry_after_s
        if self.transient is not None:
            out["isTransient"] = self.transient
        if self.extra:
            out["extra"] = True
        return out


# --- body builders, one per network ----------------------------------------------------------------------------
def _tiktok_body(f: Fault) -> httpx.Response:
    log_id = "2025" + digits(28, "0")
    return json_response(
        f.status, {"data": {}, "error": {"code": f.code, "message": f.message, "log_id": log_id}}
    )


def _graph_body(f: Fault) -> httpx.Response:
    code, _sep, sub = f.code.partition("/")
    err: dict[str, Any] = {
        "message": f.message,
        "type": "OAuthException",
        "code": int(code),
        "fbtrace_id": "A" + b64url(22),
    }
    if sub:
        err["error_subcode"] = int(sub)
    if f.transient is not None:
        err["is_transient"] = f.transient
    return json_response(f.status, {"error": err})


_LI_SERVICE = {
    "INVALID_ACCESS_TOKEN": 65600,
    "EXPIRED_ACCESS_TOKEN": 65601,
    "REVOKED_ACCESS_TOKEN": 65602,
    "ACCESS_DENIED": 100,
    "TOO_MANY_REQUESTS": 101,
}


def _linkedin_body(f: Fault) -> httpx.Response:
    body: dict[str, Any] = {"message": f.message, "status": f.status}
    if f.code in _LI_SERVICE:
        body["serviceErrorCode"] = _LI_SERVICE[f.code]
    body["code"] = f.code
    return json_response(f.status, body)


def _youtube_body(f: Fault) -> httpx.Response:
    domain = {"quotaExceeded": "youtube.quota", "authError": "global", "backendError": "global"}.get(
        f.code, "youtube.video"
    )
    headers = (
        {"WWW-Authenticate": 'Bearer realm="https://accounts.google.com/", error="invalid_token"'}
        if f.code == "authError"
        else None
    )
    return json_response(
        f.status,
        {
            "error": {
                "code": f.status,
                "message": f.message,
                "errors": [{"domain": domain, "reason": f.code, "message": f.message}],
            }
        },
        headers=headers,
    )


def _tt(code: str, status: int, action: str, message: str, **kw: Any) -> Fault:
    return Fault(code, status, action, message, _tiktok_body, **kw)


def _g(code: str, status: int, action: str, message: str, **kw: Any) -> Fault:
    return Fault(code, status, action, message, _graph_body, **kw)


def _li(code: str, status: int, action: str, message: str, **kw: Any) -> Fault:
    return Fault(code, status, action, message, _linkedin_body, **kw)


def _yt(code: str, status: int, action: str, message: str, **kw: Any) -> Fault:
    return Fault(code, status, action, message, _youtube_body, **kw)


# --- the catalogue: NETWORKS.md's tables, one per network -------------------------------------------------------
TIKTOK = [  # section 1, the `error.code` table by HTTP status (the caps' action from the fail_reason table)
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

INSTAGRAM = [  # section 2, the code / subcode table (error body as Facebook's)
    _g("-2/2207003", 400, "retry", "It took too long to download the media.", transient=True),
    _g(
        "-2/2207020",
        400,
        "retry",
        "The media you are trying to access has expired. Please try to upload again.",
    ),
    _g(
        "-1/2207001",
        500,
        "retry",
        "An unexpected error has occurred. Please retry your request later.",
        transient=True,
    ),
    _g("-1/2207032", 400, "retry", "Failed to create the media container. Please try again."),
    _g("-1/2207053", 400, "retry", "An unknown error occurred during the upload. Please try again."),
    _g(
        "4/2207051",
        400,
        "permanent",
        "We restrict certain activity to protect our community (action blocked as spam).",
    ),
    _g(
        "9/2207042",
        400,
        "wait",
        "You have reached the maximum number of posts allowed in 24 hours (content_publishing_limit).",
    ),
    _g("24/2207006", 400, "retry", "The media with the given id was not found. Please try again."),
    _g(
        "24/2207008",
        400,
        "retry",
        "The media builder has expired. Please try again in 30 seconds to 2 minutes.",
    ),
    _g(
        "25/2207050",
        400,
        "permanent",
        "The Instagram account is restricted: the user must fix it in the app.",
    ),
    _g("100/2207023", 400, "permanent", "The media type is unknown."),
    _g("100/2207028", 400, "permanent", "A carousel needs 2 to 10 children."),
    _g("9004/2207052", 400, "permanent", "The media could not be fetched from this URI."),
    _g("9007/2207027", 400, "retry", "The media is not ready to be published. Please wait a moment."),
    _g("36000/2207004", 400, "permanent", "The image is too large (8 MB at most)."),
    _g("36003/2207009", 400, "permanent", "The aspect ratio is not supported."),
    _g("352/2207026", 400, "permanent", "The video format is not supported."),
    _g("190/463", 400, "reauth", "Error validating access token: Session has expired.", extra=True),
]

FACEBOOK = [  # section 3: the retriable and permanent codes (32 and 613 from the rate-limiting tables)
    _g("1", 500, "retry", "An unknown error occurred", transient=True),
    _g("2", 503, "retry", "Service temporarily unavailable", transient=True),
    _g("4", 400, "wait", "(#4) Application request limit reached", transient=True),
    _g("17", 400, "wait", "(#17) User request limit reached", transient=True),
    _g("32", 400, "wait", "(#32) Page request limit reached", transient=True),
    _g("613", 400, "wait", "(#613) Calls to this api have exceeded the rate limit.", transient=True),
    _g("341", 400, "retry", "(#341) Application limit reached: temporary", transient=True),
    _g(
        "368",
        400,
        "retry",
        "(#368) The action attempted has been deemed abusive or is otherwise disallowed "
        "(temporarily blocked)",
        transient=True,
    ),
    _g("190", 400, "reauth", "Invalid OAuth access token - Cannot parse access token"),
    _g("190/458", 400, "reauth", "Error validating access token: The user has not authorized application."),
    _g("190/459", 400, "reauth", "Error validating access token: The user is checkpointed."),
    _g(
        "190/460",
        400,
        "reauth",
        "Error validating access token: The session has been invalidated because the "
        "user changed their password.",
    ),
    _g("190/463", 400, "reauth", "Error validating access token: Session has expired."),
    _g("190/464", 400, "reauth", "Error validating access token: The user is not a confirmed user."),
    _g("190/467", 400, "reauth", "Error validating access token: The access token is invalid."),
    _g("102", 400, "reauth", "Session key invalid or no longer valid"),
    _g("10", 403, "permanent", "(#10) Application does not have permission for this action"),
    _g("200", 403, "permanent", "(#200) The permission(s) pages_manage_posts are not available."),
    _g("100", 400, "permanent", "(#100) Invalid parameter"),
    _g("506", 400, "permanent", "(#506) Duplicate status message"),
    _g("1609005", 400, "permanent", "Error posting link: the link could not be fetched."),
]

LINKEDIN = [  # section 4: the statuses and serviceErrorCodes (the expired/revoked 401s from docs/sandbox.md)
    _li("INVALID_ACCESS_TOKEN", 401, "reauth", "Invalid access token"),
    _li("EXPIRED_ACCESS_TOKEN", 401, "reauth", "The token used in the request has expired", extra=True),
    _li(
        "REVOKED_ACCESS_TOKEN",
        401,
        "reauth",
        "The token used in the request has been revoked by the user",
        extra=True,
    ),
    _li(
        "VERSION_MISSING",
        400,
        "permanent",
        "A version must be present. Please specify a version by adding the LinkedIn-Version header.",
    ),
    _li("NONEXISTENT_VERSION", 426, "permanent", "Requested version 20990101 is not active"),
    _li(
        "ACCESS_DENIED", 403, "permanent", "Not enough permissions to access: partnerApiPostsExternal.CREATE"
    ),
    _li(
        "TOO_MANY_REQUESTS",
        429,
        "wait",
        "Resource level throttle APPLICATION DAY limit for calls to this resource is reached.",
    ),
    _li("INTERNAL_SERVER_ERROR", 500, "retry", "Internal Server Error", extra=True),
]

YOUTUBE = [  # section 5: the error reasons
    _yt(
        "quotaExceeded", 403, "wait", "The request cannot be completed because you have exceeded your quota."
    ),
    _yt("uploadLimitExceeded", 400, "wait", "The user has exceeded the number of videos they may upload."),
    _yt("forbidden", 403, "permanent", "The request is not properly authorized to upload this video."),
    _yt("authError", 401, "reauth", "Request had invalid authentication credentials.", extra=True),
    _yt("backendError", 503, "retry", "Backend Error", extra=True),
]

CATALOGUE: dict[str, dict[str, Fault]] = {
    "tiktok": {f.code: f for f in TIKTOK},
    "instagram": {f.code: f for f in INSTAGRAM},
    "facebook": {f.code: f for f in FACEBOOK},
    "linkedin": {f.code: f for f in LINKEDIN},
    "youtube": {f.code: f for f in YOUTUBE},
}

_GRAPH = r"(?:/v\d+\.\d+)?"
# endpoint names a switch's `path` may give: (methods, regular expression on the request path); "publish" (the
# default) is the network's first write of a publication
ENDPOINTS: dict[str, dict[str, tuple[tuple[str, ...], str]]] = {
    "tiktok": {
        "publish": (("POST",), r"^/v2/post/publish/(?:video|inbox/video|content)/init/?$"),
        "creator_info": (("POST",), r"^/v2/post/publish/creator_info/query/?$"),
        "status": (("POST",), r"^/v2/post/publish/status/fetch/?$"),
        "upload": (("PUT",), r"^/upload/video/?$"),
        "list": (("POST",), r"^/v2/video/list/?$"),
    },
    "instagram": {
        "publish": (("POST",), _GRAPH + r"/\d+/media/?$"),
        "media_publish": (("POST",), _GRAPH + r"/\d+/media_publish/?$"),
        "status": (("GET",), _GRAPH + r"/\d+/?$"),
        "list": (("GET",), _GRAPH + r"/\d+/media/?$"),
    },
    "facebook": {
        "publish": (("POST",), _GRAPH + r"/\d+/(?:feed|photos|videos)/?$"),
        "list": (("GET",), _GRAPH + r"/\d+/(?:published_posts|feed|posts)/?$"),
    },
    "linkedin": {
        "publish": (("POST",), r"^/rest/posts/?$"),
        "assets": (("POST",), r"^/rest/(?:images|documents|videos)/?$"),
        "upload": (("PUT",), r"^/dms-uploads/"),
        "list": (("GET",), r"^/rest/posts/?$"),
    },
    "youtube": {
        "publish": (("POST",), r"^/upload/youtube/v3/videos/?$"),
        "upload": (("PUT",), r"^/upload/youtube/v3/videos/?$"),
        "list": (("GET",), r"^/youtube/v3/(?:videos|search|playlistItems)/?$"),
    },
}
DEFAULT_ENDPOINT = "publish"
MAX_TIMES = 1000


def _key(platform: str) -> str:
    return f"errors:{platform}"


def _check_platform(platform: str) -> None:
    if platform not in CATALOGUE:
        raise ValueError(f"unknown network {platform!r}: one of {', '.join(CATALOGUE)}")


def errors_settings(platform: str) -> dict[str, Any]:
    """What is armed (in order), the endpoint names and the network's codes."""
    _check_platform(platform)
    row = SandboxSetting.get_or_none(SandboxSetting.key == _key(platform))
    armed = list((row.value or {}).get("armed") or []) if row else []
    return {
        "armed": armed,
        "endpoints": sorted(ENDPOINTS[platform]),
        "codes": {code: f.public() for code, f in CATALOGUE[platform].items()},
    }


def configure_errors(
    platform: str, code: str | None = None, *, times: int = 1, path: str | None = None, reset: bool = False
) -> dict[str, Any]:
    """Arm `code` (NETWORKS.md's name) for the next `times` calls matching `path` (an endpoint name of ENDPOINTS,
    default "publish", or a regular expression searched in the request path). reset=True first disarms
    everything (alone: just that). Raises ValueError for an unknown code (naming the known ones), a bad `times` or
    `path`. Returns errors_settings(platform)."""
    _check_platform(platform)
    if code is not None:
        if code not in CATALOGUE[platform]:
            raise ValueError(
                f"unknown {platform} error code {code!r}: one of {', '.join(CATALOGUE[platform])}"
            )
        if isinstance(times, bool) or not isinstance(times, int) or not 1 <= times <= MAX_TIMES:
            raise ValueError(f"times: an integer from 1 to {MAX_TIMES}")
        if path is not None:
            if not isinstance(path, str) or not path:
                raise ValueError("path: an endpoint name or a regular expression")
            if path not in ENDPOINTS[platform]:
                try:
                    re.compile(path)
                except re.error as exc:
                    raise ValueError(
                        f"path: not an endpoint name ({', '.join(sorted(ENDPOINTS[platform]))}) "
                        f"nor a valid regular expression ({exc})"
                    ) from None
    elif not reset:
        raise ValueError("give a code to arm (or reset)")
    key = _key(platform)
    with write():
        row = SandboxSetting.get_or_none(SandboxSetting.key == key)
        armed = [] if reset or row is None else list((row.value or {}).get("armed") or [])
        if code is not None:
            armed.append({"code": code, "times": times, "path": path or DEFAULT_ENDPOINT})
        if row is None:
            SandboxSetting.create(key=key, value={"armed": armed})
        else:
            SandboxSetting.update(value={"armed": armed}).where(SandboxSetting.key == key).execute()
    return errors_settings(platform)


def _matches(platform: str, spec: str, method: str, path: str) -> bool:
    named = ENDPOINTS[platform].get(spec)
    if named is not None:
        methods, pattern = named
        return method in methods and re.search(pattern, path) is not None
    try:
        return re.search(spec, path) is not None
    except re.error:
        return False


def _anything_armed(key: str) -> bool:
    """Whether the switches of `key` hold anything armed: asked on every emulator call, so only the value column
    is read, as a tuple (no model built)."""
    row = SandboxSetting.select(SandboxSetting.value).where(SandboxSetting.key == key).tuples().first()
    if row is None or row[0] is None:
        return False
    value = json.loads(row[0]) if isinstance(row[0], str | bytes) else row[0]
    return isinstance(value, dict) and bool(value.get("armed"))


def injected(platform: str, method: str, path: str) -> httpx.Response | None:
    """The armed error this call consumes (its response), or None: the emulator serves the call. One read of the
    switches when nothing is armed."""
    if platform not in CATALOGUE or path.startswith("/_sandbox/"):
        return None
    key = _key(platform)
    if not _anything_armed(key):
        return None
    with write():  # consume under the write lock: two calls never take the same last use
        row = SandboxSetting.get_or_none(SandboxSetting.key == key)
        armed = list((row.value or {}).get("armed") or []) if row else []
        for i, entry in enumerate(armed):
            if _matches(platform, str(entry.get("path") or DEFAULT_ENDPOINT), method, path):
                left = int(entry.get("times") or 1) - 1
                if left > 0:
                    armed[i] = {**entry, "times": left}
                else:
                    del armed[i]
                SandboxSetting.update(value={"armed": armed}).where(SandboxSetting.key == key).execute()
                fault = CATALOGUE[platform].get(str(entry.get("code")))
                return fault.response() if fault is not None else None
    return None


def control(platform: str, method: str, body: Any) -> httpx.Response:
    """`/_sandbox/errors` on a served emulator (not a real network path): GET lists what is armed and the codes;
    POST {"code", "times"?, "path"?} arms one, {"reset": true} disarms everything (both: reset, then arm)."""
    if method == "GET":
        return json_response(200, errors_settings(platform))
    body = body if isinstance(body, dict) else {}
    unknown = set(body) - {"code", "times", "path", "reset"}
    try:
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(sorted(unknown))}: code, times, path, reset")
        return json_response(
            200,
            configure_errors(
                platform,
                body.get("code"),
                times=body.get("times", 1),
                path=body.get("path"),
                reset=bool(body.get("reset", False)),
            ),
        )
    except ValueError as exc:
        return json_response(
            400,
            {"error": "invalid_request", "error_description": str(exc), "codes": sorted(CATALOGUE[platform])},
        )
