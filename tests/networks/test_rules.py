"""Per-network rules: every per-target code, the boundaries, and what each network receives."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from backend.networks.base import MediaRef
from backend.networks.registry import names
from backend.networks.rules import build_payload, rules_for, validate_target
from backend.networks.youtube.options import YouTubeOptions, youtube_tags_length
from backend.services.networks import parse_options, post_options_model

PostOptions = post_options_model()
RULES = {name: rules_for(name) for name in names()}

IMG = MediaRef("https://media.test/a.jpg", "image", "image/jpeg", 1080, 1080)
IMG2 = MediaRef("https://media.test/b.jpg", "image", "image/jpeg", 1080, 1350)
PNG = MediaRef("https://elsewhere.test/c.png", "image", "image/png")
VID = MediaRef("https://media.test/v.mp4", "video", "video/mp4")
GEN_VID = MediaRef("https://media.test/g.mp4", "video", "video/mp4", generated=True)


def imgs(n: int) -> list[MediaRef]:
    return [MediaRef(f"https://media.test/{i}.jpg", "image", "image/jpeg") for i in range(n)]


def opts(**kw) -> dict:
    return parse_options(kw)


# --- text limits -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "platform,limit", [("instagram", 2200), ("tiktok", 2200), ("linkedin", 3000), ("facebook", 63206)]
)
def test_text_limit_boundaries(platform: str, limit: int) -> None:
    media = [VID]
    assert "content_too_long_for_target" not in validate_target(platform, "x" * (limit - 1), media)
    assert "content_too_long_for_target" not in validate_target(platform, "x" * limit, media)
    assert "content_too_long_for_target" in validate_target(platform, "x" * (limit + 1), media)


def test_tiktok_counts_utf16_units() -> None:
    # 1100 emoji = 2200 UTF-16 units: at the limit; one more is over
    assert validate_target("tiktok", "😀" * 1100, [VID]) == []
    assert validate_target("tiktok", "😀" * 1100 + "x", [VID]) == ["content_too_long_for_target"]


def test_youtube_description_is_5000_bytes() -> None:
    assert validate_target("youtube", "é" * 2500, [VID]) == []  # 5000 bytes
    assert validate_target("youtube", "é" * 2500 + "x", [VID]) == ["content_too_long_for_target"]


def test_every_target_caps_at_63206() -> None:
    assert validate_target("facebook", "x" * 63207, []) == ["content_too_long_for_target"]


# --- media requirements ------------------------------------------------------------------------


@pytest.mark.parametrize("platform", ["instagram", "tiktok"])
def test_media_required(platform: str) -> None:
    assert validate_target(platform, "hello", []) == ["media_required_for_target"]
    assert validate_target(platform, "hello", [IMG]) == []


@pytest.mark.parametrize("media", [[], [IMG], [IMG, IMG2]])
def test_youtube_needs_a_video(media: list[MediaRef]) -> None:
    assert validate_target("youtube", "hello", media) == ["video_required_for_target"]


def test_youtube_with_video_ok() -> None:
    assert validate_target("youtube", "hello", [IMG, VID]) == []


@pytest.mark.parametrize("platform", ["facebook", "linkedin"])
def test_text_only_allowed_but_not_nothing(platform: str) -> None:
    assert validate_target(platform, "hello", []) == []
    assert validate_target(platform, "   ", []) == ["content_required_for_target"]
    assert validate_target(platform, "", [IMG]) == []


def test_unknown_network() -> None:
    assert validate_target("myspace", "hello", []) == ["invalid_target"]


def test_several_codes_at_once() -> None:
    assert validate_target("youtube", "x" * 6000, [IMG], opts(youtube={"title": "t" * 101})) == [
        "content_too_long_for_target",
        "video_required_for_target",
        "title_too_long_for_target",
    ]
    assert validate_target("tiktok", "x" * 2201, []) == [
        "content_too_long_for_target",
        "media_required_for_target",
    ]


def test_format_refused_by_network() -> None:
    assert validate_target("tiktok", "hi", [PNG]) == ["media_unsupported_for_target"]
    assert validate_target("instagram", "hi", [PNG]) == ["media_unsupported_for_target"]
    assert validate_target("facebook", "hi", [PNG]) == []
    webp = MediaRef("https://x.test/a.webp", "image", "image/webp")
    assert validate_target("tiktok", "hi", [webp]) == []


# --- tiktok photo title ------------------------------------------------------------------------


def test_tiktok_carousel_title_90_boundary() -> None:
    assert validate_target("tiktok", "x" * 90, imgs(3)) == []
    assert validate_target("tiktok", "x" * 91, imgs(3)) == ["title_too_long_for_target"]
    assert validate_target("tiktok", "x" * 91, [IMG]) == ["title_too_long_for_target"]  # a photo post too
    assert validate_target("tiktok", "x" * 91, [VID]) == []  # a video's caption goes to 2200


# --- youtube title -----------------------------------------------------------------------------


def test_youtube_title_override_100_boundary() -> None:
    assert validate_target("youtube", "hi", [VID], opts(youtube={"title": "t" * 100})) == []
    assert validate_target("youtube", "hi", [VID], opts(youtube={"title": "t" * 101})) == [
        "title_too_long_for_target"
    ]


def test_youtube_first_line_is_title_truncated_to_100() -> None:
    p = build_payload("youtube", "a" * 101 + "\nsecond line", [VID])
    assert p.title == "a" * 100
    assert p.text == "a" * 101 + "\nsecond line"
    p = build_payload("youtube", "\n  My title  \nbody", [VID])
    assert p.title == "My title"
    assert build_payload("youtube", "", [VID]).title == "Untitled video"


def test_youtube_build_options() -> None:
    p = build_payload(
        "youtube",
        "T <b>\nbody",
        [IMG, VID, GEN_VID],
        opts(
            youtube={"title": "Mine", "privacyStatus": "unlisted", "madeForKids": True, "tags": ["a b", "c"]}
        ),
    )
    assert p.kind == "video" and p.media == (VID,)
    assert p.title == "Mine" and p.text == "T ‹b›\nbody"
    assert p.options["privacy_status"] == "unlisted"
    assert p.options["made_for_kids"] is True
    assert p.options["tags"] == ["a b", "c"]
    assert p.options["contains_synthetic_media"] is False
    d = build_payload("youtube", "x", [VID])
    assert d.options["privacy_status"] == "public" and d.options["made_for_kids"] is False


def test_youtube_synthetic_forced_for_generated_video() -> None:
    p = build_payload("youtube", "x", [GEN_VID], opts(youtube={"containsSyntheticMedia": False}))
    assert p.options["contains_synthetic_media"] is True


def test_youtube_tags_counted_like_youtube() -> None:
    assert youtube_tags_length(["abc", "de"]) == 6  # 3 + 1 comma + 2
    assert youtube_tags_length(["a b"]) == 5  # quoted
    ok = ["x" * 249, "y" * 250]  # 249 + 1 + 250 = 500
    assert YouTubeOptions(tags=ok).tags == ok
    with pytest.raises(ValidationError, match="500"):
        YouTubeOptions(tags=["x" * 250, "y" * 250])  # 501
    with pytest.raises(ValidationError):
        YouTubeOptions(tags=["x" * 247 + " z", "y" * 250])  # 249 + 2 quotes + 1 + 250 = 502


# --- options models ----------------------------------------------------------------------------


def test_options_camel_case_and_forbid_extra() -> None:
    o = PostOptions.model_validate({"tiktok": {"postMode": "MEDIA_UPLOAD", "privacyLevel": "SELF_ONLY"}})
    assert o.tiktok is not None and o.tiktok.post_mode == "MEDIA_UPLOAD"  # type: ignore[attr-defined]
    assert o.wire() == {"tiktok": {"postMode": "MEDIA_UPLOAD", "privacyLevel": "SELF_ONLY"}}
    for bad in [
        {"tiktok": {"postmode": "DIRECT_POST"}},
        {"instagram": {}},
        {"tiktok": {"postMode": "LATER"}},
        {"tiktok": {"privacyLevel": "EVERYONE"}},
        {"youtube": {"privacyStatus": "secret"}},
        {"youtube": {"madeForKids": "yes"}},
        {"tiktok": {"disableComment": 1}},
    ]:
        with pytest.raises(ValidationError):
            PostOptions.model_validate(bad)
    assert PostOptions().tiktok is None  # type: ignore[attr-defined]


# --- what each network receives ----------------------------------------------------------------


def test_facebook_photos_together_else_first_media_only() -> None:
    p = build_payload("facebook", "hello", [VID, IMG, IMG2])
    assert p.kind == "video" and p.media == (VID,) and p.text == "hello"
    assert build_payload("facebook", "hello", []).kind == "text"
    assert build_payload("facebook", "hello", [IMG2, VID]).media == (IMG2,)  # a video among them: the first
    photos = build_payload("facebook", "hello", [IMG, IMG2])  # photos only: one multi-photo post
    assert photos.kind == "carousel" and photos.media == (IMG, IMG2)


@pytest.mark.parametrize("n,kind", [(1, "image"), (2, "carousel"), (10, "carousel")])
def test_instagram_carousel(n: int, kind: str) -> None:
    p = build_payload("instagram", "cap", imgs(n))
    assert p.kind == kind and len(p.media) == n and p.text == "cap"


def test_instagram_reel_and_mixed_carousel() -> None:
    assert build_payload("instagram", "c", [VID]).kind == "video"
    p = build_payload("instagram", "c", [IMG, VID])
    assert p.kind == "carousel" and p.media == (IMG, VID)


def test_linkedin_carousel_is_a_document() -> None:
    p = build_payload("linkedin", "Title line\nmore", imgs(4))
    assert p.kind == "document" and len(p.media) == 4 and p.title == "Title line"
    assert build_payload("linkedin", "x", [IMG]).kind == "image"
    assert build_payload("linkedin", "x", []).kind == "text"
    v = build_payload("linkedin", "x", [IMG, VID])
    assert v.kind == "video" and v.media == (VID,)


def test_tiktok_photo_direct_and_draft() -> None:
    o = opts(
        tiktok={
            "privacyLevel": "SELF_ONLY",
            "disableComment": True,
            "autoAddMusic": True,
            "disableDuet": True,
        }
    )
    p = build_payload("tiktok", "my title", imgs(3), o)
    assert p.kind == "carousel" and p.title == "my title" and p.text == ""
    assert p.options == {
        "post_mode": "DIRECT_POST",
        "privacy_level": "SELF_ONLY",
        "disable_comment": True,
        "auto_add_music": True,
    }
    d = build_payload(
        "tiktok",
        "my title",
        imgs(3),
        opts(tiktok={"postMode": "MEDIA_UPLOAD", "privacyLevel": "SELF_ONLY", "disableComment": True}),
    )
    assert d.options == {"post_mode": "MEDIA_UPLOAD"}  # privacy & interactions dropped
    assert d.title == "my title"  # a draft carousel keeps its title


def test_tiktok_video_direct_and_draft() -> None:
    o = {
        "privacyLevel": "PUBLIC_TO_EVERYONE",
        "disableDuet": True,
        "disableStitch": False,
        "autoAddMusic": True,
    }
    p = build_payload("tiktok", "caption #tag", [IMG, GEN_VID], opts(tiktok=o))
    assert p.kind == "video" and p.media == (GEN_VID,) and p.text == "caption #tag"
    assert p.options == {
        "post_mode": "DIRECT_POST",
        "privacy_level": "PUBLIC_TO_EVERYONE",
        "disable_duet": True,
        "disable_stitch": False,
        "is_aigc": True,
    }
    d = build_payload("tiktok", "caption", [VID], opts(tiktok={**o, "postMode": "MEDIA_UPLOAD"}))
    assert d.text == "" and d.options == {"post_mode": "MEDIA_UPLOAD"}  # draft video text not transmitted


def test_payload_round_trips_as_json() -> None:
    import json

    from backend.networks.base import Payload

    for platform in RULES:
        p = build_payload(platform, "hello\nworld", [VID, IMG])
        assert Payload.from_dict(json.loads(json.dumps(p.to_dict()))) == p


def test_limits_exposed() -> None:
    assert {k: r.max_text for k, r in RULES.items()} == {
        "bluesky": 300,
        "facebook": 63206,
        "instagram": 2200,
        "threads": 500,
        "linkedin": 3000,
        "mastodon": 500,
        "tiktok": 2200,
        "youtube": 63206,
    }
    assert RULES["instagram"].min_media == 1 and RULES["tiktok"].carousel == (2, 10)
