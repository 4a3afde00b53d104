"""Bluesky: text ≤ 300 graphemes and ≤ 3000 UTF-8 bytes (app.bsky.feed.post), up to 4 images (each with its alt
text) or one MP4 video; a post needs a text or a media (the PDS itself takes an empty post: socialpub refuses it).
Facets and the link card are the adapter's (they need the network: mentions resolve to DIDs, the card's page is
fetched)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from backend.networks.base import MediaRef, Payload, TargetDraft
from backend.networks.bluesky import NETWORK
from backend.networks.bluesky.options import BlueskyOptions
from backend.networks.bluesky.text import MAX_BYTES, MAX_GRAPHEMES
from backend.networks.rules.common import (
    CONTENT_REQUIRED,
    CONTENT_TOO_LONG,
    MEDIA_UNSUPPORTED,
    VIDEO_OUT_OF_RANGE,
    NetworkRules,
    VideoLimits,
    check_videos,
    images,
    videos,
)
from backend.schemas.text import graphemes, has_visible_text, utf8_len

PLATFORM = NETWORK.name
MAX_IMAGES = 4  # app.bsky.embed.images: "maxLength": 4
VIDEO_MIMES = frozenset({"video/mp4"})  # app.bsky.embed.video: accept ["video/mp4"]
# bsky.social's PDSes take blobs up to 50 MB (docs.bsky.app rate-limits page); a self-hosted PDS says its own
# (describeServer.blobUploadLimit), checked by the adapter before the upload. 3 minutes: belief (third parties).
VIDEO = VideoLimits(max_s=180.0, max_bytes=52_428_800)


def _video_mime_ok(m: MediaRef) -> bool:
    return m.mime is None or m.mime in VIDEO_MIMES


def validate(content: str, media: Sequence[MediaRef], options: BlueskyOptions | None) -> list[str]:
    codes: list[str] = []
    if graphemes(content) > MAX_GRAPHEMES or utf8_len(content) > MAX_BYTES:
        codes.append(CONTENT_TOO_LONG)
    if not has_visible_text(content) and not media:
        codes.append(CONTENT_REQUIRED)
    vids, imgs = videos(media), images(media)
    if (vids and imgs) or len(vids) > 1 or len(imgs) > MAX_IMAGES or not all(map(_video_mime_ok, vids)):
        codes.append(MEDIA_UNSUPPORTED)
    return codes + check_videos(vids[:1], VIDEO)


def explain(code: str, content: str, media: Sequence[MediaRef]) -> str | None:
    if code == CONTENT_TOO_LONG:
        return (
            f"Bluesky takes at most {MAX_GRAPHEMES} characters (graphemes) and {MAX_BYTES:,} bytes; the text has "
            f"{graphemes(content):,} characters and {utf8_len(content):,} bytes"
        )
    if code == MEDIA_UNSUPPORTED:
        vids, imgs = videos(media), images(media)
        if vids and imgs:
            return "a Bluesky post holds images or one video, not both: post them separately"
        if len(vids) > 1:
            return "a Bluesky post holds one video"
        if len(imgs) > MAX_IMAGES:
            return f"a Bluesky post holds at most {MAX_IMAGES} images; this one has {len(imgs)}"
        return "Bluesky takes MP4 videos only (video/mp4): convert the video"
    return None


Problem = tuple[str, str, dict[str, Any]]  # (code, reason, the detail's extra fields)
# how old the account's server's facts may be at a post's creation (the adapter keeps what it read)
SERVER_FACTS_S = 3600.0


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n:,} bytes"


def target_problems(adapter: Any, token: str, draft: TargetDraft) -> list[Problem]:
    """The registry's `target_check`: a video goes to the account's own PDS as one blob (the "simple method" of
    docs.bsky.app/docs/tutorials/video), so the PDS must take a file that large — its `describeServer`
    `blobUploadLimit` (5 MiB on a reference PDS that does not say), read from the account's PDS (named by its DID
    document) and kept an hour by the adapter. A video over it is refused now, naming the server and its limit,
    rather than failing at publication. A video of unknown size (a remote URL, not probed for its bytes) is
    checked at publication. The PDS not answering refuses nothing (the publication checks again)."""
    vids = videos(draft.media)
    if len(vids) != 1 or len(draft.media) != 1 or vids[0].bytes is None:
        return []  # no video, or a shape the network's rules refuse already, or a size not known yet
    video = vids[0]
    pds = adapter.pds(draft.account)
    limit = adapter.blob_limit(pds, SERVER_FACTS_S)
    if video.bytes is None or video.bytes <= limit:
        return []
    host = urlsplit(pds).netloc or pds
    return [
        (
            VIDEO_OUT_OF_RANGE,
            f"this account's Bluesky server ({host}) takes files up to {_size(limit)} and the video is "
            f"{_size(video.bytes)}: video of this size is not available on this server (a smaller MP4 "
            "is, or an account on a server with a larger limit)",
            {"mediaUrl": video.url, "rule": "max_bytes", "limit": limit, "server": host},
        )
    ]


def build(content: str, media: Sequence[MediaRef], options: BlueskyOptions | None) -> Payload:
    vids, imgs = videos(media), images(media)
    opts: dict[str, Any] = {}
    if options is not None and options.langs:
        opts["langs"] = list(options.langs)
    if vids:
        return Payload(PLATFORM, "video", content, None, (vids[0],), opts)
    if imgs:
        chosen = tuple(imgs[:MAX_IMAGES])
        given = list(options.alt or []) if options is not None else []
        opts["alt"] = [given[i] if i < len(given) else "" for i in range(len(chosen))]
        return Payload(PLATFORM, "image" if len(chosen) == 1 else "carousel", content, None, chosen, opts)
    return Payload(PLATFORM, "text", content, None, (), opts)


RULES = NetworkRules(
    PLATFORM,
    MAX_GRAPHEMES,
    0,
    MAX_IMAGES,
    (2, MAX_IMAGES),
    validate,
    build,
    text_length=graphemes,
    explain=explain,
    video=VIDEO,
)
