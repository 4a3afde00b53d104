"""YouTube Data API v3 videos.insert adapter (NETWORKS.md section 5): resumable session (POST with the video
resource, session URI in Location) -> PUT the bytes (resuming after a 308 / 5xx) -> poll
videos?part=status,processingDetails until processed. find_existing pages the channel's uploads playlist,
which holds a video from the end of its upload on, processed or not: absence is conclusive at once
(LISTING_DELAY_S 0). The upload session itself publishes nothing: only the PUT that completes the bytes
creates the video."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx

from backend import clock
from backend.networks.base import (
    MAX_LISTING_PAGES,
    PAGES_WITHOUT_WINDOW,
    NetworkError,
    Publication,
    PublishOutcome,
    check_failed,
    decode_ref,
    encode_ref,
    never_ready,
)
from backend.networks.factory import AdapterContext
from backend.networks.http import json_or_none, send
from backend.networks.media_loader import MediaLoader
from backend.networks.youtube import NETWORK
from backend.outbound.retry_after import retry_after_s

PLATFORM = NETWORK.name
LISTING_DELAY_S = NETWORK.listing_delay_s
MAX_RESUMES = 3


def seconds_to_pacific_midnight() -> float:
    now = clock.now().astimezone(ZoneInfo("America/Los_Angeles"))
    nxt = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(1.0, (nxt - now).total_seconds())


def classify(resp: httpx.Response) -> NetworkError:
    body = json_or_none(resp)
    err = body.get("error") if isinstance(body, dict) else None
    err = err if isinstance(err, dict) else {}
    reasons = [str(e.get("reason")) for e in err.get("errors") or [] if isinstance(e, dict)]
    reason = reasons[0] if reasons else f"http_{resp.status_code}"
    message = str(err.get("message") or "").strip()
    s = resp.status_code
    if reason in ("quotaExceeded", "dailyLimitExceeded"):
        return NetworkError(
            "retriable",
            "the YouTube API quota is used up for today; it resets at midnight Pacific time",
            code=reason,
            http_status=s,
            retry_after_s=seconds_to_pacific_midnight(),
            wait=True,
        )
    if reason == "uploadLimitExceeded":
        return NetworkError(
            "retriable",
            "the channel reached YouTube's daily upload limit; retry tomorrow",
            code=reason,
            http_status=s,
            retry_after_s=86400.0,
            wait=True,
        )
    if reason in ("rateLimitExceeded", "userRateLimitExceeded"):
        return NetworkError(
            "retriable",
            "YouTube is throttling requests; it will be retried",
            code=reason,
            http_status=s,
            retry_after_s=retry_after_s(resp) or 60.0,
            wait=True,
        )
    if s == 401 or reason in ("authError", "unauthorized"):
        return NetworkError(
            "permanent",
            "the YouTube access token is invalid or revoked: reconnect the channel",
            code=reason,
            http_status=s,
            auth_refused=True,
        )
    if s >= 500 or reason in ("backendError", "internalError"):
        return NetworkError(
            "retriable",
            f"YouTube is temporarily unavailable ({reason}); it will be retried",
            code=reason,
            http_status=s,
            retry_after_s=retry_after_s(resp),
        )
    if s == 403:
        return NetworkError(
            "permanent",
            f"YouTube refused the upload ({message or reason}): check the channel's permissions and status",
            code=reason,
            http_status=s,
        )
    return NetworkError(
        "permanent", f"YouTube refused the video ({reason}): {message}", code=reason, http_status=s
    )


def video_url(video_id: str) -> str:
    return f"https://youtu.be/{video_id}"


class YouTubeAdapter:
    platform = PLATFORM

    def __init__(
        self,
        client: httpx.Client,
        base_url: str = "https://www.googleapis.com/youtube/v3",
        upload_base_url: str = "https://www.googleapis.com/upload/youtube/v3",
        *,
        media_loader: MediaLoader | None = None,
    ) -> None:
        self.client = client
        self.base = base_url.rstrip("/")
        self.upload_base = upload_base_url.rstrip("/")
        self.media_loader = media_loader

    def resource(self, pub: Publication) -> dict[str, Any]:
        p, o = pub.payload, pub.payload.options
        snippet: dict[str, Any] = {
            "title": p.title or "Untitled video",
            "description": p.text,
            "categoryId": str(o.get("category_id") or "22"),
        }
        if o.get("tags"):
            snippet["tags"] = list(o["tags"])
        return {
            "snippet": snippet,
            "status": {
                "privacyStatus": str(o.get("privacy_status") or "public"),
                "selfDeclaredMadeForKids": bool(o.get("made_for_kids")),
                "containsSyntheticMedia": bool(o.get("contains_synthetic_media")),
            },
        }

    def _auth(self, pub: Publication) -> dict[str, str]:
        return {"Authorization": f"Bearer {pub.account.access_token}"}

    def _check(self, resp: httpx.Response) -> httpx.Response:
        if resp.status_code >= 400:
            raise classify(resp)
        return resp

    def upload(self, pub: Publication, data: bytes, mime: str) -> str:
        """A resumable upload: the session (saved as the attempt's progress at once: an interrupted attempt's
        successor continues it, `pub.resume`, while YouTube keeps it — a week — instead of opening another that
        costs one of the channel's daily uploads), then the bytes, asking how far they got after a cut."""
        session = self._resumed_session(pub)
        offset: int | None = None  # unknown: ask YouTube first (a resumed session)
        if session is None:
            session, offset = self._new_session(pub, data, mime), 0
        for _ in range(MAX_RESUMES + 1):
            if offset is None:
                done, offset = self._progress(pub, session, len(data))
                if done is not None:
                    return done
                if offset is None:  # the resumed session is gone (expired): a new one
                    session, offset = self._new_session(pub, data, mime), 0
            put_headers = {**self._auth(pub), "Content-Type": mime}
            if offset:
                put_headers["Content-Range"] = f"bytes {offset}-{len(data) - 1}/{len(data)}"
            try:
                resp = send(
                    self.client,
                    "PUT",
                    session,
                    network="YouTube",
                    write=True,
                    headers=put_headers,
                    content=data[offset:],
                )
            except NetworkError:
                resp = None  # cut mid-upload: ask how far it got
            if resp is not None and resp.status_code in (200, 201):
                return str(resp.json()["id"])
            if resp is not None and resp.status_code == 404:
                raise NetworkError(
                    "retriable",
                    "the YouTube upload session expired; it will start over",
                    code="session_expired",
                    ambiguous=True,
                )
            if resp is not None and resp.status_code < 500 and resp.status_code != 308:
                raise classify(resp)
            done, offset = self._progress(pub, session, len(data))
            if done is not None:
                return done
            if offset is None:
                raise NetworkError(
                    "retriable",
                    "the YouTube upload session expired; it will start over",
                    code="session_expired",
                    ambiguous=True,
                )
        raise NetworkError(
            "retriable",
            "the upload to YouTube kept failing; it will be retried",
            code="upload_failed",
            ambiguous=True,
        )

    def _new_session(self, pub: Publication, data: bytes, mime: str) -> str:
        headers = {
            **self._auth(pub),
            "Content-Type": "application/json; charset=UTF-8",
            "X-Upload-Content-Length": str(len(data)),
            "X-Upload-Content-Type": mime,
        }
        resp = self._check(
            send(
                self.client,
                "POST",
                f"{self.upload_base}/videos",
                network="YouTube",
                write=True,
                params={"uploadType": "resumable", "part": "snippet,status"},
                headers=headers,
                json=self.resource(pub),
            )
        )
        session = resp.headers.get("location")
        if not session:
            raise NetworkError(
                "retriable", "YouTube did not return an upload session; it will be retried", code="no_session"
            )
        pub.saved(encode_ref(session=session, size=len(data)))
        return str(session)

    def _resumed_session(self, pub: Publication) -> str | None:
        state = decode_ref(pub.resume) if pub.resume else {}
        session = state.get("session")
        return str(session) if session else None

    def _progress(self, pub: Publication, session: str, size: int) -> tuple[str | None, int | None]:
        """How far an upload session got: (the video id, _) once complete; (None, the next byte's offset) while
        incomplete; (None, None) when YouTube no longer has the session."""
        status = send(
            self.client,
            "PUT",
            session,
            network="YouTube",
            write=True,
            headers={**self._auth(pub), "Content-Range": f"bytes */{size}"},
            content=b"",
        )
        if status.status_code in (200, 201):
            return str(status.json()["id"]), None
        if status.status_code in (404, 410):
            return None, None
        rng = status.headers.get("range", "") if status.status_code == 308 else ""  # else: from the start
        return None, (int(rng.rsplit("-", 1)[1]) + 1 if "-" in rng else 0)

    def video_state(self, pub: Publication, video_id: str) -> PublishOutcome:
        resp = self._check(
            send(
                self.client,
                "GET",
                f"{self.base}/videos",
                network="YouTube",
                headers=self._auth(pub),
                params={"part": "status,processingDetails", "id": video_id},
            )
        )
        items = (json_or_none(resp) or {}).get("items") or []
        if not items:
            return PublishOutcome.failed(
                "permanent",
                "the video is no longer on the YouTube channel (deleted or never created)",
                tracking_ref=video_id,
            )
        st = items[0].get("status") or {}
        upload = str(st.get("uploadStatus") or "")
        if upload == "processed":
            return PublishOutcome.published(
                video_id, video_url(video_id), tracking_ref=video_id, network_status=upload
            )
        if upload == "failed":
            return PublishOutcome.failed(
                "permanent",
                f"YouTube could not process the video "
                f"({st.get('failureReason') or 'unknown'}): fix the file and upload again",
                network_code=str(st.get("failureReason")),
                network_status=upload,
            )
        if upload == "rejected":
            return PublishOutcome.failed(
                "permanent",
                f"YouTube rejected the video ({st.get('rejectionReason') or 'unknown'})",
                network_code=str(st.get("rejectionReason")),
                network_status=upload,
            )
        return PublishOutcome.pending(video_id, network_status=upload or "uploaded")

    def publish(self, pub: Publication) -> PublishOutcome:
        if not pub.payload.media:
            return PublishOutcome.failed("permanent", "YouTube needs a video")
        media = pub.payload.media[0]
        try:
            if self.media_loader is None:
                raise NetworkError(
                    "permanent", "no media loader configured for YouTube uploads", code="no_loader"
                )
            video_id = self.upload(pub, self.media_loader(media), media.mime or "video/mp4")
            return self.video_state(pub, video_id)
        except NetworkError as e:
            return e.outcome()

    def check_status(self, pub: Publication, ref: str) -> PublishOutcome:
        try:
            return self.video_state(pub, ref)
        except NetworkError as e:
            return e.outcome(tracking_ref=ref)

    def uploads_playlist(self, pub: Publication) -> str:
        """The channel's uploads playlist (channels.list?mine=true, contentDetails.relatedPlaylists.uploads)."""
        resp = self._check(
            send(
                self.client,
                "GET",
                f"{self.base}/channels",
                network="YouTube",
                headers=self._auth(pub),
                params={"part": "contentDetails", "mine": "true"},
            )
        )
        items = (json_or_none(resp) or {}).get("items") or []
        uploads = (
            ((items[0].get("contentDetails") or {}).get("relatedPlaylists") or {}).get("uploads")
            if items
            else None
        )
        if not uploads:
            raise NetworkError(
                "retriable",
                "YouTube did not return the channel's uploads playlist",
                code="no_uploads_playlist",
            )
        return str(uploads)

    def complete(self, pub: Publication, ref: str) -> PublishOutcome:
        return never_ready(PLATFORM)

    def find_existing(self, pub: Publication) -> PublishOutcome | None:
        """Pages the channel's uploads playlist (playlistItems.list, newest first, `pageToken` <- `nextPageToken`,
        1 quota unit a page where search costs 100) back to the attempt's start, matching the title; a match is
        then read like check_status."""
        since = pub.not_before()
        try:
            params = {"part": "snippet", "playlistId": self.uploads_playlist(pub), "maxResults": "50"}
            for _ in range(MAX_LISTING_PAGES if since is not None else PAGES_WITHOUT_WINDOW):
                resp = self._check(
                    send(
                        self.client,
                        "GET",
                        f"{self.base}/playlistItems",
                        network="YouTube",
                        headers=self._auth(pub),
                        params=params,
                    )
                )
                body = json_or_none(resp) or {}
                for it in body.get("items") or []:
                    sn = it.get("snippet") or {}
                    try:
                        published = datetime.fromisoformat(str(sn.get("publishedAt")).replace("Z", "+00:00"))
                    except ValueError:
                        continue
                    if since is not None and published < since:
                        return None
                    if str(sn.get("title") or "") == (pub.payload.title or ""):
                        return self.check_status(pub, str((sn.get("resourceId") or {}).get("videoId")))
                token = body.get("nextPageToken")
                if not token:
                    return None
                params = {**params, "pageToken": str(token)}
        except NetworkError as e:
            return check_failed("YouTube", e)
        return None


def make_adapter(ctx: AdapterContext) -> YouTubeAdapter:
    """The registry's factory: the upload host for the resumable upload (the API host when none is given)."""
    return YouTubeAdapter(ctx.client, ctx.host("api"), ctx.host("upload"), media_loader=ctx.media_loader)
