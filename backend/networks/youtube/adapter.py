"""YouTube Data API v3 videos.insert adapter (NETWORKS.md section 5; the fidelity table in docs.md): resumable
session (POST with the video resource, session URI in Location, saved before any byte is sent) -> PUT the bytes
(resuming after a 308; after a 5xx or a cut, backing off with jitter as Google's official sample does) -> poll
videos?part=status,processingDetails until processed, reading `status.privacyStatus` back: a project that has
not passed the YouTube API Services audit has its uploads locked private, which the target reports as a
warning (`youtube_private_lock`). find_existing asks the saved upload session (none saved: nothing was made); only
for a session YouTube no longer has does it page the channel's uploads playlist, which holds a video from the end
of its upload on, processed or not. The upload session
itself publishes nothing: only the PUT that completes the bytes creates the video."""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable
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
    TargetWarning,
    Unverifiable,
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
MAX_TRIES = 6  # tries of one upload within an attempt (the engine's own retries take longer outages)
MAX_BACKOFF_S = 32.0  # the longest wait between two tries (Google's sample: random() * 2**n, n up to 10)
MAX_RETRY_AFTER_S = 60.0  # a longer Retry-After ends the attempt (the engine waits it out, then resumes)
SCOPE = "https://www.googleapis.com/auth/"
PRIVATE_LOCK = "youtube_private_lock"


def backoff_s(n: int, r: float, retry_after: float | None) -> float:
    """The wait before try n+1 after a 5xx or a cut: random() * 2**n (Y-SAMPLE), capped at MAX_BACKOFF_S, at
    least the Retry-After YouTube gave."""
    return max(r * min(2.0**n, MAX_BACKOFF_S), retry_after or 0.0)


