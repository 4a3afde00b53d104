"""Facebook's error switches (backend/networks/sandbox/errors.py): NETWORKS.md section 3's codes, in the Graph API's
`OAuthException` body (`error_subcode`, `is_transient`, `fbtrace_id`); Instagram's use the same body."""

from __future__ import annotations

from typing import Any

import httpx

from backend.networks.sandbox.core import b64url, json_response
from backend.networks.sandbox.faults import Fault


def graph_body(f: Fault) -> httpx.Response:
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


def graph_fault(code: str, status: int, action: str, message: str, **kw: Any) -> Fault:
    return Fault(code, status, action, message, graph_body, **kw)


# section 3: the retriable and permanent codes (32 and 613 from the rate-limiting tables)
FAULT_LIST = [
    graph_fault("1", 500, "retry", "An unknown error occurred", transient=True),
    graph_fault("2", 503, "retry", "Service temporarily unavailable", transient=True),
    graph_fault("4", 400, "wait", "(#4) Application request limit reached", transient=True),
    graph_fault("17", 400, "wait", "(#17) User request limit reached", transient=True),
    graph_fault("32", 400, "wait", "(#32) Page request limit reached", transient=True),
    graph_fault("613", 400, "wait", "(#613) Calls to this api have exceeded the rate limit.", transient=True),
    graph_fault("341", 400, "retry", "(#341) Application limit reached: temporary", transient=True),
    # Meta's words, as a real answer shows them (gitroomhq/postiz-app#2068); arm it `times` > 1 for a block that lasts
    graph_fault(
        "368/1390008",
        400,
        "wait",
        "We limit how often you can post, comment or do other things in a given amount of time in order to "
        "help protect the community from spam. You can try again later.",
    ),
    graph_fault("190", 400, "reauth", "Invalid OAuth access token - Cannot parse access token"),
    graph_fault(
        "190/458", 400, "reauth", "Error validating access token: The user has not authorized application."
    ),
    graph_fault("190/459", 400, "reauth", "Error validating access token: The user is checkpointed."),
    graph_fault(
        "190/460",
        400,
        "reauth",
        "Error validating access token: The session has been invalidated because the "
        "user changed their password.",
    ),
    graph_fault("190/463", 400, "reauth", "Error validating access token: Session has expired."),
    graph_fault("190/464", 400, "reauth", "Error validating access token: The user is not a confirmed user."),
    graph_fault("190/467", 400, "reauth", "Error validating access token: The access token is invalid."),
    graph_fault("102", 400, "reauth", "Session key invalid or no longer valid"),
    graph_fault("10", 403, "permanent", "(#10) Application does not have permission for this action"),
    graph_fault("200", 403, "permanent", "(#200) The permission(s) pages_manage_posts are not available."),
    graph_fault("100", 400, "permanent", "(#100) Invalid parameter"),
    graph_fault("506", 400, "permanent", "(#506) Duplicate status message"),
    graph_fault("1609005", 400, "permanent", "Error posting link: the link could not be fetched."),
]

FAULTS = {f.code: f for f in FAULT_LIST}

GRAPH = r"(?:/v\d+\.\d+)?"
# endpoint names a switch's `path` may give: (methods, regular expression on the request path); "publish" (the
# default) is the network's first write of a publication
ERROR_ENDPOINTS: dict[str, tuple[tuple[str, ...], str]] = {
    "publish": (("POST",), GRAPH + r"/\d+/(?:feed|photos|videos)/?$"),
    "list": (("GET",), GRAPH + r"/\d+/(?:published_posts|feed|posts)/?$"),
}
