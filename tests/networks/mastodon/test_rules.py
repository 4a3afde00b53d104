"""A Mastodon target checked at creation against its instance's limits (research B.1b M14-M21; B.4 tests 11-14, 18)."""

from __future__ import annotations

from backend.networks.base import MediaRef
from backend.networks.mastodon.instance import InstanceLimits
from backend.networks.mastodon.options import MastodonOptions
from backend.networks.mastodon.rules import check
from backend.networks.rules.common import (
    CONTENT_REQUIRED,
    CONTENT_TOO_LONG,
    MEDIA_UNSUPPORTED,
    VIDEO_OUT_OF_RANGE,
)

UPSTREAM = InstanceLimits(
    domain="social.example", version="4.3.2", supported_mime_types=frozenset({"image/jpeg", "video/mp4"})
)
BIG = InstanceLimits(domain="big.example", version="4.3.2", max_characters=1000, max_media_attachments=6)


def _img(**kw: object) -> MediaRef:
    return MediaRef(url="http://127.0.0.1/i.jpg", kind="image", mime="image/jpeg", **kw)  # type: ignore[arg-type]


def _vid(**kw: object) -> MediaRef:
    return MediaRef(url="http://127.0.0.1/v.mp4", kind="video", mime="video/mp4", **kw)  # type: ignore[arg-type]


def codes(found: list[tuple[str, str]]) -> list[str]:
    return [c for c, _ in found]


def test_the_instances_own_character_limit() -> None:
    assert check(BIG, "x" * 900, [], None) == []
    found = check(BIG, "x" * 1001, [], None)
    assert codes(found) == [CONTENT_TOO_LONG]
    assert "big.example takes at most 1,000 characters" in found[0][1]
    assert codes(check(UPSTREAM, "x" * 501, [], None)) == [CONTENT_TOO_LONG]


def test_links_count_the_reserved_length_and_the_content_warning_counts() -> None:
    url = "https://example.org/" + "a" * 60
    assert check(UPSTREAM, "x" * 470 + " " + url, [], None) == []  # 494 counted, 551 written
    cw = MastodonOptions(spoiler_text="c" * 10)
    assert codes(check(UPSTREAM, "x" * 495, [], cw)) == [CONTENT_TOO_LONG]


def test_nothing_to_post_is_refused() -> None:
    assert codes(check(UPSTREAM, "  ", [], None)) == [CONTENT_REQUIRED]
    assert check(UPSTREAM, "", [_img()], None) == []


def test_media_count_video_alone_and_types() -> None:
    assert codes(check(UPSTREAM, "hi", [_img()] * 5, None)) == [MEDIA_UNSUPPORTED]
    assert check(BIG, "hi", [_img()] * 5, None) == []
    assert codes(check(UPSTREAM, "hi", [_vid(), _img()], None)) == [MEDIA_UNSUPPORTED]
    gif = MediaRef(url="http://127.0.0.1/a.gif", kind="image", mime="image/gif")
    assert codes(check(UPSTREAM, "hi", [gif], None)) == [MEDIA_UNSUPPORTED]


def test_sizes_pixels_and_frame_rates_of_the_instance() -> None:
    assert codes(check(UPSTREAM, "hi", [_img(bytes=16_777_217)], None)) == [MEDIA_UNSUPPORTED]
    assert codes(check(UPSTREAM, "hi", [_img(width=8000, height=5000)], None)) == [MEDIA_UNSUPPORTED]
    assert codes(check(UPSTREAM, "hi", [_vid(bytes=103_809_025)], None)) == [VIDEO_OUT_OF_RANGE]
    assert codes(check(UPSTREAM, "hi", [_vid(width=4096, height=2160, frame_rate=60.0)], None)) == [
        VIDEO_OUT_OF_RANGE
    ]
    assert codes(check(UPSTREAM, "hi", [_vid(width=1920, height=1080, frame_rate=121.0)], None)) == [
        VIDEO_OUT_OF_RANGE
    ]
    assert check(UPSTREAM, "hi", [_vid(width=1920, height=1080, frame_rate=60.0, bytes=10**7)], None) == []
    assert check(UPSTREAM, "hi", [_vid(width=3840, height=2160)], None) == []  # exactly the matrix limit


def test_alt_texts_within_the_description_limit() -> None:
    assert check(UPSTREAM, "hi", [_img()], MastodonOptions(alt=["a" * 1500])) == []
    assert codes(check(UPSTREAM, "hi", [_img()], MastodonOptions(alt=["a" * 1501]))) == [MEDIA_UNSUPPORTED]
    assert codes(check(UPSTREAM, "hi", [_img()], MastodonOptions(alt=["a", "b"]))) == [MEDIA_UNSUPPORTED]
