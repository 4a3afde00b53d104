from __future__ import annotations

import io

import pytest
from PIL import Image

from backend.errors import ApiError
from backend.media.images import MAX_IMAGE_BYTES, process_image, target_size
from tests.media import corpus
from tests.support.images import naive_pipeline


def _open(data: bytes) -> Image.Image:
    im = Image.open(io.BytesIO(data))
    assert im.format == "JPEG"
    return im.convert("RGB")


def _close(a: tuple[int, ...], b: tuple[int, ...], tol: int = 40) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("fmt", ["jpeg", "png", "webp", "gif", "heif", "avif", "tiff"])
def test_every_format_becomes_a_jpeg_with_the_same_picture(fmt: str) -> None:
    out = process_image(corpus.each_format()[fmt], fmt)
    im = _open(out.data)
    assert (out.width, out.height) == im.size == (60, 40)
    assert _close(im.getpixel((5, 5)), corpus.RED)
    assert _close(im.getpixel((55, 35)), corpus.BLUE)


def test_gif_keeps_its_first_frame() -> None:
    im = _open(process_image(corpus.gif_two_frames(), "gif").data)
    assert _close(im.getpixel((10, 10)), corpus.RED)


@pytest.mark.parametrize("orientation", range(1, 9))
def test_all_eight_exif_orientations_come_out_upright(orientation: int) -> None:
    data = corpus.jpeg(60, 40, orientation=orientation)
    out = process_image(data, "jpeg")
    im = _open(out.data)
    assert im.size == (60, 40), f"orientation {orientation} gave {im.size}"
    assert _close(im.getpixel((6, 6)), corpus.RED), f"orientation {orientation}: red corner moved"
    assert _close(im.getpixel((53, 33)), corpus.BLUE)
    assert _close(im.getpixel((53, 6)), corpus.BLUE)
    assert _close(im.getpixel((6, 33)), corpus.BLUE)


def test_orientation_applied_on_a_large_rotated_photo() -> None:
    data = corpus.jpeg(2000, 1000, orientation=6)
    assert Image.open(io.BytesIO(data)).size == (1000, 2000)  # stored portrait, displayed landscape
    out = process_image(data, "jpeg")
    assert (out.width, out.height) == (1080, 540)
    im = _open(out.data)
    assert _close(im.getpixel((20, 20)), corpus.RED) and _close(im.getpixel((1060, 520)), corpus.BLUE)


def test_metadata_is_not_carried() -> None:
    data = corpus.jpeg(80, 60, orientation=3, gps=True)
    assert Image.open(io.BytesIO(data)).getexif().get_ifd(0x8825)  # the input does have GPS
    im = Image.open(io.BytesIO(process_image(data, "jpeg").data))
    assert "exif" not in im.info
    assert not im.getexif()
    assert b"Exif" not in process_image(data, "jpeg").data[:2000]


def test_png_alpha_is_flattened_on_white() -> None:
    im = _open(process_image(corpus.png_alpha(), "png").data)
    assert im.mode == "RGB"
    assert _close(im.getpixel((5, 15)), (255, 255, 255), 8)
    assert _close(im.getpixel((35, 15)), (255, 0, 0), 30)


@pytest.mark.parametrize(
    ("side", "expected"), [(1079, (1079, 809)), (1080, (1080, 810)), (1081, (1080, 809)), (4000, (1080, 810))]
)
def test_longer_side_limit(side: int, expected: tuple[int, int]) -> None:
    short = side * 3 // 4
    for fmt, data in (
        ("jpeg", corpus.jpeg(side, short)),
        ("png", corpus.encode(corpus.canonical(side, short), "PNG")),
    ):
        out = process_image(data, fmt)
        assert (out.width, out.height) == expected, fmt
        assert _open(out.data).size == expected
    portrait = process_image(corpus.jpeg(short, side), "jpeg")
    assert (portrait.width, portrait.height) == expected[::-1]


def test_never_enlarged() -> None:
    out = process_image(corpus.jpeg(10, 7), "jpeg")
    assert (out.width, out.height) == (10, 7)


def test_target_size() -> None:
    assert target_size(4000, 3000) == (1080, 810)
    assert target_size(3000, 4000) == (810, 1080)
    assert target_size(100000, 1) == (1080, 1)


def test_quality_90() -> None:
    data = process_image(corpus.jpeg(400, 300, noise=True), "jpeg").data
    im = Image.open(io.BytesIO(data))
    q = im.quantization
    reference = Image.open(io.BytesIO(corpus.encode(im.convert("RGB"), "JPEG", quality=90))).quantization
    assert q[0] == reference[0]


