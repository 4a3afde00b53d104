"""Meta Graph API (Facebook Pages, Instagram): the error envelope, classification by code/subcode, usage
headers (estimated_time_to_regain_access) and the calling convention (access_token parameter)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx

from backend import clock
from backend.networks.base import (
    MAX_LISTING_PAGES,
    PAGES_WITHOUT_WINDOW,
    FailType,
    NetworkError,
    Publication,
    PublishOutcome,
    check_failed,
)
from backend.networks.http import json_or_none, send
from backend.outbound.retry_after import retry_after_s

THROTTLE_CODES = {4, 17, 32, 613, 80001, 80002, 80004}
RETRIABLE_CODES = {1, 2, 341} | THROTTLE_CODES
# 368 "Temporarily blocked for policies violations — wait and retry the operation" (Graph's error-handling guide,
# https://developers.facebook.com/docs/graph-api/guides/error-handling, read 2026-11-28): no duration is given
# (Meta's own words: "You can try again later"), so an hour is a belief; each retry waits it again, and the
# engine's retry cap ends the target with the reason
POLICY_BLOCK = 368
POLICY_BLOCK_WAIT_S = 3600.0
TOKEN_CODES = {190, 102}
DEFAULT_THROTTLE_WAIT_S = 300.0

# Instagram subcodes (NETWORKS.md section 2): subcode -> (type, words)
IG_SUBCODES: dict[int, tuple[FailType, str]] = {
    2207003: ("retriable", "Instagram timed out downloading the media; it will be retried"),
    2207020: ("retriable", "the media container expired at Instagram; a new one will be created"),
    2207001: ("retriable", "Instagram had a server error; it will be retried"),
    2207032: ("retriable", "Instagram failed to create the media container; it will be retried"),
    2207053: ("retriable", "the upload to Instagram failed; it will be retried"),
    2207051: ("permanent", "Instagram restricted this action as spam: do not retry blindly, review the post"),
    2207042: (
        "retriable",
        "the account reached Instagram's publishing limit (content_publishing_limit, "
        "rolling 24 h); retry later",
    ),
    2207006: ("retriable", "Instagram could not find the media yet; it will be retried after 30 s"),
    2207008: ("retriable", "the Instagram media builder expired; it will be retried after 30 s"),
    2207050: ("permanent", "the Instagram account is restricted: the owner must fix it in the Instagram app"),
    2207023: ("permanent", "Instagram does not know this media type: use JPEG images or MP4/MOV video"),
    2207028: ("permanent", "an Instagram carousel needs 2 to 10 items"),
    2207052: ("permanent", "Instagram could not fetch the media URL: check that it is public and opens"),
    2207027: ("retriable", "the Instagram container is not ready yet; it will be polled again"),
    2207004: ("permanent", "the media is too large for Instagram (images 8 MB, reels 300 MB)"),
    2207009: ("permanent", "Instagram refused the aspect ratio (images 4:5 to 1.91:1)"),
    2207026: ("permanent", "Instagram refused the video format: use H.264 MP4/MOV, 3 s to 15 min"),
    2207010: (
        "permanent",
        "the caption is too long for Instagram (2200 characters, 30 hashtags, 20 mentions)",
    ),
}


def usage_wait_s(resp: httpx.Response) -> float | None:
    """estimated_time_to_regain_access (minutes) from X-Business-Use-Case-Usage / X-Page-Usage / X-App-Usage."""
    best: float | None = None
    for header in ("x-business-use-case-usage", "x-page-usage", "x-app-usage"):
        raw = resp.headers.get(header)
        if not raw:
            continue
        for m in re.finditer(r'"estimated_time_to_regain_access"\s*:\s*(\d+)', raw):
            minutes = float(m.group(1))
            if minutes > 0:
                best = max(best or 0.0, minutes * 60.0)
    return best


def classify(network: str, resp: httpx.Response) -> NetworkError:
    body = json_or_none(resp)
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict):
        ftype: FailType = "retriable" if resp.status_code >= 500 or resp.status_code == 429 else "permanent"
        return NetworkError(
            ftype,
            f"{network} answered HTTP {resp.status_code} without an error body"
            + ("; it will be retried" if ftype == "retriable" else ""),
            code=f"http_{resp.status_code}",
            http_status=resp.status_code,
            retry_after_s=retry_after_s(resp),
        )
    return classify_error(network, err, resp)


def classify_error(network: str, err: dict[str, Any], resp: httpx.Response | None = None) -> NetworkError:
    code = int(err.get("code") or 0)
    sub = err.get("error_subcode")
    sub = int(sub) if isinstance(sub, int | str) and str(sub).lstrip("-").isdigit() else None
    message = str(err.get("error_user_msg") or err.get("message") or "").strip()
    code_str = f"{code}/{sub}" if sub else str(code)
    wait = (usage_wait_s(resp) or retry_after_s(resp)) if resp is not None else None
    status = resp.status_code if resp is not None else None
    if sub in IG_SUBCODES:
        ftype, words = IG_SUBCODES[sub]
        if sub == 2207042 and wait is None:
            wait = 3600.0
        if sub in (2207006, 2207008) and wait is None:  # NETWORKS.md: retry in 30 s to 2 min
            wait = 30.0
        return NetworkError(ftype, words, code=code_str, retry_after_s=wait, http_status=status)
    if code in TOKEN_CODES:
        return NetworkError(
            "permanent",
            f"the {network} access token is expired or revoked ({message or code_str}): "
            "reconnect the account",
            code=code_str,
            http_status=status,
            auth_refused=True,
        )
    if code == 10 or 200 <= code <= 299:
        return NetworkError(
            "permanent",
            f"{network} refused for lack of permission ({message or code_str}): "
            "reconnect the account and grant the publishing permissions",
            code=code_str,
            http_status=status,
        )
    if code == 506:
        return NetworkError(
            "permanent",
            f"{network} refused a duplicate post: change the text",
            code=code_str,
            http_status=status,
        )
    if code == 1609005:
        return NetworkError(
            "permanent", f"{network} could not fetch the link in the post", code=code_str, http_status=status
        )
    if code in THROTTLE_CODES:
        return NetworkError(
            "retriable",
            f"{network} is throttling requests ({message or code_str}); it will be retried later",
            code=code_str,
            http_status=status,
            retry_after_s=wait if wait is not None else DEFAULT_THROTTLE_WAIT_S,
            wait=True,
        )
    if code == 9:
        return NetworkError(
            "retriable",
            f"{network} limit reached ({message or code_str}); retry later",
            code=code_str,
            http_status=status,
            retry_after_s=wait or 3600.0,
            wait=True,
        )
    if code == POLICY_BLOCK:
        return NetworkError(
            "retriable",
            f"{network} temporarily blocked this account from posting (code {code_str}: "
            f"{message or 'temporarily blocked for policies violations'}); it will be tried again in an hour "
            "— check the Page's quality and restrictions in Meta Business Suite",
            code=code_str,
            http_status=status,
            retry_after_s=max(wait or 0.0, POLICY_BLOCK_WAIT_S),
        )
    if code in RETRIABLE_CODES or err.get("is_transient") is True:
        return NetworkError(
            "retriable",
            f"{network} is temporarily unavailable ({message or code_str}); it will be retried",
            code=code_str,
            http_status=status,
            retry_after_s=wait,
        )
    if code == 100:
        return NetworkError(
            "permanent",
            f"{network} refused a parameter: {message or code_str}",
            code=code_str,
            http_status=status,
        )
    ftype = "retriable" if status is not None and status >= 500 else "permanent"
    return NetworkError(
        ftype,
        f"{network} refused the request: {message or code_str}",
        code=code_str,
        http_status=status,
        retry_after_s=wait,
    )


def versioned(base: str, version: str) -> str:
    """A Graph API base with its version (`https://graph.facebook.com` + `v26.0`): every Graph URL is built so,
    from the host and the one version setting (SOCIALPUB_GRAPH_API_VERSION)."""
    return f"{base.rstrip('/')}/{version}"


class GraphClient:
    """Calls in Graph style: the token in the access_token parameter (form body for POST, query for GET)."""

    def __init__(self, client: httpx.Client, network: str) -> None:
        self.client = client
        self.network = network

    def post(
        self,
        url: str,
        token: str,
        params: dict[str, Any],
        files: dict[str, tuple[str, bytes, str]] | None = None,
    ) -> dict[str, Any]:
        """A form POST; with `files` (name -> (filename, bytes, content type)) a multipart one."""
        data = {
            k: (
                json.dumps(v)
                if isinstance(v, dict | list)
                else str(v).lower()
                if isinstance(v, bool)
                else str(v)
            )
            for k, v in params.items()
            if v is not None
        }
        data["access_token"] = token
        extra: dict[str, Any] = {"files": files} if files else {}
        resp = send(self.client, "POST", url, network=self.network, write=True, data=data, **extra)
        return self._result(resp)

    def upload(self, url: str, token: str, data: bytes) -> dict[str, Any]:
        """The whole file to a resumable-upload URL (rupload): `Authorization: OAuth <token>`, `offset: 0`,
        `file_size: <bytes>`, the bytes as the body (IG User Media reference, "Resumable upload")."""
        headers = {"Authorization": f"OAuth {token}", "offset": "0", "file_size": str(len(data))}
        resp = send(self.client, "POST", url, network=self.network, write=True, content=data, headers=headers)
        return self._result(resp)

    def get(self, url: str, token: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        query = {k: str(v) for k, v in (params or {}).items() if v is not None}
        query["access_token"] = token
        resp = send(self.client, "GET", url, network=self.network, params=query)
        return self._result(resp)

    def _result(self, resp: httpx.Response) -> dict[str, Any]:
        if resp.status_code >= 400:
            raise classify(self.network, resp)
        body = json_or_none(resp)
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            raise classify(self.network, resp)
        if not isinstance(body, dict):
            raise NetworkError(
                "retriable",
                f"{self.network} answered with an unreadable body; it will be retried",
                code="bad_body",
                http_status=resp.status_code,
            )
        return body


def find_in_listing(
    graph: GraphClient,
    url: str,
    pub: Publication,
    *,
    network: str,
    fields: str,
    text: str,
    created: str,
    link: str,
    found: Callable[[dict[str, Any]], PublishOutcome] | None = None,
) -> PublishOutcome | None:
    """find_existing over a Graph API listing (newest first, `paging.cursors.after`): pages back to the
    attempt's start (`pub.not_before()`), matching the item's `text` field with what the publication sent; an
    item another target of the account holds (`pub.held_elsewhere`) is never this one's: skipped, paging on.
    found: the outcome of a matching item (default: published, its id and `link`).
    None: confirmed absent in the window; a listing that cannot be read is a failed, ambiguous outcome."""
    since = pub.not_before()
    expected = pub.payload.text.strip()
    params: dict[str, object] = {"fields": fields, "limit": 100}
    try:
        for _ in range(MAX_LISTING_PAGES if since is not None else PAGES_WITHOUT_WINDOW):
            body = graph.get(url, pub.account.access_token, params)
            items = body.get("data") or []
            for item in items:
                if since is not None and graph_time(item.get(created)) < since.timestamp():
                    return None  # older than the window: everything after is too
                stamp = graph_time(item.get(created))
                if str(item.get("id")) in pub.held_elsewhere or (
                    stamp and pub.made_later(datetime.fromtimestamp(stamp, UTC))
                ):
                    continue  # another target's publication, whatever its text
                if (item.get(text) or "").strip() == expected:
                    at = datetime.fromtimestamp(stamp, UTC) if stamp else clock.now()
                    if found is not None:
                        return dataclasses.replace(found(item), listed_at=at)
                    return PublishOutcome.published(str(item["id"]), item.get(link), listed_at=at)
            paging = body.get("paging") or {}
            after = (paging.get("cursors") or {}).get("after")
            if not items or not after or not paging.get("next"):
                return None
            params = {**params, "after": after}
    except NetworkError as e:
        return check_failed(network, e)
    return None


def graph_time(value: object) -> float:
    """A Graph API time (`2026-11-24T09:00:00+0000`) as a POSIX timestamp; 0 when unreadable."""
    try:
        return datetime.strptime(str(value), "%Y-%m-%dT%H:%M:%S%z").timestamp()
    except ValueError:
        return 0.0
