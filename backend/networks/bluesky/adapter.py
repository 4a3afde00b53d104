"""Bluesky adapter: one post = one `app.bsky.feed.post` record in the account's repository, on its PDS (from its
DID document). Never publish twice: the record key is chosen before the call — a TID derived from the target
(tid.py) — and written with `com.atproto.repo.putRecord` and `swapRecord: null` (create only if absent): a retry
meets its own record (the same record: a no-op 200; another at that key: 400 `InvalidSwap`, then read with
getRecord), never makes a second one. Reconciliation is `com.atproto.repo.getRecord` at that key: absence is
conclusive at once (the PDS reads its own writes). Never sends `validate: false`.

Images: each fetched, recompressed under the image blob limit, uploaded with `uploadBlob`, embedded with its alt
text and aspect ratio. A video (MP4) is uploaded to the PDS as a blob when it is within the PDS's
`describeServer.blobUploadLimit` (the "simple method" of docs.bsky.app/docs/tutorials/video), refused otherwise
with the limit in the reason. A text post whose first link has no media gets a link card from the page."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from backend import clock
from backend.networks.base import (
    MediaRef,
    NetworkError,
    Publication,
    PublishOutcome,
    check_failed,
    never_ready,
)
from backend.networks.bluesky import NETWORK, card, identity, text, tid
from backend.networks.bluesky.media import IMAGE_MAX_BYTES, THUMB_MAX_BYTES, fit_image
from backend.networks.bluesky.xrpc import auth, classify, error_of
from backend.networks.factory import AdapterContext
from backend.networks.http import json_or_none, send
from backend.networks.media_loader import MediaLoader

PLATFORM = NETWORK.name
COLLECTION = "app.bsky.feed.post"
# the reference PDS's default blob limit (@atproto/pds config: 5 MiB) when describeServer does not say
DEFAULT_BLOB_LIMIT = 5 * 1024 * 1024
PDS_CACHE_S = 300.0
# how long a PDS's describeServer facts (its blobUploadLimit) serve the checks at a post's creation; the
# publication reads them again before uploading
SERVER_FACTS_S = 3600.0

PageLoader = Callable[[str, int], bytes]


def post_url(did: str, rkey: str) -> str:
    return f"https://bsky.app/profile/{did}/post/{rkey}"


def at_uri(did: str, rkey: str) -> str:
    return f"at://{did}/{COLLECTION}/{rkey}"


def rkey_of(pub: Publication) -> str:
    return tid.from_token(pub.idempotency_token)


class BlueskyAdapter:
    platform = PLATFORM

    def __init__(
        self,
        client: httpx.Client,
        hosts: Mapping[str, str],
        media_loader: MediaLoader | None = None,
        page_loader: PageLoader | None = None,
    ) -> None:
        self.client = client
        self.hosts = dict(hosts)
        self.media_loader = media_loader
        self.page_loader = page_loader
        self._pds: dict[str, tuple[float, str]] = {}
        self._blob_limits: dict[str, tuple[float, int]] = {}
        self._lock = threading.Lock()

    # --- where the account lives -------------------------------------------------------------------------
    def pds(self, did: str) -> str:
        with self._lock:
            cached = self._pds.get(did)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        found = identity.pds_for(self.client, self.hosts, did)
        with self._lock:
            self._pds[did] = (time.monotonic() + PDS_CACHE_S, found)
        return found

    def _xrpc(self, pds: str, method: str, nsid: str, token: str | None, *, write: bool = False, **kw: Any):  # type: ignore[no-untyped-def]  # answers a dict or raw bytes by the call's kind: each caller knows which
        headers = dict(kw.pop("headers", None) or {})
        if token:
            headers.update(auth(token))
        return send(
            self.client, method, f"{pds}/xrpc/{nsid}", network=PLATFORM, write=write, headers=headers, **kw
        )

    # --- the record --------------------------------------------------------------------------------------
    def _resolver(self, pds: str) -> Callable[[str], str | None]:
        def resolve(handle: str) -> str | None:
            try:
                return identity.resolve_handle(self.client, pds, handle)
            except NetworkError:
                return None  # an unresolvable mention is left plain (an empty DID would be refused)

        return resolve

    def _blob(self, pds: str, token: str, data: bytes, mime: str) -> dict[str, Any]:
        resp = self._xrpc(
            pds,
            "POST",
            "com.atproto.repo.uploadBlob",
            token,
            write=True,
            content=data,
            headers={"Content-Type": mime},
        )
        body = json_or_none(resp)
        if resp.status_code != 200 or not isinstance(body, dict) or not isinstance(body.get("blob"), dict):
            raise classify(resp)
        blob: dict[str, Any] = body["blob"]
        return blob

    def _load(self, media: MediaRef) -> bytes:
        if self.media_loader is None:
            raise NetworkError(
                "permanent", "no media loader: cannot upload media to Bluesky", code="no_loader"
            )
        return self.media_loader(media)

    def _images(self, pds: str, token: str, pub: Publication) -> dict[str, Any]:
        alts = list(pub.payload.options.get("alt") or [])
        out = []
        for i, m in enumerate(pub.payload.media):
            try:
                fitted = fit_image(self._load(m), IMAGE_MAX_BYTES, m.mime)
            except ValueError as exc:
                raise NetworkError(
                    "permanent", f"image {i + 1} cannot be sent to Bluesky: {exc}", code="image_unfit"
                ) from None
            image: dict[str, Any] = {
                "image": self._blob(pds, token, fitted.data, fitted.mime),
                "alt": alts[i] if i < len(alts) else "",
            }
            if fitted.width and fitted.height:
                image["aspectRatio"] = {"width": fitted.width, "height": fitted.height}
            out.append(image)
        return {"$type": "app.bsky.embed.images", "images": out}

    def blob_limit(self, pds: str, max_age_s: float = 0.0) -> int:
        """The largest blob `pds` takes (`describeServer.blobUploadLimit`; the reference PDS's 5 MiB when it does
        not say), as read less than `max_age_s` ago (0: read now). Each read is kept for the checks at creation."""
        with self._lock:
            cached = self._blob_limits.get(pds)
        if cached is not None and max_age_s > 0 and time.monotonic() - cached[0] < max_age_s:
            return cached[1]
        resp = self._xrpc(pds, "GET", "com.atproto.server.describeServer", None)
        body = json_or_none(resp)
        if resp.status_code != 200 or not isinstance(body, dict):
            raise classify(resp)
        found = body.get("blobUploadLimit")
        limit = (
            found
            if isinstance(found, int) and not isinstance(found, bool) and found > 0
            else DEFAULT_BLOB_LIMIT
        )
        with self._lock:
            self._blob_limits[pds] = (time.monotonic(), limit)
        return limit

    def _video(self, pds: str, token: str, pub: Publication) -> dict[str, Any]:
        m = pub.payload.media[0]
        if m.mime not in (None, "video/mp4"):
            raise NetworkError("permanent", "Bluesky takes MP4 videos only", code="video_format")
        data = self._load(m)
        limit = self.blob_limit(pds)
        if len(data) > limit:
            raise NetworkError(
                "permanent",
                f"this Bluesky server takes files up to {limit / 1e6:.1f} MB and the video is "
                f"{len(data) / 1e6:.1f} MB: video of this size is not available on this server",
                code="video_too_large_for_pds",
            )
        embed: dict[str, Any] = {
            "$type": "app.bsky.embed.video",
            "video": self._blob(pds, token, data, "video/mp4"),
            "alt": "",
        }
        if m.width and m.height:
            embed["aspectRatio"] = {"width": m.width, "height": m.height}
        return embed

    def _card(self, pds: str, token: str, uri: str) -> dict[str, Any] | None:
        """The link card of `uri`, None when its page cannot be fetched (no card rather than a wrong one)."""
        if self.page_loader is None:
            return None
        try:
            found = card.parse(uri, self.page_loader(uri, card.PAGE_MAX_BYTES))
        except NetworkError:
            return None
        external: dict[str, Any] = {"uri": uri, "title": found.title, "description": found.description}
        if found.image:
            try:
                fitted = fit_image(self.page_loader(found.image, 10 * THUMB_MAX_BYTES), THUMB_MAX_BYTES)
                external["thumb"] = self._blob(pds, token, fitted.data, fitted.mime)
            except (NetworkError, ValueError):
                pass  # a card without its picture
        return {"$type": "app.bsky.embed.external", "external": external}

    def record(self, pds: str, token: str, pub: Publication) -> dict[str, Any]:
        p = pub.payload
        spans = text.detect(p.text)
        rec: dict[str, Any] = {
            "$type": COLLECTION,
            "text": p.text,
            "createdAt": clock.iso(clock.now()),
        }
        found = text.facets(spans, self._resolver(pds))
        if found:
            rec["facets"] = found
        if p.options.get("langs"):
            rec["langs"] = list(p.options["langs"])
        if p.kind == "video":
            rec["embed"] = self._video(pds, token, pub)
        elif p.kind in ("image", "carousel"):
            rec["embed"] = self._images(pds, token, pub)
        else:
            link = text.first_link(spans)
            embed = self._card(pds, token, link) if link else None
            if embed is not None:
                rec["embed"] = embed
        return rec

    # --- the protocol ------------------------------------------------------------------------------------
    def publish(self, pub: Publication) -> PublishOutcome:
        did, token = pub.account.external_account_id, pub.account.access_token
        rkey = rkey_of(pub)
        try:
            pds = self.pds(did)
            rec = self.record(pds, token, pub)
            resp = self._xrpc(
                pds,
                "POST",
                "com.atproto.repo.putRecord",
                token,
                write=True,
                json={"repo": did, "collection": COLLECTION, "rkey": rkey, "record": rec, "swapRecord": None},
            )
            if resp.status_code == 200:
                return self._published(did, rkey, resp)
            name, _message = error_of(resp)
            if name == "InvalidSwap":  # a record is at our key already: an earlier attempt's
                found = self._get(pds, did, rkey, pub.payload.text)
                if found is not None:
                    return found
            err = classify(resp)
            if resp.status_code >= 500:  # the write may have been made: look before writing again
                err.ambiguous = True
            raise err
        except NetworkError as exc:
            return exc.outcome()

    def _published(self, did: str, rkey: str, resp: httpx.Response) -> PublishOutcome:
        body = json_or_none(resp)
        uri = body.get("uri") if isinstance(body, dict) else None
        return PublishOutcome.published(rkey, post_url(did, rkey), tracking_ref=str(uri or at_uri(did, rkey)))

    def _get(self, pds: str, did: str, rkey: str, text: str | None = None) -> PublishOutcome | None:
        """The record at our key (None: absent). Another post's text there (two targets whose keys met) is a
        permanent failure, never taken for ours."""
        resp = self._xrpc(
            pds,
            "GET",
            "com.atproto.repo.getRecord",
            None,
            params={"repo": did, "collection": COLLECTION, "rkey": rkey},
        )
        if resp.status_code == 200:
            body = json_or_none(resp)
            value = body.get("value") if isinstance(body, dict) else None
            held = value.get("text") if isinstance(value, dict) else None
            if text is not None and held is not None and held != text:
                raise NetworkError(
                    "permanent",
                    f"the record key {rkey} of this post holds another post of the account: nothing was published",
                    code="rkey_taken",
                )
            return self._published(did, rkey, resp)
        name, _message = error_of(resp)
        if name == "RecordNotFound":
            return None
        raise classify(resp)

    def check_status(self, pub: Publication, ref: str) -> PublishOutcome:
        found = self.find_existing(pub)
        if found is None:
            return PublishOutcome.failed("retriable", "the Bluesky record is not there", ambiguous=True)
        return found

    def complete(self, pub: Publication, ref: str) -> PublishOutcome:
        return never_ready(PLATFORM)

    def find_existing(self, pub: Publication) -> PublishOutcome | None:
        did = pub.account.external_account_id
        try:
            return self._get(self.pds(did), did, rkey_of(pub), pub.payload.text)
        except NetworkError as exc:
            if exc.code == "rkey_taken":
                return exc.outcome()
            return check_failed(PLATFORM, exc)


def make_adapter(ctx: AdapterContext) -> BlueskyAdapter:
    return BlueskyAdapter(ctx.client, ctx.hosts, ctx.media_loader, ctx.page_loader)