def test_truncated_jpeg_is_not_an_image() -> None:
    with pytest.raises(ApiError) as err:
        process_image(corpus.truncated_jpeg(), "jpeg")
    assert err.value.code == "not_an_image"


def test_garbage_after_a_signature_is_not_an_image() -> None:
    with pytest.raises(ApiError) as err:
        process_image(b"\x89PNG\r\n\x1a\n" + b"garbage" * 10, "png")
    assert err.value.code == "not_an_image"
    with pytest.raises(ApiError) as err:
        process_image(
            b"\xff\xd8\xff\xe0" + b"\x00" * 200, "jpeg"
        )  # Pillow: "cannot identify image file <_io…>"
    assert err.value.code == "not_an_image"
    assert " at 0x" not in err.value.message and "BytesIO" not in err.value.message  # no Python object's name


def test_decompression_bomb_refused_before_decoding() -> None:
    with pytest.raises(ApiError) as err:
        process_image(corpus.bomb_png(), "png")
    assert err.value.status == 400 and err.value.code == "media_too_large"
    assert "100000 x 100000" in err.value.message or "pixel" in err.value.message


def test_bomb_limit_is_configurable() -> None:
    data = corpus.jpeg(300, 300)
    process_image(data, "jpeg", max_pixels=90_000)
    with pytest.raises(ApiError) as err:
        process_image(data, "jpeg", max_pixels=89_999)
    assert err.value.code == "media_too_large"


def test_over_20_mb_is_refused() -> None:
    with pytest.raises(ApiError) as err:
        process_image(b"\xff\xd8\xff" + b"\x00" * MAX_IMAGE_BYTES, "jpeg")
    assert err.value.code == "media_too_large"


def test_wrong_decoder_is_never_tried() -> None:
    # PNG bytes declared as JPEG by detection must not be decoded by the PNG plugin.
    with pytest.raises(ApiError) as err:
        process_image(corpus.each_format()["png"], "jpeg")
    assert err.value.code == "not_an_image"


def test_jpeg_fast_path_matches_naive_to_the_eye() -> None:
    src = corpus.encode(corpus.canonical(4000, 3000), "JPEG", quality=92)
    ours = _open(process_image(src, "jpeg").data)
    naive = _open(naive_pipeline(src))
    assert ours.size == naive.size == (1080, 810)
    diff = sum(abs(a - b) for a, b in zip(ours.tobytes(), naive.tobytes(), strict=True)) / len(ours.tobytes())
    assert diff < 3.0


def _jpeg_with_header_size(width: int, height: int) -> bytes:
    data = bytearray(corpus.jpeg(16, 16))
    i = data.index(b"\xff\xc0")  # SOF0: length(2) precision(1) height(2) width(2)
    data[i + 5 : i + 7] = height.to_bytes(2, "big")
    data[i + 7 : i + 9] = width.to_bytes(2, "big")
    return bytes(data)


def test_jpeg_bomb_header_refused() -> None:
    with pytest.raises(ApiError) as err:
        process_image(_jpeg_with_header_size(60000, 60000), "jpeg")
    assert err.value.code == "media_too_large"


@pytest.mark.parametrize("mode", ["CMYK", "L", "LA", "P", "I;16", "1"])
def test_unusual_modes_become_rgb(mode: str) -> None:
    im = corpus.canonical(80, 60)
    if mode == "I;16":
        src = Image.new("I;16", (80, 60), 40000)
        fmt, data = "png", corpus.encode(src, "PNG")
    elif mode == "CMYK":
        fmt, data = "jpeg", corpus.encode(im.convert("CMYK"), "JPEG")
    elif mode == "LA":
        fmt, data = "png", corpus.encode(im.convert("LA"), "PNG")
    else:
        fmt, data = "png", corpus.encode(im.convert(mode), "PNG")
    out = _open(process_image(data, fmt).data)
    assert out.size == (80, 60) and out.mode == "RGB"


def test_transparent_gif_flattened_on_white() -> None:
    im = Image.new("P", (20, 20), 0)
    im.putpalette([0, 0, 0, 255, 0, 0] + [0] * 762)
    im.paste(1, (10, 0, 20, 20))
    data = corpus.encode(im, "GIF", transparency=0)
    out = _open(process_image(data, "gif").data)
    assert _close(out.getpixel((2, 10)), (255, 255, 255), 8) and _close(out.getpixel((17, 10)), (255, 0, 0))


def test_embedded_colour_profile_is_converted_not_carried() -> None:
    from PIL import ImageCms

    srgb = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB"))
    data = corpus.encode(corpus.canonical(), "JPEG", icc_profile=srgb.tobytes())
    out = Image.open(io.BytesIO(process_image(data, "jpeg").data))
    assert "icc_profile" not in out.info or not out.info["icc_profile"]
