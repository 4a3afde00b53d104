"""What a post's targets would refuse, checked before anything is sent: the compose screen shows these next to
each target while the user types. The numbers are each network's `limits` of GET /v1/networks (the client's
`Networks`: the same values the backend's network rules read); the codes and the sense are those of the API's
`invalid_targets` details (spec 7), so a problem found here reads like the one the server would answer. The
server checks again: a rule not known here (a media format, a privacy level the account does not offer, a network
this server does not list) comes back as a 400, shown at the same place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from backend.schemas.text import has_visible_text
from socialpub_tui.client.networks import Networks

IMAGE_SUFFIXES = (
    ".jpg",
    ".jpeg",
    ".png",
    ".webp",
    ".gif",
    ".heic",
    ".heif",
    ".avif",
    ".bmp",
    ".tif",
    ".tiff",
)
VIDEO_SUFFIXES = (".mp4", ".mov", ".m4v", ".webm")


@dataclass(frozen=True)
class Problem:
    code: str
    message: str


def media_kind(url: str) -> str | None:
    """`image` or `video` from a media URL's file name (the media host names its files by type); None if unsure."""
    path = url.split("?", 1)[0].lower()
    if path.endswith(VIDEO_SUFFIXES):
        return "video"
    if path.endswith(IMAGE_SUFFIXES):
        return "image"
    return None


def counter(
    networks: Networks, platform: str, content: str, max_text: int | None = None
) -> tuple[int, int | None]:
    """(characters used as the network counts them, the bound or None) for the live counter; `max_text`: the
    account's own bound when its server sets one (AccountOut.textLimit), else the network's."""
    limits = networks.limits(platform)
    bound = max_text if max_text is not None else limits.max_text if limits is not None else None
    return networks.text_length(platform, content), bound


def _description_bytes(content: str, replaced: dict[str, str]) -> int:
    for char, by in replaced.items():  # characters the network refuses, sent as look-alikes (`<` as `‹`)
        content = content.replace(char, by)
    return len(content.encode("utf-8"))


def check_target(
    networks: Networks,
    platform: str,
    content: str,
    media: Sequence[str | None],
    options: dict[str, Any] | None = None,
    max_text: int | None = None,
) -> list[Problem]:
    """The problems `platform` would answer (worded to stand next to the target's name) for this text, these media
    (each `image`, `video` or None when unknown) and these options (the wire form: `{"<network>": {"title": …}}`);
    `max_text`: the account's own bound on the text when its server sets one (AccountOut.textLimit).
    [] when it can receive the post — or when the server did not list the network (the server then says)."""
    limits = networks.limits(platform)
    if limits is None:
        return []
    problems: list[Problem] = []
    n = networks.text_length(platform, content)
    bound = max_text if max_text is not None else limits.max_text
    if n > bound:
        problems.append(
            Problem(
                "content_too_long_for_target",
                f"at most {bound:,} characters here; the text has {n:,}",
            )
        )
    elif (
        limits.description_max_bytes
        and _description_bytes(content, limits.replaced_characters) > limits.description_max_bytes
    ):
        problems.append(
            Problem(
                "content_too_long_for_target",
                f"the description is at most {limits.description_max_bytes:,} bytes (UTF-8): "
                "shorten the text",
            )
        )
    if limits.text_or_media and not has_visible_text(content) and not media:
        problems.append(Problem("content_required_for_target", "nothing to publish: give a text or a media"))
    if limits.media_required and not media:
        problems.append(Problem("media_required_for_target", "needs an image or a video"))
        return problems
    known = all(kind is not None for kind in media)
    videos = [kind for kind in media if kind == "video"]
    if known and (
        (not limits.mixed_media and videos and len(videos) < len(media))
        or (limits.extra_media_refused and (len(media) > limits.max_media or len(videos) > 1))
    ):
        problems.append(
            Problem(
                "media_unsupported_for_target",
                f"takes up to {limits.max_media} images or one video in a post"
                + ("" if limits.mixed_media else ", not both"),
            )
        )
    if limits.video_required and known and not videos:
        problems.append(Problem("video_required_for_target", "publishes videos only: add a video"))
    if limits.photo_title_max and media and known and not videos and n > limits.photo_title_max:
        problems.append(
            Problem(
                "title_too_long_for_target",
                f"a photo post takes the text as its title: at most "
                f"{limits.photo_title_max} characters; the text has {n}",
            )
        )
    title = ((options or {}).get(platform) or {}).get("title")
    if limits.title_max and isinstance(title, str) and len(title.strip()) > limits.title_max:
        problems.append(
            Problem(
                "title_too_long_for_target",
                f"the title is at most {limits.title_max} characters; it has {len(title.strip())}",
            )
        )
    return problems
