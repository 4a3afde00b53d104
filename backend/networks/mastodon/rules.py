"""A Mastodon target checked at creation against its instance's limits (instance.InstanceLimits, read from the
instance): the status length (text.status_length), the media count, each media's type, size and pixel count, the
alt texts' length (limit_problems), and what no instance takes (shape_problems): a status without text or media,
a video or audio with other media (PostStatusService `images_and_video`). Each problem is a spec 7 code with the
reason to show, naming the instance and its limit.

RULES (the registry's, for every Mastodon target) checks only the shape: instances differ (forks raise
`max_characters`), so the limits are the account's instance's, applied by the registry's `target_check`
(target_problems) from the limits cached when the account connected, else upstream Mastodon's (UPSTREAM: 500
characters, 4 media, 16 MB images…); the adapter checks the instance's current ones again before uploading. The
payload carries the options the adapter sends (visibility, spoiler_text, language, alt)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from backend.networks.base import MediaRef, Payload, TargetDraft
from backend.networks.mastodon.instance import (
    MAX_CHARACTERS,
    MAX_MEDIA_ATTACHMENTS,
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
    images,
    videos,
)
from backend.schemas.text import has_visible_text

Problem = tuple[str, str, dict[str, Any]]  # (code, reason, the detail's extra fields)


def shape_problems(content: str, media: Sequence[MediaRef], options: MastodonOptions | None) -> list[Problem]:
    """What no instance takes, whatever its limits: a status without text or media, a video (or audio) with other
    media (PostStatusService `images_and_video`), more alt texts than media."""
    out: list[Problem] = []
    if not has_visible_text(content) and not media:
        out.append((CONTENT_REQUIRED, "Mastodon refuses a status without text or media", {}))
    if videos(media) and len(media) > 1:
        out.append((MEDIA_UNSUPPORTED, "Mastodon takes a video alone in a status, not with other media", {}))
    alts = (options.alt if options is not None else None) or []
    if len(alts) > len(media):
        out.append((MEDIA_UNSUPPORTED, f"{len(alts)} alt texts for {len(media)} media", {}))
    return out


def limit_problems(
    limits: InstanceLimits, content: str, media: Sequence[MediaRef], options: MastodonOptions | None
) -> list[Problem]:
    """Each of `limits.domain`'s limits this status exceeds, the reason naming the instance and its limit, the
    extra fields the limit (`limit`) and, for a media, its URL (`mediaUrl`)."""
    out: list[Problem] = []
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
                {"limit": limits.max_characters},
            )
        )
    if len(media) > limits.max_media_attachments:
        out.append(
            (
                MEDIA_UNSUPPORTED,
                f"{host} takes at most {limits.max_media_attachments} media; this post has {len(media)}",
                {"limit": limits.max_media_attachments},
            )
        )
    for m in media:
        if limits.supported_mime_types and m.mime and m.mime not in limits.supported_mime_types:
            out.append((MEDIA_UNSUPPORTED, f"{host} does not take {m.mime} files", {"mediaUrl": m.url}))
    for m in images(media):
        if m.bytes is not None and m.bytes > limits.image_size_limit:
            out.append(
                (
                    MEDIA_UNSUPPORTED,
                    f"{host} takes images up to {limits.image_size_limit / 1e6:g} MB; one is {m.bytes / 1e6:.1f} MB",
                    {"mediaUrl": m.url, "limit": limits.image_size_limit},
                )
            )
        if m.width and m.height and m.width * m.height > limits.image_matrix_limit:
            out.append(
                (
                    MEDIA_UNSUPPORTED,
                    f"{host} takes images up to {limits.image_matrix_limit:,} pixels; one is {m.width}×{m.height}",
                    {"mediaUrl": m.url, "limit": limits.image_matrix_limit},
                )
            )
    for m in videos(media):
        if m.bytes is not None and m.bytes > limits.video_size_limit:
            out.append(
                (
                    VIDEO_OUT_OF_RANGE,
                    f"{host} takes videos up to {limits.video_size_limit / 1e6:g} MB; it is {m.bytes / 1e6:.1f} MB",
                    {"mediaUrl": m.url, "rule": "max_bytes", "limit": limits.video_size_limit},
                )
            )
        if m.width and m.height and m.width * m.height > limits.video_matrix_limit:
            out.append(
                (
                    VIDEO_OUT_OF_RANGE,
                    f"{host} takes videos up to {limits.video_matrix_limit:,} pixels; it is {m.width}×{m.height}",
                    {"mediaUrl": m.url, "rule": "max_pixels", "limit": limits.video_matrix_limit},
                )
            )
        if m.frame_rate is not None and m.frame_rate > limits.video_frame_rate_limit:
            out.append(
                (
                    VIDEO_OUT_OF_RANGE,
                    f"{host} takes videos up to {limits.video_frame_rate_limit} frames a second; it has {m.frame_rate:g}",
                    {"mediaUrl": m.url, "rule": "max_fps", "limit": limits.video_frame_rate_limit},
                )
            )
    alts = (options.alt if options is not None else None) or []
    for i, alt in enumerate(alts, 1):
        if len(alt) > limits.description_limit:
            out.append(
                (
                    MEDIA_UNSUPPORTED,
                    f"{host} takes alt texts up to {limits.description_limit:,} characters; number {i} has {len(alt):,}",
                    {"limit": limits.description_limit},
                )
            )
    return out


def check(
    limits: InstanceLimits, content: str, media: Sequence[MediaRef], options: MastodonOptions | None
) -> list[tuple[str, str]]:
    """(code, reason) for each way `limits.domain` would refuse this status; empty when it would take it."""
    found = limit_problems(limits, content, media, options) + shape_problems(content, media, options)
    return [(code, reason) for code, reason, _extra in found]


PLATFORM = "mastodon"
UPSTREAM = InstanceLimits(domain="Mastodon", version="")  # upstream Mastodon's configuration


def validate(content: str, media: Sequence[MediaRef], options: MastodonOptions | None) -> list[str]:
    """The network-level rule (every Mastodon target): only what no instance takes. The limits (length, media
    count and sizes) are each instance's: the check against the account (target_problems) applies them."""
    return list(dict.fromkeys(code for code, _reason, _extra in shape_problems(content, media, options)))


