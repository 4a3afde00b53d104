"""Threads' rules: 500 characters with an emoji counted as its UTF-8 bytes, formats and video bounds, a carousel of
2-20 media (fidelity table TH-R8, TH-R11, TH-R13)."""

from __future__ import annotations

from backend.networks.base import MediaRef
from backend.networks.rules import build_payload, validate_target
from backend.networks.threads.text import text_length

IMG = MediaRef("https://media.test/0.jpg", "image", "image/jpeg", 1080, 1080)
PNG = MediaRef("https://media.test/0.png", "image", "image/png", 1080, 1080)
GIF = MediaRef("https://media.test/0.gif", "image", "image/gif", 100, 100)


def test_500_characters_with_emoji_counted_as_their_bytes() -> None:
    assert text_length("abc") == 3 and text_length("é") == 1  # one character, not its two bytes
    assert text_length("😀") == 4 and text_length("❤️") == 6  # U+2764 (3 bytes) + VS16 (3 bytes)
    assert validate_target("threads", "a" * 500, []) == []
    assert validate_target("threads", "a" * 501, []) == ["content_too_long_for_target"]
    assert validate_target("threads", "a" * 496 + "😀", []) == []  # 496 + 4
    assert validate_target("threads", "a" * 497 + "😀", []) == ["content_too_long_for_target"]


def test_formats_and_video_bounds() -> None:
    assert validate_target("threads", "x", [PNG]) == []
    assert validate_target("threads", "x", [GIF]) == ["media_unsupported_for_target"]
    long = MediaRef("https://media.test/v.mp4", "video", "video/mp4", 1080, 1920, duration_s=301.0)
    assert "video_out_of_range_for_target" in validate_target("threads", "x", [long])
    assert validate_target("threads", "", []) == ["content_required_for_target"]


def test_payload_kinds_up_to_a_carousel_of_20() -> None:
    assert build_payload("threads", "t", []).kind == "text"
    assert build_payload("threads", "t", [IMG]).kind == "image"
    p = build_payload("threads", "t", [IMG] * 25)
    assert p.kind == "carousel" and len(p.media) == 20
