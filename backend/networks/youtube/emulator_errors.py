"""YouTube's error switches (backend/networks/sandbox/errors.py): NETWORKS.md section 5's reasons, in Google's
`{error: {code, message, errors: [{domain, reason}]}}` body."""

from __future__ import annotations

from typing import Any

import httpx

from backend.networks.sandbox.core import json_response
from backend.networks.sandbox.faults import Fault


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


def _yt(code: str, status: int, action: str, message: str, **kw: Any) -> Fault:
    return Fault(code, status, action, message, _youtube_body, **kw)


# section 5: the error reasons
FAULT_LIST = [
    _yt(
        "quotaExceeded", 403, "wait", "The request cannot be completed because you have exceeded your quota."
    ),
    _yt("uploadLimitExceeded", 400, "wait", "The user has exceeded the number of videos they may upload."),
    _yt("forbidden", 403, "permanent", "The request is not properly authorized to upload this video."),
    _yt("authError", 401, "reauth", "Request had invalid authentication credentials.", extra=True),
    _yt("backendError", 503, "retry", "Backend Error", extra=True),
]

FAULTS = {f.code: f for f in FAULT_LIST}

# endpoint names a switch's `path` may give: (methods, regular expression on the request path); "publish" (the
# default) is the network's first write of a publication
ERROR_ENDPOINTS: dict[str, tuple[tuple[str, ...], str]] = {
    "publish": (("POST",), r"^/upload/youtube/v3/videos/?$"),
    "upload": (("PUT",), r"^/upload/youtube/v3/videos/?$"),
    "list": (("GET",), r"^/youtube/v3/(?:videos|search|playlistItems)/?$"),
}