def explain(code: str, content: str, media: Sequence[MediaRef]) -> str | None:
    reasons = [reason for c, reason, _extra in shape_problems(content, media, None) if c == code]
    return "; ".join(reasons) if reasons else None


def target_problems(adapter: Any, token: str, draft: TargetDraft) -> list[Problem]:
    """The registry's `target_check`: the post against the account's instance's limits as last read (cached at
    connect in `network_instance`: no call to the instance here), else upstream Mastodon's (500 characters, 4
    media…), said so. The refusal names the instance and its limit (`instance`, `limit`). The publication checks
    the instance's current limits again before uploading (adapter.refused_by_instance)."""
    host = draft.account.partition("@")[2] or "its instance"
    if draft.server_limits is not None:
        limits = InstanceLimits.from_cache(draft.server_limits)
        known = ""
    else:
        limits = replace(UPSTREAM, domain=host)
        known = f" (upstream Mastodon's limit: {host}'s own are not known yet)"
    options = draft.options if isinstance(draft.options, MastodonOptions) else None
    return [
        (code, reason + known, {"instance": host, **extra})
        for code, reason, extra in limit_problems(limits, draft.content, draft.media, options)
    ]


def build(content: str, media: Sequence[MediaRef], options: MastodonOptions | None) -> Payload:
    opts: dict[str, Any] = {}
    if options is not None:
        for key in ("visibility", "spoiler_text", "language"):
            value = getattr(options, key)
            if value:
                opts[key] = value
    chosen = tuple(media)  # as many as the instance takes: the check at creation applied its limit
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
)
