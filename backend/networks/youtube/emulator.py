"""YouTube Data API v3 emulator (NETWORKS.md section 5; the fidelity table in docs.md): resumable sessions
(Location, 308 + Range), metadata rules (title 100, no < >, description 5000 bytes, tags 500), processing
uploaded -> processed with time, failed for fail-permanent; quotaExceeded / backendError for the behaviours.

Strict, per emulated developer app (SandboxConfig.app("youtube"), a new Google Cloud project by default):
- not `audited` (the YouTube API Services audit): every upload is locked private whatever `privacyStatus` asked —
  the insert's answer echoes what was asked, videos.list reads `private` from then on (Y4);
- the project's `videos.insert` bucket: 100 calls a day for every channel of the app together, reset at
  midnight Pacific time -> 403 `quotaExceeded` (domain `youtube.quota`); a channel's own cap is a separate
  400 `uploadLimitExceeded` (Y9, Y10);
- an OAuth grant's scopes: uploads need youtube.upload (or youtube / youtube.force-ssl), reads need
  youtube.readonly (or youtube / youtube.force-ssl) -> 403 `insufficientPermissions` (Y11);
- a video's fate can be armed (`arm_video_fate`, POST /_sandbox/youtube/fates): `deleted`, `rejected` with a
  rejectionReason, `failed` with a failureReason, revealed when processing ends (Y6, Y7)."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import httpx

from backend.networks.sandbox.core import (
    Emulator,
    Gate,
    Request,
    SandboxConfig,
    b64url,
    empty_response,
    exclusive,
    gate,
    get_item,
    json_response,
    new_item,
    page_after,
    update_item,
    write,
)
from backend.networks.sandbox.oauth import Auth, authenticate, install
from backend.networks.sandbox.store import SandboxAccount, SandboxItem, SandboxSetting
from backend.networks.youtube import emulator_errors
from backend.networks.youtube.emulator_oauth import GoogleOAuth

PLATFORM = "youtube"
DAILY_UPLOADS = (
    100  # upload sessions one channel may open in 24 h (uploadLimitExceeded; the number is a belief)
)
DAILY_INSERTS = 100  # the project's videos.insert bucket a day, every channel together (Y-QUOTA)
PACIFIC = ZoneInfo("America/Los_Angeles")
UPLOAD_SESSION = "https://www.googleapis.sandbox.invalid/upload/youtube/v3/videos"
SCOPE = "https://www.googleapis.com/auth/"
# the scopes that allow each kind of call (Y-INS, and the discovery document's scopes of each method)
UPLOAD_SCOPES = frozenset(
    SCOPE + s for s in ("youtube.upload", "youtube", "youtube.force-ssl", "youtubepartner")
)
READ_SCOPES = frozenset(
    SCOPE + s for s in ("youtube.readonly", "youtube", "youtube.force-ssl", "youtubepartner")
)
# the fates a video may be armed with (the discovery document's VideoStatus enums)
FAILURE_REASONS = ("conversion", "invalidFile", "emptyFile", "tooSmall", "codec", "uploadAborted")
REJECTION_REASONS = (
    "copyright",
    "inappropriate",
    "duplicate",
    "termsOfUse",
    "uploaderAccountSuspended",
    "length",
    "claim",
    "uploaderAccountClosed",
    "trademark",
    "legal",
)
FATES_KEY = "youtube:fates"


def pacific_day_start(at: Any) -> Any:
    """The start of the Pacific-time day `at` falls in (YouTube's daily quotas reset at midnight PT), as UTC."""
    local = at.astimezone(PACIFIC)
    return local.replace(hour=0, minute=0, second=0, microsecond=0).astimezone(at.tzinfo)


def arm_video_fate(upload_status: str, reason: str | None = None, *, times: int = 1) -> list[dict[str, Any]]:
    """The next `times` videos uploaded end their processing `upload_status` (deleted, rejected with a
    rejectionReason, failed with a failureReason) instead of processed. Returns what is armed."""
    if upload_status == "deleted":
        reason = None
    elif upload_status == "rejected":
        if reason not in REJECTION_REASONS:
            raise ValueError(f"rejectionReason: one of {', '.join(REJECTION_REASONS)}")
    elif upload_status == "failed":
        if reason not in FAILURE_REASONS:
            raise ValueError(f"failureReason: one of {', '.join(FAILURE_REASONS)}")
    else:
        raise ValueError("uploadStatus: deleted, rejected or failed")
    if isinstance(times, bool) or not isinstance(times, int) or not 1 <= times <= 1000:
        raise ValueError("times: an integer from 1 to 1000")
    with write():
        row = SandboxSetting.get_or_none(SandboxSetting.key == FATES_KEY)
        armed = list((row.value or {}).get("armed") or []) if row is not None else []
        armed.append({"uploadStatus": upload_status, "reason": reason, "times": times})
        if row is None:
            SandboxSetting.create(key=FATES_KEY, value={"armed": armed})
        else:
            SandboxSetting.update(value={"armed": armed}).where(SandboxSetting.key == FATES_KEY).execute()
    return armed


def _next_fate() -> str | None:
    """The armed fate the next video takes ("deleted", "rejected:duplicate", "failed:codec"), consumed; None."""
    row = SandboxSetting.get_or_none(SandboxSetting.key == FATES_KEY)
    armed = list((row.value or {}).get("armed") or []) if row is not None else []
    if not armed:
        return None
    first = dict(armed[0])
    first["times"] = int(first.get("times") or 1) - 1
    rest = ([first] if first["times"] > 0 else []) + armed[1:]
    SandboxSetting.update(value={"armed": rest}).where(SandboxSetting.key == FATES_KEY).execute()
    return str(first["uploadStatus"]) + (f":{first['reason']}" if first.get("reason") else "")


def tags_length(tags: list[str]) -> int:
    """YouTube's count for snippet.tags: the characters, a comma between tags, quotes around a tag with a space."""
    return sum(len(t) + (2 if " " in t else 0) for t in tags) + max(0, len(tags) - 1)


def yt_error(status: int, reason: str, message: str, domain: str = "youtube.video") -> httpx.Response:
    return json_response(
        status,
        {
            "error": {
                "code": status,
                "message": message,
                "errors": [{"domain": domain, "reason": reason, "message": message}],
            }
        },
    )


def quota_exceeded() -> httpx.Response:
    """Google's answer once the project's bucket is used up (Y-ERR-BODY: the message carries the link)."""
    return yt_error(
        403,
        "quotaExceeded",
        'The request cannot be completed because you have exceeded your <a href="/youtube/v3/getting-started#quota">'
        "quota</a>.",
        "youtube.quota",
    )


def insufficient_scopes() -> httpx.Response:
    """A token whose grant holds none of the scopes the call needs (Y-ERR-BODY)."""
    message = "Request had insufficient authentication scopes."
    return json_response(
        403,
        {
            "error": {
                "code": 403,
                "message": message,
                "errors": [{"message": message, "domain": "global", "reason": "insufficientPermissions"}],
                "status": "PERMISSION_DENIED",
                "details": [
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": "ACCESS_TOKEN_SCOPE_INSUFFICIENT",
                        "domain": "googleapis.com",
                        "metadata": {"service": "youtube.googleapis.com", "method": "youtube.api.v3"},
                    }
                ],
            }
        },
    )


