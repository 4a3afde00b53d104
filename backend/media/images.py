"""The image pipeline: any accepted image in, an upright sRGB JPEG q90 with its longer side at most 1080 px out.

Steps, in order:
1. open with the one decoder the detected format calls for (explicit allowlist, never a guess);
2. refuse a decompression bomb from the header's dimensions, before any pixel is decoded;
3. JPEG fast path: ask libjpeg for a reduced-size decode (1/2, 1/4, 1/8) that stays at least as
   large as the target, so the final (bicubic) resize starts from a smaller image (same to the eye);
4. flatten transparency onto white, reduce to 1080 px on the longer side (ratio kept, never enlarged),
   apply the EXIF orientation, convert an embedded colour profile to sRGB;
5. save as JPEG quality 90 without EXIF, GPS or any other metadata.
"""

from __future__ import annotations

import io
import re
import threading
from dataclasses import dataclass

from PIL import Image, ImageCms, ImageFile

from backend.errors import ApiError

MAX_IMAGE_BYTES = 20 * 1024 * 1024
MAX_SIDE = 1080
JPEG_QUALITY = 90
DEFAULT_MAX_PIXELS = 50_000_000

# Detected format -> the only Pillow decoder allowed to open it.
PIL_FORMATS = {
    "jpeg": ["JPEG", "MPO"],
    "png": ["PNG"],
    "webp": ["WEBP"],
    "gif": ["GIF"],
    "heif": ["HEIF"],
    "avif": ["AVIF"],
    "tiff": ["TIFF"],
}

_ORIENTATION = {
    2: Image.Transpose.FLIP_LEFT_RIGHT,
    3: Image.Transpose.ROTATE_180,
    4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE,
    6: Image.Transpose.ROTATE_270,
    7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_90,
}

ImageFile.LOAD_TRUNCATED_IMAGES = False
_heif_lock = threading.Lock()
_heif_registered = False
_SRGB = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB"))


def _register_heif() -> None:
    global _heif_registered
    with _heif_lock:
        if not _heif_registered:
            from pillow_heif import register_heif_opener

            register_heif_opener()
            _heif_registered = True


@dataclass(frozen=True)
class ProcessedImage:
    data: bytes
    width: int
    height: int


def target_size(width: int, height: int, max_side: int = MAX_SIDE) -> tuple[int, int]:
    """The output size: the longer side brought down to `max_side` with the ratio kept; never enlarged."""
    longer = max(width, height)
    if longer <= max_side:
        return width, height
    scale = max_side / longer
    if width >= height:
        return max_side, max(1, round(height * scale))
    return max(1, round(width * scale)), max_side


def _flatten(im: Image.Image) -> Image.Image:
    """RGB, with any transparency composited onto white."""
    if im.mode in ("I;16", "I;16L", "I;16B", "I;16N", "I"):
        im = im.convert("I").point(lambda v: v * (1 / 256)).convert("L")
    elif im.mode == "F":
        im = im.convert("L")
    has_alpha = im.mode in ("RGBA", "LA", "RGBa", "La", "PA") or (
        im.mode in ("P", "L", "RGB") and "transparency" in im.info
    )
    if has_alpha:
        rgba = im.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        background.alpha_composite(rgba)
        return background.convert("RGB")
    if im.mode != "RGB":
        return im.convert("RGB")
    return im


def _to_srgb(im: Image.Image, icc: bytes | None) -> Image.Image:
    if not icc:
        return im
    try:
        src = ImageCms.ImageCmsProfile(io.BytesIO(icc))
        converted = ImageCms.profileToProfile(im, src, _SRGB, outputMode="RGB")
        return converted if converted is not None else im
    except (ImageCms.PyCMSError, OSError, ValueError):
        return im  # an unreadable profile: keep the pixels as they are


