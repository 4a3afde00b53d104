from __future__ import annotations

import pytest

from backend.errors import ApiError
from backend.media.detect import detect
from tests.media import corpus


@pytest.mark.parametrize("fmt", ["jpeg", "png", "webp", "gif", "heif", "avif", "tiff"])
def test_each_image_format_is_detected_by_content(fmt: str) -> None:
    data = corpus.each_format()[fmt]
    found = detect(data[:4096])
    assert (found.kind, found.format) == ("image", fmt)


@pytest.mark.parametrize(
    ("container", "mime"), [("mp4", "video/mp4"), ("mov", "video/quicktime"), ("webm", "video/webm")]
)
def test_videos_by_magic_bytes(container: str, mime: str) -> None:
    found = detect(corpus.video(container)[:4096])
    assert (found.kind, found.format, found.mime_type) == ("video", container, mime)


def test_zero_bytes_is_unsupported() -> None:
    with pytest.raises(ApiError) as err:
        detect(b"")
    assert err.value.code == "unsupported_media_type"


@pytest.mark.parametrize(
    "data",
    [
        b"hello, this is text pretending to be photo.jpg\n",
        b"%PDF-1.7\n",
        b"\x1aE\xdf\xa3\x9fB\x86\x81\x01B\x82\x88matroska",
    ],
)
def test_other_content_is_unsupported(data: bytes) -> None:
    with pytest.raises(ApiError) as err:
        detect(data)
    assert err.value.status == 400 and err.value.code == "unsupported_media_type"


def test_quicktime_without_ftyp() -> None:
    data = b"\x00\x00\x00\x08wide\x00\x00\x10\x00mdat" + b"\x00" * 64
    assert detect(data).format == "mov"
