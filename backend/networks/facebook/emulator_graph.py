"""Shared Graph API emulation (Facebook's, which Instagram's builds on): version prefix, access_token auth, error
bodies, usage headers, the OAuth side (Facebook Login: emulator_oauth.py)."""

from __future__ import annotations

import ipaddress
import json
import re
from datetime import date, datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from backend.networks.facebook.emulator_oauth import GraphOAuth, graph_error
from backend.networks.facebook.lifecycle import DEFAULT, LIFECYCLE
from backend.networks.sandbox.core import (
    Emulator,
    Gate,
    Request,
    SandboxConfig,
    SandboxItem,
    b62,
    digits,
    gate,
    page_after,
)
from backend.networks.sandbox.oauth import authenticate, install
from backend.networks.sandbox.store import SandboxAccount

VERSION = re.compile(r"^/(v\d+\.\d+)")


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


def unreachable(url: str) -> str | None:
    """Why Meta's fetcher, on the public internet, cannot fetch `url` (Instagram "cURLs media … so the media must be
    hosted on a publicly accessible server"; Threads "will download media used in publishing attempts, so the media
    must be hosted on a publicly accessible server"), or None. Classified, never fetched: `localhost` names and literal
    addresses that are not global (loopback, private, link-local…); a name is not looked up (it may be public)."""
    try:
        host = (urlsplit(url).hostname or "").rstrip(".").lower()
    except ValueError:
        return "the URL cannot be parsed"
    if host == "localhost" or host.endswith(".localhost"):
        return f"{host} is the caller's own machine"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None
    return None if ip.is_global else f"{host} is not a public address"


class GraphEmulator(Emulator):
    network = ""
    OAUTH = GraphOAuth
    SERVE_BASE_PATH = (
        ""  # SOCIALPUB_<NETWORK>_BASE_URL is the origin; the version is SOCIALPUB_GRAPH_API_VERSION
    )

    @classmethod
    def new_identity(cls, name: str) -> tuple[str, str]:
        return digits(15, "1"), "EAAG" + b62(120)

    def unfetchable(self, url: str) -> str | None:
        """unreachable(url), unless this emulator runs inside socialpub for its sandbox accounts and reads their media
        from this machine (the option `reaches_this_machine`); `socialpub sandbox serve` is as strict as Meta."""
        return None if self.option("reaches_this_machine", False) else unreachable(url)

    def path_of(self, request: Request) -> str:
        path = request.url.path
        m = VERSION.match(path)  # VERSION.sub("", path): the pattern is anchored, at most one match
        return path[m.end() :] if m else path

    @staticmethod
    def version_of(path: str) -> str | None:
        m = VERSION.match(path)
        return m.group(1) if m else None

    def today(self) -> date:
        return self.config.app(self.platform).today or self.now().date()

    def version_refusal(self, version: str) -> httpx.Response | None:
        """A Graph API version the emulated day does not serve, refused in Graph's envelope. The real Graph API
        serves an expired version's calls with the next oldest usable one (the changelog's versioning guide):
        the emulator is stricter on purpose (a belief: no page gives the refusal's words), so that a version
        past its end shows in tests instead of falling forward silently."""
        day = self.today()
        st = LIFECYCLE.state(version, day)
        if st.status in ("active", "ending"):
            return None
        if st.status == "sunset":
            message = (
                f"(#100) Graph API version {version} is no longer available: it ended on {st.sunset}. "
                f"Use an active version such as {DEFAULT}."
            )
        else:
            message = (
                f"(#100) Unsupported version {version}: use an active Graph API version such as {DEFAULT}"
            )
        return graph_error(400, 100, message)

    def __call__(self, raw: httpx.Request) -> httpx.Response:
        version = self.version_of(raw.url.path)
        if version is not None:
            refused = self.version_refusal(version)
            if refused is not None:
                return refused
        resp = super().__call__(raw)
        # the version that served the call (the Graph API's `facebook-api-version` header)
        resp.headers["facebook-api-version"] = version or DEFAULT
        return resp

    def __init__(self, config: SandboxConfig) -> None:
        super().__init__(config)
        self.oauth = install(self)

    def auth(
        self, request: Request, owner_id: str | None = None, needs: str | None = None
    ) -> SandboxAccount | httpx.Response:
        """The account the call's token acts for. needs: the permission the call requires — a token from a grant
        without it is refused, (#200) on a Page edge, (#10) on Instagram's (a sandbox account's own token holds
        every permission)."""
        found = authenticate(request.token(), self.platform, owner_id)
        acc = found.account
        if acc is None or found.problem:
            assert isinstance(self.oauth, GraphOAuth)
            return self.oauth.api_error(found.problem)
        if needs and found.grant is not None and needs not in (found.grant.scopes or []):
            if self.platform == "facebook":
                return graph_error(
                    403, 200, f"(#200) The permission(s) {needs} are not available or have not been granted"
                )
            return graph_error(
                403, 10, f"(#10) Application does not have permission for this action ({needs})"
            )
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
                return graph_error(  # HTTP 400 like every row of Instagram's error table
                    400,
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
            version = self.version_of(request.url.path) or DEFAULT
            paging["next"] = f"https://graph.facebook.sandbox.invalid/{version}{path}?{query_s}"
        return rows, paging