def open_image(data: bytes, fmt: str, max_pixels: int = DEFAULT_MAX_PIXELS) -> Image.Image:
    """Open (header only) with the allowlisted decoder; bomb check on the declared dimensions."""
    formats = PIL_FORMATS.get(fmt)
    if formats is None:
        raise ApiError(400, "unsupported_media_type", f"{fmt} is not an accepted image format")
    if fmt == "heif":
        _register_heif()
    try:
        im = Image.open(io.BytesIO(data), formats=formats)
    except Image.DecompressionBombError as exc:
        raise _bomb(None, max_pixels) from exc
    except Exception as exc:  # noqa: BLE001  (every decoder failure means the same thing to the client)
        raise _undecodable(fmt, exc) from exc
    width, height = im.size
    if width <= 0 or height <= 0:
        raise ApiError(400, "not_an_image", f"the {fmt.upper()} header declares an empty image")
    if width * height > max_pixels:
        im.close()
        raise _bomb((width, height), max_pixels)
    return im


def _undecodable(fmt: str, exc: Exception) -> ApiError:
    """400 `not_an_image` for a decoder's failure: its reason, without the objects Python names in it
    (`<_io.BytesIO object at 0x…>`), and none when it is only a name (a KeyError's `'MPO'`)."""
    reason = re.sub(r"\s*<[^<>]* at 0x[0-9a-fA-F]+>", "", str(exc)).strip()
    said = f": {reason}" if reason and not isinstance(exc, LookupError) else ""
    return ApiError(
        400,
        "not_an_image",
        f"the file looks like {fmt.upper()} but cannot be decoded (damaged, cut short, or a variant "
        f"this service does not read){said}",
    )


def _bomb(size: tuple[int, int] | None, max_pixels: int) -> ApiError:
    dims = f"{size[0]} x {size[1]} pixels" if size else "a pixel count"
    return ApiError(
        400,
        "media_too_large",
        f"the image declares {dims}, over the limit of {max_pixels} pixels (refused before decoding)",
        [{"limit": "pixels", "max": max_pixels, **({"width": size[0], "height": size[1]} if size else {})}],
    )


def process_image(
    data: bytes,
    fmt: str,
    *,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    max_bytes: int = MAX_IMAGE_BYTES,
    max_side: int = MAX_SIDE,
) -> ProcessedImage:
    """Run the whole pipeline on the bytes of an image of detected format `fmt`."""
    if len(data) > max_bytes:
        raise ApiError(
            400,
            "media_too_large",
            f"the image is {len(data)} bytes, over the limit of {max_bytes} bytes (20 MB)",
            [{"limit": "bytes", "max": max_bytes, "bytes": len(data)}],
        )
    im = open_image(data, fmt, max_pixels)
    try:
        return _pipeline(im, fmt, max_side)
    except ApiError:
        raise
    except (MemoryError, Image.DecompressionBombError) as exc:
        raise _bomb(im.size, max_pixels) from exc
    except Exception as exc:  # noqa: BLE001
        raise _undecodable(fmt, exc) from exc
    finally:
        im.close()


def _pipeline(im: Image.Image, fmt: str, max_side: int) -> ProcessedImage:
    raw_w, raw_h = im.size
    try:
        orientation = int(im.getexif().get(0x0112, 1) or 1)
    except Exception:  # noqa: BLE001  (a broken EXIF block is ignored, like a missing one)
        orientation = 1
    tw, th = target_size(raw_w, raw_h, max_side)
    if im.format in ("JPEG", "MPO") and (tw, th) != (raw_w, raw_h):
        # Reduced-size DCT decode: the scale chosen keeps the result at least (tw, th).
        im.draft("RGB" if im.mode in ("RGB", "YCbCr") else None, (tw, th))
    icc = im.info.get("icc_profile")
    im.load()
    frame = _flatten(im)
    if frame.size != (tw, th):
        # Bicubic after a reduced-size decode: the source is at most ~2x the target, where bicubic and
        # Lanczos are indistinguishable to the eye; bicubic costs about two thirds as much.
        frame = frame.resize((tw, th), Image.Resampling.BICUBIC, reducing_gap=2.0)
    method = _ORIENTATION.get(orientation)
    if method is not None:
        frame = frame.transpose(method)
    frame = _to_srgb(frame, icc)
    out = io.BytesIO()
    frame.save(out, "JPEG", quality=JPEG_QUALITY)
    width, height = frame.size
    return ProcessedImage(out.getvalue(), width, height)
