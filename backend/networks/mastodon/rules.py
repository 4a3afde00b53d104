"""A Mastodon target checked at creation against its instance's limits (instance.InstanceLimits, read from the
instance): the status length (text.status_length), the media count, one video or audio alone (PostStatusService
`images_and_video`), each media's type, size and pixel count, the alt texts' length. Each problem is a spec 7 code
with the reason to show, naming the instance's limit.

RULES (the registry's) checks a target against upstream Mastodon's limits (UPSTREAM: 500 characters, 4 media,
16 MB images…), what the posts API knows of every instance before it asks one; the payload carries the options
the adapter sends (visibility, spoiler_text, language, alt)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from backend.networks.base import MediaRef, Payload
from backend.networks.mastodon.instance import (
    MAX_CHARACTERS,
    MAX_MEDIA_ATTACHMENTS,
    VIDEO_FRAME_RATE_LIMIT,
    VIDEO_SIZE_LIMIT,
    InstanceLimits,
)
from backend.networks.mastodon.options import MastodonOptions
from backend.networks.mastodon.text import status_length
from backend.networks.rules.common import (
    CONTENT_REQUIRED,
    CONTENT_TOO_LONG,
    MEDIA_UNSUPPORTED,
    VIDEO_OUT_OF_RANGE,
    NetworkRules,
    VideoLimits,
    images,
    videos,
)
from backend.schemas.text import has_visible_text


def check(
    limits: InstanceLimits, content: str, media: Sequence[MediaRef], options: MastodonOptions | None
) -> list[tuple[str, str]]:
    """(code, reason) for each way `limits.domain` would refuse this status; empty when it would take it."""
    out: list[tuple[str, str]] = []
    host = limits.domain
    spoiler = (options.spoiler_text if options is not None else None) or ""
    length = status_length(content, spoiler, limits.characters_reserved_per_url)
    if length > limits.max_characters:
        cw = " with its content warning" if spoiler else ""
        out.append(
            (
                CONTENT_TOO_LONG,
                f"{host} takes at most {limits.max_characters:,} characters; the text{cw} counts {length:,} "
                f"(each link counts {limits.characters_reserved_per_url})",
            )
        )
    if not has_visible_text(content) and not media:
        out.append((CONTENT_REQUIRED, f"{host} refuses a status without text or media"))
    vids, imgs = videos(media), images(media)
    if len(media) > limits.max_media_attachments:
        out.append(
            (
                MEDIA_UNSUPPORTED,
                f"{host} takes at most {limits.max_media_attachments} media; this post has {len(media)}",
            )
        )
    if vids and len(media) > 1:
        out.append((MEDIA_UNSUPPORTED, f"{host} takes a video alone in a status, not with other media"))
    for m in media:
        if limits.supported_mime_types and m.mime and m.mime not in limits.supported_mime_types:
            out.append((MEDIA_UNSUPPORTED, f"{host} does not take {m.mime} files"))
    for m in imgs:
        if m.bytes is not None and m.bytes > limits.image_size_limit:
            out.append(
                (
                    MEDIA_UNSUPPORTED,
                    f"{host} takes images up to {limits.image_size_limit / 1e6:g} MB; one is {m.bytes / 1e6:.1f} MB",
                )
            )
        if m.width and m.height and m.width * m.height > limits.image_matrix_limit:
            out.append(
                (
                    MEDIA_UNSUPPORTED,
                    f"{host} takes images up to {limits.image_matrix_limit:,} pixels; one is {m.width}×{m.height}",
                )
            )
    for m in vids:
        if m.bytes is not None and m.bytes > limits.video_size_limit:
            out.append(
                (
                    VIDEO_OUT_OF_RANGE,
                    f"{host} takes videos up to {limits.video_size_limit / 1e6:g} MB; it is {m.bytes / 1e6:.1f} MB",
                )
            )
        if m.width and m.height and m.width * m.height > limits.video_matrix_limit:
            out.append(
                (
                    VIDEO_OUT_OF_RANGE,
                    f"{host} takes videos up to {limits.video_matrix_limit:,} pixels; it is {m.width}×{m.height}",
                )
            )
        if m.frame_rate is not None and m.frame_rate > limits.video_frame_rate_limit:
            out.append(
                (
                    VIDEO_OUT_OF_RANGE,
                    f"{host} takes videos up to {limits.video_frame_rate_limit} frames a second; it has {m.frame_rate:g}",
                )
            )
    alts = (options.alt if options is not None else None) or []
    if len(alts) > len(media):
        out.append((MEDIA_UNSUPPORTED, f"{len(alts)} alt texts for {len(media)} media"))
    for i, alt in enumerate(alts, 1):
        if len(alt) > limits.description_limit:
            out.append(
                (
                    MEDIA_UNSUPPORTED,
                    f"{host} takes alt texts up to {limits.description_limit:,} characters; number {i} has {len(alt):,}",
                )
            )
    return out


PLATFORM = "mastodon"
UPSTREAM = InstanceLimits(domain="Mastodon", version="")  # upstream Mastodon's configuration


def validate(content: str, media: Sequence[MediaRef], options: MastodonOptions | None) -> list[str]:
    return list(dict.fromkeys(code for code, _reason in check(UPSTREAM, content, media, options)))


def explain(code: str, content: str, media: Sequence[MediaRef]) -> str | None:
    """The reason of a code (the options are not given here: a text too long only with its content warning is
    said so)."""
    reasons = [reason for c, reason in check(UPSTREAM, content, media, None) if c == code]
    if reasons:
        return "; ".join(reasons)
    if code == CONTENT_TOO_LONG:
        return (
            f"Mastodon takes at most {UPSTREAM.max_characters:,} characters, the content warning (spoilerText) "
            f"counted with the text; the text alone counts {status_length(content):,}"
        )
    return None


def build(content: str, media: Sequence[MediaRef], options: MastodonOptions | None) -> Payload:
    opts: dict[str, Any] = {}
    if options is not None:
        for key in ("visibility", "spoiler_text", "language"):
            value = getattr(options, key)
            if value:
                opts[key] = value
    chosen = tuple(media[:MAX_MEDIA_ATTACHMENTS])
    if chosen:
        given = list(options.alt or []) if options is not None else []
        opts["alt"] = [given[i] if i < len(given) else "" for i in range(len(chosen))]
    vids = videos(chosen)
    if vids:
        return Payload(PLATFORM, "video", content, None, (vids[0],), opts)
    if chosen:
        return Payload(PLATFORM, "image" if len(chosen) == 1 else "carousel", content, None, chosen, opts)
    return Payload(PLATFORM, "text", content, None, (), opts)


def _length(text: str) -> int:
    return status_length(text)


RULES = NetworkRules(
    PLATFORM,
    MAX_CHARACTERS,
    0,
    MAX_MEDIA_ATTACHMENTS,
    (2, MAX_MEDIA_ATTACHMENTS),
    validate,
    build,
    text_length=_length,
    explain=explain,
    # the bounds a video's probe can show (its pixel count is rules.check's: image_matrix_limit has no side bound)
    video=VideoLimits(max_bytes=VIDEO_SIZE_LIMIT, max_fps=float(VIDEO_FRAME_RATE_LIMIT)),
)
