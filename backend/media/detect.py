"""Type detection from the first bytes of a file (magic numbers), never from a name or a declared type.

`detect(head)` needs the first `HEAD_BYTES` bytes (fewer if the file is shorter) and answers an
image or a video format, or raises 400 `unsupported_media_type`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Literal

from backend.errors import ApiError

HEAD_BYTES = 4096

MediaKind = Literal["image", "video"]


@dataclass(frozen=True)
class Detected:
    kind: MediaKind
    format: str  # jpeg, png, webp, gif, heif, avif, tiff, mp4, mov, webm
    mime_type: str

    @property
    def extension(self) -> str:
        return _EXTENSIONS[self.format]


_EXTENSIONS = {
    "jpeg": "jpg",
    "png": "png",
    "webp": "webp",
    "gif": "gif",
    "heif": "heic",
    "avif": "avif",
    "tiff": "tif",
    "mp4": "mp4",
    "mov": "mov",
    "webm": "webm",
}

_IMAGE_MIME = {
    "jpeg": "image/jpeg",
    "png": "image/png",
    "webp": "image/webp",
    "gif": "image/gif",
    "heif": "image/heif",
    "avif": "image/avif",
    "tiff": "image/tiff",
}
VIDEO_MIME = {"mp4": "video/mp4", "mov": "video/quicktime", "webm": "video/webm"}

# ISO base media file format brands (the `ftyp` box).
_HEIF_BRANDS = {
    b"heic",
    b"heix",
    b"hevc",
    b"hevx",
    b"heim",
    b"heis",
    b"hevm",
    b"hevs",
    b"mif1",
    b"msf1",
    b"mif2",
    b"mif3",
}
_AVIF_BRANDS = {b"avif", b"avis"}
_MOV_BRANDS = {b"qt  "}
_MP4_BRANDS = {
    b"isom",
    b"iso2",
    b"iso3",
    b"iso4",
    b"iso5",
    b"iso6",
    b"iso7",
    b"iso8",
    b"iso9",
    b"mp41",
    b"mp42",
    b"mp71",
    b"avc1",
    b"M4V ",
    b"M4VH",
    b"M4VP",
    b"M4A ",
    b"dash",
    b"msnv",
    b"MSNV",
    b"ndas",
    b"F4V ",
    b"XAVC",
    b"mmp4",
    b"3gp4",
    b"3gp5",
    b"3gp6",
    b"3g2a",
    b"CAEP",
    b"nvr1",
    b"FACE",
    b"hvc1",
    b"av01",
}
# QuickTime files written without an ftyp box start directly with one of these atoms.
_MOV_LEADING_ATOMS = {b"moov", b"mdat", b"wide", b"free", b"skip", b"pnot"}


def _ftyp_brands(head: bytes) -> tuple[bytes, set[bytes]] | None:
    if len(head) < 12 or head[4:8] != b"ftyp":
        return None
    size = struct.unpack(">I", head[:4])[0]
    if size < 12:
        return None
    major = head[8:12]
    end = min(size, len(head))
    compatible = {head[i : i + 4] for i in range(16, end - 3, 4)}
    return major, compatible


def _ebml_doctype(head: bytes) -> bytes | None:
    """The DocType of an EBML header (b'webm', b'matroska'), read from the first bytes."""
    if not head.startswith(b"\x1a\x45\xdf\xa3"):
        return None
    idx = head.find(b"\x42\x82", 4, 64)  # DocType element id
    if idx < 0 or idx + 3 > len(head):
        return None
    length_byte = head[idx + 2]
    if length_byte & 0x80:  # one-byte vint
        length = length_byte & 0x7F
        start = idx + 3
    else:
        return None
    return head[start : start + length]


def detect_or_none(head: bytes) -> Detected | None:
    """The detected format, or None when the bytes match none of the accepted signatures."""
    h = head
    if h.startswith(b"\xff\xd8\xff"):
        return Detected("image", "jpeg", _IMAGE_MIME["jpeg"])
    if h.startswith(b"\x89PNG\r\n\x1a\n"):
        return Detected("image", "png", _IMAGE_MIME["png"])
    if h[:6] in (b"GIF87a", b"GIF89a"):
        return Detected("image", "gif", _IMAGE_MIME["gif"])
    if len(h) >= 12 and h[:4] == b"RIFF" and h[8:12] == b"WEBP":
        return Detected("image", "webp", _IMAGE_MIME["webp"])
    if h[:4] in (b"II*\x00", b"MM\x00*"):
        return Detected("image", "tiff", _IMAGE_MIME["tiff"])
    brands = _ftyp_brands(h)
    if brands is not None:
        major, compatible = brands
        every = {major} | compatible
        if major in _AVIF_BRANDS or (major in {b"mif1", b"msf1"} and every & _AVIF_BRANDS):
            return Detected("image", "avif", _IMAGE_MIME["avif"])
        if major in _HEIF_BRANDS:
            return Detected("image", "heif", _IMAGE_MIME["heif"])
        if major in _MOV_BRANDS:
            return Detected("video", "mov", VIDEO_MIME["mov"])
        if major in _MP4_BRANDS or every & _MP4_BRANDS:
            return Detected("video", "mp4", VIDEO_MIME["mp4"])
        if every & _MOV_BRANDS:
            return Detected("video", "mov", VIDEO_MIME["mov"])
        return None
    if len(h) >= 8 and h[4:8] in _MOV_LEADING_ATOMS and struct.unpack(">I", h[:4])[0] >= 8:
        return Detected("video", "mov", VIDEO_MIME["mov"])
    if _ebml_doctype(h) == b"webm":
        return Detected("video", "webm", VIDEO_MIME["webm"])
    return None


def detect(head: bytes) -> Detected:
    """Detect the type from the first bytes; 400 `unsupported_media_type` for anything not accepted."""
    if not head:
        raise ApiError(400, "unsupported_media_type", "the file is empty (0 bytes)")
    found = detect_or_none(head)
    if found is None:
        raise ApiError(
            400,
            "unsupported_media_type",
            "the content is neither an accepted image (JPEG, PNG, WebP, GIF, HEIC/HEIF, AVIF, TIFF) nor an "
            "MP4, MOV or WebM video (detected from the first bytes, not from the name or declared type)",
        )
    return found
