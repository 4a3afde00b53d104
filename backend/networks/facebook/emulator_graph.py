"""Shared Graph API emulation (Facebook's, which Instagram's builds on): version prefix, access_token auth, error
bodies, usage headers, the OAuth side (Facebook Login: emulator_oauth.py)."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

import httpx

from backend.networks.facebook.emulator_oauth import GraphOAuth, graph_error
from backend.networks.sandbox.core import (
    Emulator,
    Gate,
    Request,
    SandboxItem,
    b62,
    digits,
    gate,
    page_after,
)
from backend.networks.sandbox.oauth import authenticate, install
from backend.networks.sandbox.store import SandboxAccount

VERSION = re.compile(r"^/v\d+\.\d+")


def fb_time(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S+0000")


def usage_header(object_id: str, kind: str, minutes: int) -> dict[str, str]:
    value = {
        object_id: [
            {
                "type": kind,
                "call_count": 100,
                "total_cputime": 100,
                "total_time": 100,
                "estimated_time_to_regain_access": minutes,
            }
        ]
    }
    return {"X-Business-Use-Case-Usage": json.dumps(value)}


class GraphEmulator(Emulator):
    network = ""
    OAUTH = GraphOAuth
    SERVE_BASE_PATH = "/v21.0"

    @classmethod
    def new_identity(cls, name: str) -> tuple[str, str]:
        return digits(15, "1"), "EAAG" + b62(120)

    def path_of(self, request: Request) -> str:
        path = request.url.path
        m = VERSION.match(path)  # VERSION.sub("", path): the pattern is anchored, at most one match
        return path[m.end() :] if m else path

    def __init__(self, config):  # type: ignore[no-untyped-def]
        super().__init__(config)
        self.oauth = install(self)

    def auth(self, request: Request, owner_id: str | None = None) -> SandboxAccount | httpx.Response:
        found = authenticate(request.token(), self.platform, owner_id)
        acc = found.account
        if acc is None or found.problem:
            assert isinstance(self.oauth, GraphOAuth)
            return self.oauth.api_error(found.problem)
        if found.kind == "user" and self.platform == "facebook":  # acting as a Page takes the Page's token
            return graph_error(
                403,
                200,
                "(#200) The permission(s) pages_manage_posts are not available: a Page "
                "access token is required (GET /me/accounts)",
            )
        if owner_id is not None and owner_id != acc.external_id:
            return graph_error(
                403,
                200,
                "(#200) The user hasn't authorized the application to perform this action"
                if self.platform == "facebook"
                else "(#10) Application does not have permission for this action",
            )
        return acc

    def behaviour_error(self, acc: SandboxAccount) -> httpx.Response | None:
        """fail-retriable / rate-limited / flaky on a publishing call, in the Graph API's own words."""
        g = gate(acc)
        if g == Gate.RETRIABLE:
            if self.platform == "instagram":
                return graph_error(
                    500,
                    -1,
                    "An unexpected error has occurred. Please retry your request later.",
                    subcode=2207001,
                    transient=True,
                    user_title="Server error",
                    user_msg="Please try again later.",
                )
            return graph_error(503, 2, "Service temporarily unavailable", transient=True)
        if g == Gate.RATE:
            if self.platform == "instagram":
                return graph_error(
                    400,
                    4,
                    "Application request limit reached",
                    transient=True,
                    headers=usage_header(acc.external_id, "instagram", 5),
                )
            return graph_error(
                400,
                32,
                "Page request limit reached",
                transient=True,
                headers=usage_header(acc.external_id, "pages", 5),
            )
        return None

    def graph_page(self, request: Request, query: Any, path: str) -> tuple[list[SandboxItem], dict[str, Any]]:
        """One page of a Graph API edge, newest first: `limit` (default 25, at most 100) and `after` (the
        cursor of the previous page's `paging.cursors.after`); `paging.next` only when there are more."""
        try:
            limit = max(1, min(100, int(request.params.get("limit") or 25)))
        except ValueError:
            limit = 25
        rows, after = page_after(query, request.params.get("after") or None, limit)
        paging: dict[str, Any] = {}
        if rows:
            paging["cursors"] = {"before": str(request.params.get("after") or ""), "after": after or ""}
        if after:
            fields = request.params.get("fields")
            query_s = f"limit={limit}&after={after}" + (f"&fields={fields}" if fields else "")
            paging["next"] = f"https://graph.facebook.sandbox.invalid/v21.0{path}?{query_s}"
        return rows, paging