class YouTubeEmulator(Emulator):
    platform = PLATFORM
    HOSTS = {
        "api": "https://www.googleapis.sandbox.invalid/youtube/v3",
        "upload": "https://www.googleapis.sandbox.invalid/upload/youtube/v3",
    }
    OAUTH = GoogleOAuth
    FAULTS = emulator_errors.FAULTS
    ERROR_ENDPOINTS = emulator_errors.ERROR_ENDPOINTS
    SERVE_BASE_PATH = "/youtube/v3"
    SERVE_ENDPOINTS = (("authorize", "/o/oauth2/v2/auth"), ("token", "/token"), ("revoke", "/revoke"))

    @classmethod
    def new_identity(cls, name: str) -> tuple[str, str]:
        return "UC" + b64url(22), "ya29." + b64url(150)

    def __init__(self, config: SandboxConfig) -> None:
        super().__init__(config)
        self.route("POST", r"/upload/youtube/v3/videos", self.start_session)
        self.route("PUT", r"/upload/youtube/v3/videos", self.put_bytes)
        self.route("GET", r"/youtube/v3/videos", self.list_videos)
        self.route("GET", r"/youtube/v3/search", self.search)
        self.route("GET", r"/youtube/v3/channels", self.channels)
        self.route("GET", r"/youtube/v3/playlistItems", self.playlist_items)
        self.route("POST", r"/_sandbox/youtube/fates", self.fates)
        install(self)

    @property
    def audited(self) -> bool:
        """The emulated project passed the YouTube API Services audit (a new one has not)."""
        return self.config.app(PLATFORM).audited

    def fates(self, request: Request) -> httpx.Response:
        """POST /_sandbox/youtube/fates {"uploadStatus", "reason"?, "times"?} (not a real path): arm_video_fate."""
        body = request.json if isinstance(request.json, dict) else {}
        try:
            armed = arm_video_fate(
                str(body.get("uploadStatus") or ""), body.get("reason"), times=body.get("times", 1)
            )
        except ValueError as exc:
            return json_response(400, {"error": "invalid_fate", "message": str(exc)})
        return json_response(200, {"armed": armed})

    def _auth(
        self, request: Request, scopes: frozenset[str] | None = None
    ) -> SandboxAccount | httpx.Response:
        """The channel the token speaks for, or Google's refusal: 401 authError for a bad token, 403
        insufficientPermissions when an OAuth grant holds none of `scopes` (a sandbox account's own token, with
        no grant, may do everything)."""
        auth = authenticate(request.bearer(), PLATFORM)
        acc = auth.account
        if acc is not None and not auth.problem and scopes is not None and not self._grants(auth, scopes):
            return insufficient_scopes()
        if acc is None or auth.problem:
            resp = yt_error(
                401,
                "authError",
                "Request had invalid authentication credentials. Expected OAuth 2 "
                "access token, login cookie or other valid authentication credential.",
                "global",
            )
            resp.headers["WWW-Authenticate"] = (
                'Bearer realm="https://accounts.google.com/", error="invalid_token"'
            )
            return resp
        return acc

    @staticmethod
    def _grants(auth: Auth, scopes: frozenset[str]) -> bool:
        return auth.grant is None or bool(scopes & set(auth.grant.scopes or []))

    def start_session(self, request: Request) -> httpx.Response:
        acc = self._auth(request, UPLOAD_SCOPES)
        if isinstance(acc, httpx.Response):
            return acc
        if request.query.get("uploadType") != "resumable":
            return yt_error(400, "invalidParameter", "uploadType must be resumable in this sandbox", "global")
        body = request.json if isinstance(request.json, dict) else {}
        snippet, status = body.get("snippet") or {}, body.get("status") or {}
        title, description = str(snippet.get("title") or ""), str(snippet.get("description") or "")
        if not title.strip() or len(title) > 100 or "<" in title or ">" in title:
            return yt_error(400, "invalidTitle", "The request metadata specifies an invalid video title.")
        if len(description.encode()) > 5000 or "<" in description or ">" in description:
            return yt_error(
                400, "invalidDescription", "The request metadata specifies an invalid video description."
            )
        if tags_length(list(snippet.get("tags") or [])) > 500:
            return yt_error(400, "invalidTags", "The request metadata specifies invalid video keywords.")
        if status.get("privacyStatus", "public") not in ("public", "private", "unlisted"):
            return yt_error(400, "invalidVideoMetadata", "The request metadata is invalid.")
        size = request.header("x-upload-content-length")
        if not (size and size.isdigit()) or not request.header("x-upload-content-type").startswith("video/"):
            return yt_error(
                400,
                "invalidParameter",
                "X-Upload-Content-Length and X-Upload-Content-Type video/* are required",
                "global",
            )
        g = gate(acc)
        if g == Gate.RETRIABLE:
            return yt_error(503, "backendError", "Backend Error", "global")
        if g == Gate.RATE:
            return quota_exceeded()
        upload_id = b64url(40)
        with exclusive(acc):  # the daily caps' checks and the session counted against them: atomic
            if self.config.limits and self.project_inserts_today() >= self.option(
                "daily_inserts", DAILY_INSERTS
            ):
                return quota_exceeded()
            cap = self.option("daily_uploads", DAILY_UPLOADS)
            if self.config.limits and self.count_since(acc, ("upload",), 86400, limit=cap) >= cap:
                return yt_error(
                    400, "uploadLimitExceeded", "The user has exceeded the number of videos they may upload."
                )
            new_item(
                PLATFORM,
                acc,
                "upload",
                "upload:" + upload_id,
                data={"resource": body, "size": int(size), "received": 0},
            )
        return empty_response(
            200, headers={"Location": f"{UPLOAD_SESSION}?uploadType=resumable&upload_id={upload_id}"}
        )

    def project_inserts_today(self) -> int:
        """The project's videos.insert calls since midnight Pacific time, every channel of the app together."""
        since = pacific_day_start(self.now())
        return (
            SandboxItem.select(SandboxItem.id)
            .where(
                (SandboxItem.platform == PLATFORM)
                & (SandboxItem.kind == "upload")
                & (SandboxItem.created_at >= since)
            )
            .count()
        )

    def put_bytes(self, request: Request) -> httpx.Response:
        acc = self._auth(request, UPLOAD_SCOPES)
        if isinstance(acc, httpx.Response):
            return acc
        session = get_item("upload:" + str(request.query.get("upload_id")))
        if session is None or session.account_id != acc.id:
            return yt_error(404, "notFound", "Upload session not found or expired.", "global")
        data = dict(session.data or {})
        size, received = int(data["size"]), int(data["received"])
        if session.state == "done":
            video = get_item(str(session.post_id))
            if video is None:
                raise SandboxItem.DoesNotExist(  # type: ignore[attr-defined]  # peewee: a model's DoesNotExist is made by its metaclass
                    f"no video {session.post_id}"
                )
            return json_response(200, self.resource(video))
        crange = request.header("content-range")
        if crange.startswith("bytes */"):
            return empty_response(308, headers={"Range": f"bytes=0-{received - 1}"} if received else {})
        received += len(request.content)
        if received < size:
            update_item(session.id, data={**data, "received": received})
            return empty_response(308, headers={"Range": f"bytes=0-{received - 1}"})
        res = data["resource"]
        video_id = b64url(11)
        fate = _next_fate()
        with write():
            update_item(session.id, data={**data, "received": size}, state="done", post_id=video_id)
            item = new_item(
                PLATFORM,
                acc,
                "video",
                video_id,
                processing_s=self.processing_s(acc),
                text=res["snippet"].get("description", ""),
                title=res["snippet"]["title"],
                data={"resource": res, "bytes": size},
                outcome=fate or ("failed:codec" if acc.behaviour == "fail-permanent" else "ok"),
                url=f"https://youtu.be/{video_id}",
                # what the video reads from now on: locked private unless the project passed the audit (Y4)
                state="" if self.audited else "locked_private",
            )
        return json_response(200, self.resource(item, inserted=True))

    def upload_status(self, item: SandboxItem) -> str:
        if not self.ready(item):
            return "uploaded"
        if item.outcome == "ok":
            return "processed"
        fate = item.outcome.split(":", 1)[0]
        return fate if fate in ("deleted", "rejected", "failed") else "failed"  # an older row: "codec"

    def resource(self, item: SandboxItem, *, inserted: bool = False) -> dict[str, Any]:
        """The video resource; `inserted`: as the upload's answer (the privacy asked, echoed), else as
        videos.list reads it (a locked video reads private)."""
        res = (item.data or {}).get("resource") or {}
        upload = self.upload_status(item)
        status = {"privacyStatus": "public", **(res.get("status") or {}), "uploadStatus": upload}
        if item.state == "locked_private" and not inserted:
            status["privacyStatus"] = "private"
        reason = item.outcome.split(":", 1)[1] if ":" in item.outcome else item.outcome
        if upload == "failed":
            status["failureReason"] = reason
        if upload == "rejected":
            status["rejectionReason"] = reason
        processing = {
            "uploaded": "processing",
            "processed": "succeeded",
            "failed": "failed",
            "rejected": "terminated",
            "deleted": "terminated",
        }[upload]
        return {
            "kind": "youtube#video",
            "id": item.id,
            "snippet": {
                **(res.get("snippet") or {}),
                "publishedAt": item.created_at.isoformat().replace("+00:00", "Z"),
                "channelId": "",
            },
            "status": status,
            "processingDetails": {"processingStatus": processing},
        }

    def list_videos(self, request: Request) -> httpx.Response:
        acc = self._auth(request, READ_SCOPES)
        if isinstance(acc, httpx.Response):
            return acc
        ids = [i for i in str(request.query.get("id") or "").split(",") if i]
        rows = (
            list(
                SandboxItem.select().where(
                    (SandboxItem.platform == PLATFORM)
                    & (SandboxItem.kind == "video")
                    & SandboxItem.id.in_(ids)
                    & (SandboxItem.account_id == acc.id)
                )
            )
            if ids
            else []
        )
        return json_response(
            200, {"kind": "youtube#videoListResponse", "items": [self.resource(r) for r in rows]}
        )

    def search(self, request: Request) -> httpx.Response:
        acc = self._auth(request, READ_SCOPES)
        if isinstance(acc, httpx.Response):
            return acc
        if request.query.get("forMine") != "true":
            return yt_error(
                400, "invalidSearchFilter", "Only forMine searches are emulated", "youtube.search"
            )
        try:
            limit = max(1, min(50, int(request.query.get("maxResults") or 5)))
        except ValueError:
            return yt_error(400, "invalidParameter", "maxResults must be an integer", "global")
        query = SandboxItem.select().where(
            (SandboxItem.platform == PLATFORM)
            & (SandboxItem.kind == "video")
            & (SandboxItem.account_id == acc.id)
        )
        rows, token = page_after(query, request.query.get("pageToken") or None, limit)
        body: dict[str, Any] = {
            "kind": "youtube#searchListResponse",
            "pageInfo": {"resultsPerPage": limit},
            "items": [
                {
                    "kind": "youtube#searchResult",
                    "id": {"kind": "youtube#video", "videoId": r.id},
                    "snippet": {
                        "title": r.title,
                        "description": r.text[:160],
                        "publishedAt": r.created_at.isoformat().replace("+00:00", "Z"),
                    },
                }
                for r in rows
            ],
        }
        if token:
            body["nextPageToken"] = token
        return json_response(200, body)

    @staticmethod
    def uploads_playlist(acc: SandboxAccount) -> str:
        return "UU" + acc.external_id[2:]  # a channel UCxxxx's uploads playlist is UUxxxx

    def channels(self, request: Request) -> httpx.Response:
        """channels.list?mine=true: the channel, with its uploads playlist (contentDetails.relatedPlaylists)."""
        acc = self._auth(request, READ_SCOPES)
        if isinstance(acc, httpx.Response):
            return acc
        if request.query.get("mine") != "true":
            return yt_error(400, "invalidFilters", "Only mine=true is emulated", "youtube.parameter")
        parts = set((request.query.get("part") or "id").split(","))
        item: dict[str, Any] = {"kind": "youtube#channel", "id": acc.external_id}
        if "snippet" in parts:
            item["snippet"] = {
                "title": acc.display_name or acc.name,
                "customUrl": f"@{acc.username}",
                "description": "",
            }
        if "contentDetails" in parts:
            item["contentDetails"] = {"relatedPlaylists": {"uploads": self.uploads_playlist(acc)}}
        return json_response(200, {"kind": "youtube#channelListResponse", "items": [item]})

    def playlist_items(self, request: Request) -> httpx.Response:
        """playlistItems.list of the channel's uploads playlist, newest first, `maxResults` (<= 50) a page,
        `pageToken` <- `nextPageToken` (1 quota unit a page, where search costs 100)."""
        acc = self._auth(request, READ_SCOPES)
        if isinstance(acc, httpx.Response):
            return acc
        if request.query.get("playlistId") != self.uploads_playlist(acc):
            return yt_error(
                404,
                "playlistNotFound",
                "The playlist identified with the request's playlistId parameter cannot be found.",
                "youtube.playlistItem",
            )
        try:
            limit = max(1, min(50, int(request.query.get("maxResults") or 5)))
        except ValueError:
            return yt_error(400, "invalidParameter", "maxResults must be an integer", "global")
        query = SandboxItem.select().where(
            (SandboxItem.platform == PLATFORM)
            & (SandboxItem.kind == "video")
            & (SandboxItem.account_id == acc.id)
        )
        rows, token = page_after(query, request.query.get("pageToken") or None, limit)
        items = []
        for r in rows:
            at = r.created_at.isoformat().replace("+00:00", "Z")
            items.append(
                {
                    "kind": "youtube#playlistItem",
                    "id": "PI" + r.id,
                    "snippet": {
                        "title": r.title,
                        "description": r.text,
                        "publishedAt": at,
                        "channelId": acc.external_id,
                        "playlistId": self.uploads_playlist(acc),
                        "resourceId": {"kind": "youtube#video", "videoId": r.id},
                    },
                    "contentDetails": {"videoId": r.id, "videoPublishedAt": at},
                }
            )
        body: dict[str, Any] = {
            "kind": "youtube#playlistItemListResponse",
            "items": items,
            "pageInfo": {"resultsPerPage": limit},
        }
        if token:
            body["nextPageToken"] = token
        return json_response(200, body)

    def describe(self, item: SandboxItem) -> dict[str, Any] | None:
        if item.kind != "video" or self.upload_status(item) != "processed":
            return None
        return {
            "external_id": item.id,
            "url": item.url,
            "status": "published",
            "kind": "video",
            "text": item.text,
            "title": item.title,
            "media": [],
        }
