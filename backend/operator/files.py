"""What the service will make of a local file, read from its first bytes exactly as `POST /v1/media` reads them
(backend.media.detect: magic numbers, never the name), for a front end that checks files before it sends them —
`socialpub recipes validate` reports a `.jpg` that is really text at its YAML line, where `apply` only learnt it
from the upload's 400."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from backend.media.detect import HEAD_BYTES, detect_or_none


def media_kind(path: Path) -> Literal["image", "video"] | None:
    """`image` or `video`, as the service would take the file; None when it would refuse it (400
    `unsupported_media_type`: empty, or no accepted signature). OSError when the file cannot be read."""
    with open(path, "rb") as fh:
        head = fh.read(HEAD_BYTES)
    found = detect_or_none(head) if head else None
    return found.kind if found is not None else None
