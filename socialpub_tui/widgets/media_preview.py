"""A post's media in the terminal: the picture of an image, the first frame and duration of a video.

The bytes come from the media URL through the app's client (`AsyncClient.fetch_media`: the embedded backend's
media host in this process, the network otherwise) — the TUI never reads the backend's files directly.
Decoding (Pillow; PyAV for a video's first frame) runs in a thread. The picture is drawn by textual-image:
a graphics protocol (Sixel, Kitty's TGP) where the terminal answers for one, coloured half blocks otherwise.
`socialpub tui` imports `textual_image.widget` before the app starts, as textual-image asks, so that the
terminal is probed while it still can be.
"""

from __future__ import annotations

import asyncio
import io
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from socialpub_tui.look import inert
from socialpub_tui.shell import shell


@dataclass
class Decoded:
    """What a media file turned out to be: a picture to draw (None when it could not be decoded) and a caption."""

    picture: Any  # PIL.Image.Image | None
    kind: str  # image | video | file
    caption: str


def human_bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.0f} KB"
    return f"{n / 1024 / 1024:.1f} MB"


def duration_text(seconds: float) -> str:
    whole = int(round(seconds))
    minutes, secs = divmod(whole, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def decode(data: bytes, content_type: str | None) -> Decoded:
    """Decode a media file: an image as is; a video's first frame and its duration (PyAV). Blocking."""
    size = human_bytes(len(data))
    video_first = bool(content_type and content_type.startswith("video/"))
    if not video_first:
        from PIL import Image, UnidentifiedImageError

        try:
            picture = Image.open(io.BytesIO(data))
            picture.load()
            return Decoded(picture, "image", f"image · {picture.width}×{picture.height} · {size}")
        except (UnidentifiedImageError, OSError, ValueError):
            pass
    try:
        import av

        with av.open(io.BytesIO(data)) as container:
            seconds = container.duration / 1_000_000 if container.duration else None  # av.time_base units
            stream = container.streams.video[0]
            if seconds is None and stream.duration and stream.time_base:
                seconds = float(stream.duration * stream.time_base)
            frame = next(container.decode(stream), None)
            picture = frame.to_image() if frame is not None else None
        length = f" · {duration_text(seconds)}" if seconds else ""
        dims = f" · {picture.width}×{picture.height}" if picture is not None else ""
        return Decoded(picture, "video", f"video{length}{dims} · {size}")
    except Exception:  # noqa: BLE001 — whatever PyAV raises for a file it cannot read: no preview, say so
        return Decoded(None, "file", f"{content_type or 'file'} · {size} (no preview)")


def image_widget_class() -> type[Any]:
    """textual-image's widget for this terminal: its automatic choice on a terminal; half blocks when the
    output is not a terminal (tests, recordings), where the automatic choice would be plain characters."""
    from textual_image import renderable
    from textual_image.widget import HalfcellImage, Image

    if renderable.Image is renderable.UnicodeImage:
        return HalfcellImage
    return Image  # type: ignore[no-any-return]  # textual_image is untyped


class MediaPreview(Vertical):
    """One media of a post: a caption (`#2 video · 0:12 · 3.4 MB`), its picture, its URL."""

    DEFAULT_CSS = """
    MediaPreview { width: auto; height: auto; max-width: 48; padding: 0 1 0 0; }
    MediaPreview .media-caption { width: auto; color: $text-muted; }
    MediaPreview .media-picture { width: auto; height: 10; }
    MediaPreview .media-url { width: auto; max-width: 46; color: $text-muted; text-overflow: ellipsis; }
    """

    def __init__(
        self,
        url: str,
        index: int,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.url = url
        self.index = index
        self.decoded: Decoded | None = None

    def compose(self) -> ComposeResult:
        yield Static(f"#{self.index} loading…", classes="media-caption")
        yield Static(inert(self.url.rsplit("/", 1)[-1]), classes="media-url", markup=False)

    def on_mount(self) -> None:
        self.load()

    @work(exclusive=True, group="media-preview")
    async def load(self) -> None:
        try:
            data, content_type = await shell(self).client.fetch_media(self.url)
        except Exception as exc:  # noqa: BLE001 — an unreachable media is shown as such, never a crash
            if self.is_attached:  # the detail screen may have closed meanwhile
                self.query_one(".media-caption", Static).update(
                    Text(f"#{self.index} not available: {inert(exc)}")
                )
            return
        decoded = await asyncio.to_thread(decode, data, content_type)
        if self.is_attached:
            self.show(decoded)

    def show(self, decoded: Decoded) -> None:
        self.decoded = decoded
        self.query_one(".media-caption", Static).update(f"#{self.index} {decoded.caption}")
        if decoded.picture is not None:
            widget = image_widget_class()(decoded.picture, classes="media-picture")
            self.mount(widget, after=self.query_one(".media-caption"))
