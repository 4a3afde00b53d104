"""The compose screen's local checks say what the backend's network rules say, on a grid of posts."""

from __future__ import annotations

import itertools

import pytest

from backend.networks.base import MediaRef
from backend.services.networks import catalogue
from socialpub_tui.checks import check_target, counter, media_kind
from socialpub_tui.client.networks import parse
from tests.support.networks import server_codes

NETWORKS = parse({"items": catalogue()})  # what GET /v1/networks gives the client

TEXTS = [
    "",
    "  ",
    "\u200b\u3164",  # shows nothing: no text
    "Hello",
    "x" * 90,
    "x" * 91,
    "é" * 2200,
    "😀" * 1101,
    "x" * 2201,
    "x" * 3001,
    "<" * 1700,
    "x" * 63_207,
]
MEDIA = [[], ["image"], ["video"], ["image", "image"], ["image", "video"]]
TITLES = [None, "t" * 100, "t" * 101]


@pytest.mark.parametrize("platform", NETWORKS.names())
def test_local_checks_match_the_backend_rules(platform: str) -> None:
    for text, kinds, title in itertools.product(TEXTS, MEDIA, TITLES):
        refs = [
            MediaRef(url=f"https://m/{i}", kind=k, mime="video/mp4" if k == "video" else "image/jpeg")  # type: ignore[arg-type]
            for i, k in enumerate(kinds)
        ]
        options = {"youtube": {"title": title}} if title else {}
        backend = server_codes(platform, text, refs, options)
        local = [p.code for p in check_target(NETWORKS, platform, text, kinds, options)]
        assert sorted(local) == sorted(backend), (platform, len(text), kinds, title)


def test_counter_counts_as_the_network_does() -> None:
    assert counter(NETWORKS, "tiktok", "😀") == (2, 2200)  # UTF-16 code units
    assert counter(NETWORKS, "instagram", "😀") == (1, 2200)
    assert counter(NETWORKS, "linkedin", "") == (0, 3000)
    assert counter(NETWORKS, "elsewhere", "😀") == (
        1,
        None,
    )  # a network the server did not list: counted only


def test_media_kind_from_the_file_name() -> None:
    assert media_kind("http://h/media/med_1.jpg") == "image"
    assert media_kind("https://h/v.MP4?x=1") == "video"
    assert media_kind("https://h/blob") is None


def test_media_path_completion(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from socialpub_tui.screens.compose_media import complete_path

    (tmp_path / "photos").mkdir()
    (tmp_path / "photo.jpg").write_bytes(b"x")
    (tmp_path / ".hidden.jpg").write_bytes(b"x")
    assert complete_path(f"{tmp_path}/pho") == f"{tmp_path}/photo.jpg"
    assert complete_path(f"{tmp_path}/photos") == f"{tmp_path}/photos/"
    assert complete_path(f"{tmp_path}/.h") == f"{tmp_path}/.hidden.jpg"
    assert complete_path(f"{tmp_path}/nothing") is None
    assert complete_path("") is None


def test_bluesky_counts_graphemes_and_refuses_what_it_cannot_hold() -> None:
    family = "👨‍👩‍👧‍👦"  # one grapheme, 25 bytes
    assert counter(NETWORKS, "bluesky", family * 100) == (100, 300)
    assert check_target(NETWORKS, "bluesky", "a" * 300, []) == []
    assert [p.code for p in check_target(NETWORKS, "bluesky", "a" * 301, [])] == [
        "content_too_long_for_target"
    ]
    assert [p.code for p in check_target(NETWORKS, "bluesky", family * 121, [])] == [
        "content_too_long_for_target"
    ]
    five = check_target(NETWORKS, "bluesky", "x", ["image"] * 5)
    assert [p.code for p in five] == ["media_unsupported_for_target"]
