"""The media host: GET/HEAD /media/{key}, outside /v1, no authentication (the key is unguessable).

Serves local and S3 storage alike with Content-Type, Content-Length, a strong ETag (content hash),
single byte ranges (206 / 416, If-Range) and conditional GET (304). A file past its retention
deadline answers 404 even before the retention job deleted it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse

from backend.errors import ApiError
from backend.media.storage import get_storage
from backend.services import media as svc

host_router = APIRouter(tags=["media host"])

CACHE_CONTROL = "public, max-age=3600"

_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "the file", "content": {"image/jpeg": {}, "video/mp4": {}}},
    206: {"description": "the requested byte range (Content-Range)"},
    304: {"description": "not modified (If-None-Match matched the ETag)"},
    404: {"description": "no such file, or it has expired"},
    416: {"description": "range not satisfiable"},
    502: {"description": "storage_error"},
}


def parse_range(header: str, size: int) -> tuple[int, int] | None:
    """(start, end) inclusive for a single `bytes=` range; None to ignore the header (serve it all).

    Raises ValueError when the range cannot be satisfied (416).
    """
    unit, _, spec = header.partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return None  # another unit or several ranges: RFC 9110 lets us answer 200 with the whole file
    first, dash, last = spec.strip().partition("-")
    if not dash:
        return None
    first, last = first.strip(), last.strip()
    if not (first.isdigit() or first == "") or not (last.isdigit() or last == "") or (first == last == ""):
        return None
    if first == "":
        suffix = int(last)
        if suffix == 0 or size == 0:
            raise ValueError("empty suffix range")
        return max(0, size - suffix), size - 1
    start = int(first)
    end = int(last) if last else size - 1
    if last and end < start:
        return None  # syntactically invalid: ignored
    if start >= size:
        raise ValueError("range starts past the end")
    return start, min(end, size - 1)


def _not_found() -> ApiError:
    return ApiError(404, "not_found", "no such media file (it may have expired: files live 30 days)")


@host_router.get(
    "/media/{key}",
    responses=_RESPONSES,
    response_class=Response,
    operation_id="serveMedia",
    summary="Serve an ingested or generated file (ranges, ETag)",
)
@host_router.head(
    "/media/{key}",
    responses=_RESPONSES,
    response_class=Response,
    operation_id="headMedia",
    summary="Headers of an ingested or generated file",
)
def serve_media(key: str, request: Request) -> Response:
    media = svc.servable(key)
    if media is None:
        raise _not_found()
    storage = get_storage(request.app.state.settings)
    size = int(media.bytes)
    etag = f'"{media.sha256[:32]}"'
    headers = {
        "ETag": etag,
        "Accept-Ranges": "bytes",
        "Cache-Control": CACHE_CONTROL,
        "X-Content-Type-Options": "nosniff",
        "Content-Disposition": "inline",
    }
    inm = request.headers.get("if-none-match")
    if inm and (inm.strip() == "*" or etag in [t.strip().removeprefix("W/") for t in inm.split(",")]):
        return Response(status_code=304, headers=headers)
    byte_range: tuple[int, int] | None = None
    range_header = request.headers.get("range")
    if_range = request.headers.get("if-range")
    if range_header and (if_range is None or if_range.strip() == etag):
        try:
            byte_range = parse_range(range_header, size)
        except ValueError:
            return Response(status_code=416, headers={**headers, "Content-Range": f"bytes */{size}"})
    status = 200
    start, end = 0, size - 1
    if byte_range is not None:
        start, end = byte_range
        status = 206
        headers["Content-Range"] = f"bytes {start}-{end}/{size}"
    length = end - start + 1 if size else 0
    headers["Content-Length"] = str(length)
    if request.method == "HEAD":
        return Response(status_code=status, headers=headers, media_type=media.mime_type)
    if length == 0:
        return Response(content=b"", status_code=status, headers=headers, media_type=media.mime_type)
    try:
        chunks: Iterator[bytes] = storage.open_range(key, start, end)
    except FileNotFoundError as exc:
        raise _not_found() from exc
    return StreamingResponse(chunks, status_code=status, headers=headers, media_type=media.mime_type)