def private_lock(requested: str, url: str) -> TargetWarning:
    """The warning of a video YouTube locked private although `requested` was asked (Y4, Y-LOCK-HELP)."""
    return TargetWarning(
        PRIVATE_LOCK,
        f"YouTube locked the video private (asked: {requested}): uploads through the API from a Google Cloud "
        "project that has not passed the YouTube API Services audit are private whatever privacy is asked, and "
        f"cannot be appealed. Only the channel can see it ({url}). To publish it {requested}, upload it again "
        "from YouTube Studio; to lift the lock for later posts, have the project pass the audit "
        "(https://developers.google.com/youtube/data/guides/quota_and_compliance_audits) and set SOCIALPUB_YOUTUBE_AUDITED=1",
    )


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
    if reason in ("insufficientPermissions", "ACCESS_TOKEN_SCOPE_INSUFFICIENT"):
        return NetworkError(
            "permanent",
            "the YouTube channel's authorisation lacks a scope this needs (youtube.upload to upload, "
            "youtube.readonly to read the video back): reconnect it with `socialpub accounts connect youtube` "
            "and grant every permission asked",
            code="insufficientPermissions",
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


def requested_privacy(pub: Publication) -> str:
    return str(pub.payload.options.get("privacy_status") or "public")


def next_byte(resp: httpx.Response) -> int:
    """The offset to resume from, by a 308's `Range: bytes=0-N` (none: no byte was kept, Y-RES)."""
    rng = resp.headers.get("range", "")
    return int(rng.rsplit("-", 1)[1]) + 1 if "-" in rng else 0


class YouTubeAdapter:
    platform = PLATFORM

    def __init__(
        self,
        client: httpx.Client,
        base_url: str = "https://www.googleapis.com/youtube/v3",
        upload_base_url: str = "https://www.googleapis.com/upload/youtube/v3",
        *,
        media_loader: MediaLoader | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.client = client
        self.base = base_url.rstrip("/")
        self.upload_base = upload_base_url.rstrip("/")
        self.media_loader = media_loader
        self.sleep = sleep  # the waits between tries of an upload (tests step them)
        self.rng = rng

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
                "privacyStatus": requested_privacy(pub),
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
        costs one of the project's daily inserts), then the bytes. After a 5xx or a cut: wait (backoff_s, with
        jitter, as Google's official sample), ask how far the bytes got (`Content-Range: bytes */N`), resume
        from there (Y2, Y3)."""
        session = self._resumed_session(pub)
        offset: int | None = None  # unknown: ask YouTube first (a resumed session)
        resumed = session is not None
        if session is None:
            session, offset = self._new_session(pub, data, mime), 0
        for n in range(1, MAX_TRIES + 1):
            retry_after: float | None = None
            resp: httpx.Response | None = None
            try:
                if offset is None:
                    done, offset = self._progress(pub, session, len(data))
                    if done is not None:
                        return done
                    if offset is None and resumed:  # the session of an earlier attempt expired: a new one
                        session, offset, resumed = self._new_session(pub, data, mime), 0, False
                    elif offset is None:
                        raise self._expired()
                resp = self._put(pub, session, data, offset, mime)
            except NetworkError as e:
                if e.fail_type != "retriable" or e.wait or e.code == "session_expired":
                    raise  # a refusal, or a window to wait out (a quota): the engine's, not a sleep here
                retry_after = e.retry_after_s  # a 5xx answering the status query, or a cut: wait, ask again
            resumed = False
            if resp is not None:
                if resp.status_code in (200, 201):
                    return str(resp.json()["id"])
                if resp.status_code == 404:
                    raise self._expired()
                if resp.status_code == 308:  # YouTube kept part of it: continue from there at once
                    offset = next_byte(resp)
                    continue
                if resp.status_code < 500:
                    raise classify(resp)
                retry_after = retry_after_s(resp)
            if retry_after is not None and retry_after > MAX_RETRY_AFTER_S:  # longer than a job should sleep
                raise NetworkError(
                    "retriable",
                    "YouTube asked to wait before resuming the upload; it will be resumed",
                    code="upload_retry_after",
                    retry_after_s=retry_after,
                    ambiguous=True,  # the session holds what arrived: the next attempt asks it first
                )
            if n < MAX_TRIES:
                self.sleep(backoff_s(n, self.rng(), retry_after))
            offset = None
        raise NetworkError(
            "retriable",
            "the upload to YouTube kept failing; it will be retried",
            code="upload_failed",
            ambiguous=True,
        )

    @staticmethod
    def _expired() -> NetworkError:
        return NetworkError(
            "retriable",
            "the YouTube upload session expired; it will start over",
            code="session_expired",
            ambiguous=True,
        )

    def _put(self, pub: Publication, session: str, data: bytes, offset: int, mime: str) -> httpx.Response:
        headers = {**self._auth(pub), "Content-Type": mime}
        if offset:
            headers["Content-Range"] = f"bytes {offset}-{len(data) - 1}/{len(data)}"
        return send(
            self.client, "PUT", session, network="YouTube", write=True, headers=headers, content=data[offset:]
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
        if status.status_code != 308:  # a 5xx: retriable (the caller waits); another refusal: its reason
            raise classify(status)
        return None, next_byte(status)

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
            url = video_url(video_id)
            requested, actual = requested_privacy(pub), str(st.get("privacyStatus") or "")
            locked = actual == "private" and requested != "private"
            return PublishOutcome.published(
                video_id,
                url,
                tracking_ref=video_id,
                network_status=upload,
                warnings=(private_lock(requested, url),) if locked else (),
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
                f"YouTube rejected the video ({st.get('rejectionReason') or 'unknown'}): see YouTube Studio "
                "for the channel's notice before uploading it again",
                network_code=str(st.get("rejectionReason")),
                network_status=upload,
            )
        if upload == "deleted":
            return PublishOutcome.failed(
                "permanent",
                "the video was deleted on YouTube (by the channel or by YouTube) before it finished "
                "processing: check YouTube Studio, then create the post again if that was not intended",
                network_code="deleted",
                network_status=upload,
            )
        # `uploaded` (not processed yet), or a value YouTube may add: still processing, until the target's
        # tracking deadline (the registry's track_deadline_s)
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
        """The upload session an interrupted attempt saved (pub.resume), asked how far it got (Y13, Y-RES
        "Check the status of an upload"): complete -> its video, read like check_status; incomplete (308) ->
        absent (that session created nothing; the next attempt continues it); expired -> the listing.
        No session saved: absent, without a listing. A video is made only by the bytes' last PUT to a session
        (Y-RES: the 201 that completes the upload carries the video resource), and `upload` saves its session
        before any byte, so an attempt cut off before that save made no video. (Matched by title, the listing
        cannot tell apart two uploads of one title made in the same minutes: the Instagram loss of
        bench/crash.py, containers.py.) The listing, for an expired session only, pages the channel's uploads
        playlist (playlistItems.list, newest first, `pageToken` <- `nextPageToken`, 1 quota unit a page) back
        to the attempt's start, matching the title (a video another target holds, `pub.held_elsewhere`,
        skipped); a match is then read like check_status. A grant without youtube.readonly cannot list:
        Unverifiable, never a second upload."""
        since = pub.not_before()
        session = self._resumed_session(pub)
        if session is None:
            return None
        try:
            size = int(decode_ref(pub.resume or "").get("size") or 0)
            done, offset = self._progress(pub, session, size)
            if done is not None:
                return self.check_status(pub, done)
            if offset is not None:
                return None
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
                    video = str((sn.get("resourceId") or {}).get("videoId"))
                    if video in pub.held_elsewhere or pub.made_later(published):
                        continue  # another target's video, whatever its title
                    if str(sn.get("title") or "") == (pub.payload.title or ""):
                        return dataclasses.replace(self.check_status(pub, video), listed_at=published)
                token = body.get("nextPageToken")
                if not token:
                    return None
                params = {**params, "pageToken": str(token)}
        except NetworkError as e:
            if e.code == "insufficientPermissions":
                raise Unverifiable(
                    "the channel's authorisation lacks youtube.readonly, so socialpub cannot read its uploads: "
                    "check the channel in YouTube Studio before retrying, and reconnect it granting every "
                    "permission asked"
                ) from None
            return check_failed("YouTube", e)
        return None


def make_adapter(ctx: AdapterContext) -> YouTubeAdapter:
    """The registry's factory: the upload host for the resumable upload (the API host when none is given)."""
    return YouTubeAdapter(ctx.client, ctx.host("api"), ctx.host("upload"), media_loader=ctx.media_loader)
