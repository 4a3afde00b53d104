"""LinkedIn's error switches (backend/networks/sandbox/errors.py): NETWORKS.md section 4's statuses and
serviceErrorCodes, in LinkedIn's `{message, status, serviceErrorCode, code}` body."""

from __future__ import annotations

from typing import Any

import httpx

from backend.networks.sandbox.core import json_response
from backend.networks.sandbox.faults import Fault

_LI_SERVICE = {
    "INVALID_ACCESS_TOKEN": 65600,
    "EXPIRED_ACCESS_TOKEN": 65601,
    "REVOKED_ACCESS_TOKEN": 65601,  # seen live by third parties (docs.md's fidelity table)
    "ACCESS_DENIED": 100,
    "TOO_MANY_REQUESTS": 101,
}


def _linkedin_body(f: Fault) -> httpx.Response:
    body: dict[str, Any] = {"message": f.message, "status": f.status}
    if f.code in _LI_SERVICE:
        body["serviceErrorCode"] = _LI_SERVICE[f.code]
    body["code"] = f.code
    return json_response(f.status, body)


def _li(code: str, status: int, action: str, message: str, **kw: Any) -> Fault:
    return Fault(code, status, action, message, _linkedin_body, **kw)


# section 4: the statuses and serviceErrorCodes (the expired/revoked 401s from docs/sandbox.md)
FAULT_LIST = [
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

FAULTS = {f.code: f for f in FAULT_LIST}

# endpoint names a switch's `path` may give: (methods, regular expression on the request path); "publish" (the
# default) is the network's first write of a publication
ERROR_ENDPOINTS: dict[str, tuple[tuple[str, ...], str]] = {
    "publish": (("POST",), r"^/rest/posts/?$"),
    "assets": (("POST",), r"^/rest/(?:images|documents|videos)/?$"),
    "upload": (("PUT",), r"^/dms-uploads/"),
    "list": (("GET",), r"^/rest/posts/?$"),
}
