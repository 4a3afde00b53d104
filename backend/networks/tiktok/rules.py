"""TikTok: a video (first video wins) or a photo post of 1-10 images whose title is the text (<= 90).

Limits are counted in UTF-16 code units, as TikTok counts them. postMode DIRECT_POST (default) or
MEDIA_UPLOAD; in MEDIA_UPLOAD privacy and interaction settings are dropped, and a draft video carries
no text (the creator types it in the app).
"""

from __future__ import annotations

from collections.abc import Sequence

from backend.networks.base import MediaRef, Payload
from backend.networks.rules.common import (
    CAROUSEL_MAX,
    CAROUSEL_MIN,
    CONTENT_TOO_LONG,
    MEDIA_REQUIRED,
    MEDIA_UNSUPPORTED,
    TITLE_TOO_LONG,
    NetworkRules,
    VideoLimits,
    check_videos,
    images,
    videos,
)
from backend.networks.tiktok import NETWORK
from backend.networks.tiktok.options import TikTokOptions
from backend.schemas.text import utf16_len

PLATFORM = NETWORK.name
_LIMITS = NETWORK.limits
assert _LIMITS.photo_title_max is not None
MAX_TEXT = _LIMITS.max_text
PHOTO_TITLE_MAX = _LIMITS.photo_title_max
PHOTO_DESCRIPTION_MAX = 4000
PHOTO_MAX_IMAGES = 35  # dedicated endpoint; posts carry at most 10
PHOTO_MIMES = frozenset({"image/jpeg", "image/webp"})  # PNG is refused by TikTok
VIDEO_MIMES = frozenset({"video/mp4", "video/quicktime", "video/webm"})
# developers.tiktok.com/doc/content-posting-api-media-transfer-guide (docs/networks.md, "Video rules")
VIDEO = VideoLimits(
    max_s=600,
    max_bytes=4 * 1024**3,
    min_side=360,
    max_side=4096,
    min_fps=23,
    max_fps=60,
    codecs=frozenset({"h264", "hevc", "vp8", "vp9"}),
)
PUBLIC_ACCOUNT_PRIVACY = ("PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY")
PRIVATE_ACCOUNT_PRIVACY = ("FOLLOWER_OF_CREATOR", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY")


def _mime_ok(m: MediaRef) -> bool:
    if not m.mime:
        return True
    allowed = VIDEO_MIMES if m.kind == "video" else PHOTO_MIMES
    return m.mime.split(";")[0].strip().lower() in allowed


def validate(content: str, media: Sequence[MediaRef], options: TikTokOptions | None) -> list[str]:
    codes: list[str] = []
    n = utf16_len(content)
    if n > MAX_TEXT:
        codes.append(CONTENT_TOO_LONG)
    if not media:
        codes.append(MEDIA_REQUIRED)
        return codes
    vids = videos(media)
    if not vids and n > PHOTO_TITLE_MAX:
        codes.append(TITLE_TOO_LONG)
    chosen = vids[:1] or images(media)[:CAROUSEL_MAX]
    if not all(_mime_ok(m) for m in chosen):
        codes.append(MEDIA_UNSUPPORTED)
    return codes + check_videos(chosen, VIDEO)


def interaction_options(opts: TikTokOptions, kind: str) -> dict[str, object]:
    """Settings transmitted in DIRECT_POST only."""
    out: dict[str, object] = {
        "privacy_level": opts.privacy_level,
        "disable_comment": opts.disable_comment,
        # the commercial content disclosure (both kinds: the direct-post and photo APIs' post_info)
        "brand_content_toggle": opts.brand_content_toggle,
        "brand_organic_toggle": opts.brand_organic_toggle,
    }
    if kind == "video":
        out["disable_duet"] = opts.disable_duet
        out["disable_stitch"] = opts.disable_stitch
    else:
        out["auto_add_music"] = opts.auto_add_music
    return {k: v for k, v in out.items() if v is not None}


def build(content: str, media: Sequence[MediaRef], options: TikTokOptions | None) -> Payload:
    opts = options or TikTokOptions()
    vids = videos(media)
    kind = "video" if vids else ("carousel" if len(images(media)) >= CAROUSEL_MIN else "image")
    chosen = tuple(vids[:1]) if vids else tuple(images(media)[:CAROUSEL_MAX])
    o: dict[str, object] = {"post_mode": opts.post_mode}
    if opts.post_mode == "DIRECT_POST":
        o.update(interaction_options(opts, kind))
    if kind == "video":
        if any(m.generated for m in chosen):
            o["is_aigc"] = True
        text = content if opts.post_mode == "DIRECT_POST" else ""  # draft video: typed in the app
        return Payload(PLATFORM, "video", text, None, chosen, o)
    # photo post: the text is the title (<= 90), kept in drafts too
    return Payload(PLATFORM, kind, "", content, chosen, o)  # type: ignore[arg-type]  # kind is one of Payload's literal kinds, chosen above from the media


def pulls_media(media: Sequence[MediaRef], by_url: bool) -> bool:
    """A photo post is always pulled (PULL_FROM_URL is TikTok's only source for photos); a video goes by FILE_UPLOAD
    unless TikTok is configured to take URLs (SOCIALPUB_MEDIA_BY_URL)."""
    if not media:
        return False
    return by_url or not videos(media)


def explain(code: str, content: str, media: Sequence[MediaRef]) -> str | None:
    if code == CONTENT_TOO_LONG:
        return f"{PLATFORM} accepts at most {MAX_TEXT:,} characters; the text has {utf16_len(content):,}"
    if code == TITLE_TOO_LONG:
        return (
            f"a {PLATFORM} photo post uses the text as its title: at most {PHOTO_TITLE_MAX} characters; the text "
            f"has {utf16_len(content)}"
        )
    return None


RULES = NetworkRules(
    PLATFORM,
    MAX_TEXT,
    1,
    CAROUSEL_MAX,
    (CAROUSEL_MIN, CAROUSEL_MAX),
    validate,
    build,
    pulls_media=pulls_media,
    pull_reason="tiktok fetches photos from their URL (TikTok takes no photo upload)",
    text_length=utf16_len,
    explain=explain,
    video=VIDEO,
)
