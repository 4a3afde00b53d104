"""Shared pieces of the per-network rules: the NetworkRules record and small pure helpers. Each network's rules
are its package's rules.py; `options` there is the network's own options model (`options.<network>` of POST
/v1/posts, parsed), None when the post gives none."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from backend.networks.base import MediaRef, Payload

MAX_CONTENT = 63_206  # every target (spec 8)
CAROUSEL_MIN = 2
CAROUSEL_MAX = 10

# per-target codes of spec 7 produced by the rules (channel/duplicate/invalid_target/scheduled/
# media_unreadable are the posts service's business)
CONTENT_TOO_LONG = "content_too_long_for_target"
MEDIA_REQUIRED = "media_required_for_target"
VIDEO_REQUIRED = "video_required_for_target"
TITLE_TOO_LONG = "title_too_long_for_target"
# extensions (spec 7 says the complete list is not shown): refused at the network for sure
CONTENT_REQUIRED = "content_required_for_target"  # neither text nor media: nothing to post
MEDIA_UNSUPPORTED = "media_unsupported_for_target"  # a format the network refuses (e.g. PNG on TikTok)

VIDEO_OUT_OF_RANGE = (
    "video_out_of_range_for_target"  # a probed video breaks the network's rules (VideoLimits)
)


@dataclass(frozen=True)
class VideoLimits:
    """What a network accepts of a video (its vendor's page, cited in docs/networks.md "Video rules"). A bound left
    None is not checked; a value the probe could not read (a file ingested before probing, a remote URL) is not
    checked either: the network decides then."""

    min_s: float | None = None
    max_s: float | None = None
    max_bytes: int | None = None
    min_side: int | None = None
    max_side: int | None = None
    max_width: int | None = None
    min_aspect: float | None = None  # width / height
    max_aspect: float | None = None
    min_fps: float | None = None
    max_fps: float | None = None
    codecs: frozenset[str] | None = None  # libavcodec's names: h264, hevc, vp8, vp9, av1…

    def problems(self, m: MediaRef) -> list[tuple[str, str]]:
        """(rule, sentence) for each bound `m` breaks: rule ∈ duration, size, dimensions, aspect, frame_rate,
        codec."""
        out: list[tuple[str, str]] = []
        d = m.duration_s
        if d is not None and self.min_s is not None and d < self.min_s:
            out.append(("duration", f"the video lasts {d:g} s, at least {self.min_s:g} s are needed"))
        if d is not None and self.max_s is not None and d > self.max_s:
            out.append(("duration", f"the video lasts {d:g} s, at most {_span(self.max_s)} are taken"))
        if m.bytes is not None and self.max_bytes is not None and m.bytes > self.max_bytes:
            out.append(("size", f"the file is {m.bytes / 1e6:.1f} MB, at most {self.max_bytes / 1e6:g} MB"))
        w, h = m.width, m.height
        if w and h:
            low, high = min(w, h), max(w, h)
            if (self.min_side is not None and low < self.min_side) or (
                self.max_side is not None and high > self.max_side
            ):
                out.append(
                    (
                        "dimensions",
                        f"the video is {w}×{h}: each side {self.min_side or 1}–{self.max_side or '…'} px",
                    )
                )
            elif self.max_width is not None and w > self.max_width:
                out.append(("dimensions", f"the video is {w}×{h}: at most {self.max_width} px wide"))
            aspect = w / h
            if (self.min_aspect is not None and aspect < self.min_aspect - 1e-3) or (
                self.max_aspect is not None and aspect > self.max_aspect + 1e-3
            ):
                out.append(
                    (
                        "aspect",
                        f"the video's aspect ratio is {_ratio(aspect)} ({w}×{h}): from {_ratio(self.min_aspect)} "
                        f"to {_ratio(self.max_aspect)}",
                    )
                )
        fps = m.frame_rate
        if fps is not None and (
            (self.min_fps is not None and fps < self.min_fps - 0.01)
            or (self.max_fps is not None and fps > self.max_fps + 0.01)
        ):
            out.append(
                ("frame_rate", f"the video has {fps:g} frames a second: {self.min_fps:g}–{self.max_fps:g}")
            )
        if m.codec and self.codecs is not None and m.codec not in self.codecs:
            out.append(("codec", f"the video is {m.codec}: {', '.join(sorted(self.codecs))} only"))
        return out


def _span(seconds: float) -> str:
    return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"


def _ratio(aspect: float | None) -> str:
    if aspect is None:
        return "any"
    return f"{aspect:.2f}:1" if aspect >= 1 else f"1:{1 / aspect:.2f}"


def check_videos(media: Sequence[MediaRef], limits: VideoLimits) -> list[str]:
    """[VIDEO_OUT_OF_RANGE] when one of the videos the network receives breaks `limits`."""
    return [VIDEO_OUT_OF_RANGE] if any(limits.problems(m) for m in media if m.kind == "video") else []


Validate = Callable[[str, Sequence[MediaRef], Any], list[str]]
Build = Callable[[str, Sequence[MediaRef], Any], Payload]
# (a per-target code, the text, the media) -> the network's own words for it, or None for the common ones
Explain = Callable[[str, str, Sequence[MediaRef]], str | None]
# (the post's media, whether the network is configured to take media by URL: SOCIALPUB_MEDIA_BY_URL) -> whether the
# live network fetches the media from its URL instead of receiving the bytes
PullsMedia = Callable[[Sequence[MediaRef], bool], bool]


def never_pulls(media: Sequence[MediaRef], by_url: bool) -> bool:
    """The bytes are uploaded (LinkedIn upload URLs, YouTube resumable upload)."""
    return False


def pulls_when_configured(media: Sequence[MediaRef], by_url: bool) -> bool:
    """Bytes by default, the URL when configured (Facebook: multipart source, or url / file_url)."""
    return bool(media) and by_url


def no_forced_options(media: Sequence[MediaRef]) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class NetworkRules:
    platform: str
    max_text: int  # counted by text_length (TikTok: UTF-16 units)
    min_media: int
    max_media: int
    carousel: tuple[int, int] | None  # images per carousel, None when the network takes one media
    validate: Validate
    build: Build
    # whether the live network fetches the post's media from its URL (Instagram containers, TikTok photos, and
    # Facebook / TikTok videos when configured) instead of receiving the bytes: then the URL must be reachable
    # from the internet. A pure function: the caller says whether the network is configured to take URLs.
    pulls_media: PullsMedia = never_pulls
    # why the network fetches the media by itself, for the refusal of a media it cannot reach
    pull_reason: str = ""
    # the text's length as the network counts it
    text_length: Callable[[str], int] = len
    # the network's own words for a per-target code (the posts API's message), else the common ones
    explain: Explain | None = None
    # options stored with the post whatever was asked (YouTube: a generated video declares synthetic media)
    forced_options: Callable[[Sequence[MediaRef]], dict[str, Any]] = field(default=no_forced_options)
    # the network's video rules, checked per target when a post is created (VIDEO_OUT_OF_RANGE)
    video: VideoLimits | None = None

    def check(self, content: str, media: Sequence[MediaRef], options: Any = None) -> list[str]:
        return self.validate(content, media, options)

    def payload(self, content: str, media: Sequence[MediaRef], options: Any = None) -> Payload:
        return self.build(content, media, options)

    def message(self, code: str, content: str, media: Sequence[MediaRef]) -> str:
        """The posts API's message for a per-target code of this network."""
        own = self.explain(code, content, media) if self.explain is not None else None
        if own is not None:
            return own
        name = self.platform
        if code == CONTENT_TOO_LONG:
            n = self.text_length(content)
            return f"{name} accepts at most {self.max_text:,} characters; the text has {n:,}"
        if code == MEDIA_REQUIRED:
            return f"{name} needs at least one image or video in mediaUrls"
        if code == VIDEO_REQUIRED:
            return f"{name} publishes videos only: put a video in mediaUrls"
        if code == TITLE_TOO_LONG:
            return f"the {name} title is too long"
        if code == CONTENT_REQUIRED:
            if content.strip():
                return (
                    f"nothing to publish on {name}: the text shows nothing (only spaces or invisible characters "
                    "such as U+200B): give a text or a media"
                )
            return f"nothing to publish on {name}: give a text or a media"
        if code == MEDIA_UNSUPPORTED:
            kinds = ", ".join(sorted({m.mime or m.kind for m in media}))
            return f"{name} does not accept this media format ({kinds}): host the file through POST /v1/media"
        return f"{name} cannot receive this post ({code})"


def images(media: Sequence[MediaRef]) -> list[MediaRef]:
    return [m for m in media if m.kind == "image"]


def videos(media: Sequence[MediaRef]) -> list[MediaRef]:
    return [m for m in media if m.kind == "video"]


def visual_media(media: Sequence[MediaRef]) -> tuple[str, tuple[MediaRef, ...]]:
    """The common choice for tiktok and linkedin: a video wins (the first one, alone: videos cannot be
    mixed into a carousel there); otherwise 1 image, or 2-10 images as a carousel."""
    vids = videos(media)
    if vids:
        return "video", (vids[0],)
    imgs = images(media)[:CAROUSEL_MAX]
    if not imgs:
        return "text", ()
    if len(imgs) == 1:
        return "image", (imgs[0],)
    return "carousel", tuple(imgs)
