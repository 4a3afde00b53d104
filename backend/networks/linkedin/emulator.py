"""LinkedIn versioned REST emulator (NETWORKS.md section 4; its rules' sources: the fidelity table of docs.md):
`LinkedIn-Version` enforced against the versions active on the emulated app's day (426 NONEXISTENT_VERSION),
images/documents/videos initializeUpload -> plain PUT -> PROCESSING -> AVAILABLE with time, /posts answering
201 with x-restli-id, the author finder, flat error bodies, a daily member post limit (429). Each call needs the
scope LinkedIn asks for it, which the emulated app's products grant (a new app: the member's posting only; the
finder needs r_member_social or r_organization_social, which a new app never holds)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import httpx

from backend.networks.linkedin import emulator_errors
from backend.networks.linkedin.emulator_oauth import (
    LinkedInOAuth,
    api_error_linkedin,
    app_products,
    denied_access,
    li_error,
    token_scopes,
    version_refusal,
)
from backend.networks.sandbox.core import (
    Emulator,
    Gate,
    Request,
    SandboxConfig,
    b62,
    b64url,
    digits,
    empty_response,
    exclusive,
    find_by_post_id,
    gate,
    get_item,
    json_response,
    new_item,
    page_at,
    update_item,
)
from backend.networks.sandbox.oauth import authenticate, install
from backend.networks.sandbox.store import SandboxAccount, SandboxItem

PLATFORM = "linkedin"
UPLOAD_HOST = "https://www.linkedin.sandbox.invalid/dms-uploads"
DAILY_POSTS = 150  # posts a member (or organisation) may create a day
COMMENTARY_MAX = 3000
MAGIC = {"image": (b"\xff\xd8\xff", b"\x89PNG", b"GIF8"), "document": (b"%PDF",), "video": ()}


class LinkedInEmulator(Emulator):
    platform = PLATFORM
    HOSTS = {"api": "https://api.linkedin.sandbox.invalid/rest"}
    SERVED_HOSTS = ("https://www.linkedin.sandbox.invalid",)
    OAUTH = LinkedInOAuth
    FAULTS = emulator_errors.FAULTS
    ERROR_ENDPOINTS = emulator_errors.ERROR_ENDPOINTS
    SERVE_BASE_PATH = "/rest"
    SERVE_ENDPOINTS = (
        ("authorize", "/oauth/v2/authorization"),
        ("token", "/oauth/v2/accessToken"),
        ("revoke", "/oauth/v2/revoke"),
    )

    @classmethod
    def new_identity(cls, name: str) -> tuple[str, str]:
        return "urn:li:person:" + b64url(10), "AQV" + b62(150)

    def __init__(self, config: SandboxConfig) -> None:
        super().__init__(config)
        app_products(self)  # an unknown product name of the emulated app: refused at once
        self.route("POST", r"/rest/(?P<kind>images|documents|videos)", self.asset_action)
        self.route("PUT", r"/dms-uploads/(?P<upload>[\w.-]+)", self.upload)
        self.route("GET", r"/rest/(?P<kind>images|documents|videos)/(?P<urn>[^/]+)", self.get_asset)
        self.route("POST", r"/rest/posts", self.create_post)
        self.route("GET", r"/rest/posts", self.find_posts)
        install(self)

    def _auth(self, request: Request, *, versioned: bool = True) -> SandboxAccount | httpx.Response:
        auth = authenticate(request.bearer(), PLATFORM, self._acting_as(request))
        acc = auth.account
        if acc is None or auth.problem:
            return api_error_linkedin(auth.problem, li_error)
        if versioned:
            refused = version_refusal(self, request)
            if refused is not None:
                return refused
        request.sandbox_account_ids = {a.id for a in auth.accounts()}  # type: ignore[attr-defined]  # the route's authenticated accounts, carried on the request to its handler
        request.sandbox_scopes = token_scopes(self, auth)  # type: ignore[attr-defined]  # the route's token scopes, carried on the request to its handler
        return acc

    @staticmethod
    def _allowed(request: Request, author: str, member: str, organization: str) -> bool:
        """Whether the call's token holds the scope LinkedIn asks for acting as `author`: `member`'s for a
        person, `organization`'s for an organisation."""
        need = organization if author.startswith("urn:li:organization:") else member
        return need in getattr(request, "sandbox_scopes", frozenset())

    @staticmethod
    def _acting_as(request: Request) -> str | None:
        """The author (or asset owner) a call acts for: with a member's grant, the member or one of the
        organisations it administers."""
        body = request.json if isinstance(request.json, dict) else {}
        owner = (
            body.get("author")
            or (body.get("initializeUploadRequest") or {}).get("owner")
            or request.query.get("author")
        )
        return str(owner) if owner else None

    @staticmethod
    def _owns(request: Request, acc: SandboxAccount, item: SandboxItem) -> bool:
        return item.account_id == acc.id or item.account_id in getattr(request, "sandbox_account_ids", ())

    def asset_action(self, request: Request, kind: str) -> httpx.Response:
        acc = self._auth(request)
        if isinstance(acc, httpx.Response):
            return acc
        action = request.query.get("action")
        body = request.json if isinstance(request.json, dict) else {}
        if action == "finalizeUpload" and kind == "videos":
            req = body.get("finalizeUploadRequest") or {}
            item = get_item(str(req.get("video")))
            if item is None or not self._owns(request, acc, item):
                return li_error(404, "Video not found", 100)
            update_item(item.id, state="uploaded", started_at=self.now())
            return json_response(200, {})
        if action != "initializeUpload":
            return li_error(400, f"Unsupported action {action}", 100)
        req = body.get("initializeUploadRequest") or {}
        if req.get("owner") != acc.external_id:
            return li_error(403, "Not enough permissions to act as this owner", 100, "ACCESS_DENIED")
        if not self._allowed(request, acc.external_id, "w_member_social", "w_organization_social"):
            return denied_access(f"{kind}.ACTION-initializeUpload", request.header("linkedin-version"))
        single = kind[:-1]
        prefix = {"image": "C4E10AQ", "document": "D4D10AQ", "video": "C5605AQ"}[single]
        urn = f"urn:li:{single}:{prefix}{b64url(12)}"
        upload_id = b64url(24)
        expires = int(self.now().timestamp() * 1000) + 3_600_000
        outcome = "failed" if acc.behaviour == "fail-permanent" and single == "video" else "ok"
        new_item(
            PLATFORM,
            acc,
            single,
            urn,
            processing_s=self.processing_s(acc, 0.3 if single == "image" else 1.0),
            mode=single,
            data={"upload_id": upload_id, "size": req.get("fileSizeBytes")},
            state="waiting",
            outcome=outcome,
            post_id=upload_id,
        )
        upload_url = f"{UPLOAD_HOST}/{upload_id}"
        if kind == "videos":
            size = int(req.get("fileSizeBytes") or 0)
            return json_response(
                200,
                {
                    "value": {
                        "video": urn,
                        "uploadToken": "",
                        "uploadUrlsExpireAt": expires,
                        "uploadInstructions": [
                            {"uploadUrl": upload_url, "firstByte": 0, "lastByte": max(0, size - 1)}
                        ],
                    }
                },
            )
        return json_response(
            200, {"value": {"uploadUrlExpiresAt": expires, "uploadUrl": upload_url, single: urn}}
        )

    def upload(self, request: Request, upload: str) -> httpx.Response:
        acc = self._auth(request, versioned=False)
        if isinstance(acc, httpx.Response):
            return acc
        item = find_by_post_id(PLATFORM, upload)
        if item is None or not self._owns(request, acc, item):
            return li_error(404, "Upload not found")
        magic = MAGIC[item.kind]
        if not request.content or (magic and not request.content.startswith(magic)):
            return li_error(400, f"The uploaded bytes are not a supported {item.kind} format")
        state = "uploading" if item.kind == "video" else "uploaded"
        # the upload URL takes the bytes as a plain PUT (the media's type or application/octet-stream); bytes
        # sent as JSON are taken, and their processing fails (belief, the strictest reading: docs.md)
        as_json = request.header("content-type").split(";")[0].strip().lower() == "application/json"
        update_item(
            item.id,
            state=state,
            started_at=self.now(),
            data={**(item.data or {}), "bytes": len(request.content)},
            **({"outcome": "failed"} if as_json else {}),
        )
        headers = {"ETag": "/" + b64url(40)} if item.kind == "video" else {}
        return empty_response(201 if item.kind != "video" else 200, headers=headers)

    def asset_status(self, item: SandboxItem) -> str:
        if item.state in ("waiting", "uploading"):
            return "WAITING_UPLOAD"
        if not self.ready(item):
            return "PROCESSING"
        return "AVAILABLE" if item.outcome == "ok" else "PROCESSING_FAILED"

    def get_asset(self, request: Request, kind: str, urn: str) -> httpx.Response:
        acc = self._auth(request)
        if isinstance(acc, httpx.Response):
            return acc
        urn = unquote(urn)
        item = get_item(urn, PLATFORM)
        if item is None or not self._owns(request, acc, item):
            return li_error(404, f"Not found: {urn}")
        owner = acc if item.account_id == acc.id else SandboxAccount.get_by_id(item.account_id)
        return json_response(200, {"id": urn, "owner": owner.external_id, "status": self.asset_status(item)})

    def create_post(self, request: Request) -> httpx.Response:
        acc = self._auth(request)
        if isinstance(acc, httpx.Response):
            return acc
        if request.header("x-restli-protocol-version") != "2.0.0":
            return li_error(400, "X-Restli-Protocol-Version 2.0.0 is required")
        body = request.json if isinstance(request.json, dict) else None
        if body is None:
            return li_error(400, "The request body is not valid JSON")
        version = request.header("linkedin-version")
        if body.get("author") != acc.external_id or not self._allowed(
            request, acc.external_id, "w_member_social", "w_organization_social"
        ):
            return denied_access("partnerApiPostsExternal.CREATE", version)
        commentary = str(body.get("commentary") or "")
        if len(commentary) > COMMENTARY_MAX:  # the string sent, escapes included (belief: docs.md)
            return li_error(422, f"commentary is longer than {COMMENTARY_MAX} characters", 100)
        if body.get("lifecycleState") != "PUBLISHED" or body.get("visibility") not in (
            "PUBLIC",
            "CONNECTIONS",
            "LOGGED_IN",
        ):
            return li_error(
                422, "lifecycleState must be PUBLISHED and visibility PUBLIC, CONNECTIONS or LOGGED_IN"
            )
        media = (body.get("content") or {}).get("media") or {}
        asset = None
        if media:
            asset = get_item(str(media.get("id")), PLATFORM)
            if asset is None or not self._owns(request, acc, asset):
                return li_error(400, f"Unknown media {media.get('id')}", 100)
            if self.asset_status(asset) != "AVAILABLE":
                return li_error(400, f"Media {asset.id} is not AVAILABLE", 100)
        if acc.behaviour == "fail-permanent":
            return denied_access("partnerApiPostsExternal.CREATE", version)
        g = gate(acc)
        if g == Gate.RETRIABLE:
            return li_error(500, "Internal Server Error")
        if g == Gate.RATE:
            return self._throttled()
        urn = f"urn:li:share:{digits(19, '7')}"
        with exclusive(acc):  # the daily limit's check and the post counted against it: atomic
            cap = self.option("daily_posts", DAILY_POSTS)
            if self.config.limits and self.count_since(acc, ("post",), 86400, limit=cap) >= cap:
                return self._throttled()
            new_item(
                PLATFORM,
                acc,
                "post",
                urn,
                mode=asset.kind if asset else "text",
                text=commentary,
                title=str(media.get("title") or ""),
                media=[asset.id] if asset else [],
                data={"visibility": body["visibility"]},
                url=f"https://www.linkedin.com/feed/update/{urn}/",
            )
        return empty_response(201, headers={"x-restli-id": urn, "x-linkedin-id": urn})

    @staticmethod
    def _throttled() -> httpx.Response:
        return li_error(
            429,
            "Resource level throttle APPLICATION_AND_MEMBER DAY limit for calls to this resource is reached.",
        )

    def find_posts(self, request: Request) -> httpx.Response:
        acc = self._auth(request)
        if isinstance(acc, httpx.Response):
            return acc
        if (
            request.query.get("q") != "author"
            or request.query.get("author") != acc.external_id
            or not self._allowed(request, acc.external_id, "r_member_social", "r_organization_social")
        ):
            return denied_access("partnerApiPostsExternal.FINDER-author", request.header("linkedin-version"))
        try:
            count = max(1, min(100, int(request.query.get("count") or 10)))
            start = max(0, int(request.query.get("start") or 0))
        except ValueError:
            return li_error(400, "start and count must be integers", 100)
        query = SandboxItem.select().where(
            (SandboxItem.platform == PLATFORM)
            & (SandboxItem.account_id == acc.id)
            & (SandboxItem.kind == "post")
        )
        rows, more = page_at(query, start, count)
        paging: dict[str, Any] = {"start": start, "count": count, "links": []}
        if more:
            paging["links"].append(
                {
                    "rel": "next",
                    "type": "application/json",
                    "href": f"/rest/posts?author={request.query.get('author')}&q=author"
                    f"&start={start + count}&count={count}",
                }
            )
        return json_response(
            200,
            {
                "elements": [
                    {
                        "id": it.id,
                        "author": acc.external_id,
                        "commentary": it.text,
                        "lifecycleState": "PUBLISHED",
                        "visibility": (it.data or {}).get("visibility", "PUBLIC"),
                        "createdAt": int(it.created_at.timestamp() * 1000),
                    }
                    for it in rows
                ],
                "paging": paging,
            },
        )

    def describe(self, item: SandboxItem) -> dict[str, Any] | None:
        if item.kind != "post":
            return None
        return {
            "external_id": item.id,
            "url": item.url,
            "status": "published",
            "kind": item.mode,
            "text": item.text,
            "title": item.title or None,
            "media": list(item.media or []),
        }
