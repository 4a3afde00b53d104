"""The compose screen's media: a local file uploaded (the path box completes as it is typed), a generation's
file attached (ctrl+g), one removed (delete)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.screen import Screen
from textual.suggester import Suggester
from textual.widgets import Input, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option

from socialpub_tui.look import inert
from socialpub_tui.screens.attachments import Media, local_file
from socialpub_tui.shell import shell

MAX_MEDIA = 10


def complete_path(value: str) -> str | None:
    """The first file or folder completing the path typed so far (`~` kept as typed), hidden ones only when
    asked for with a leading dot; a folder ends with `/`. Blocking."""
    if not value:
        return None
    typed_dir, _, prefix = value.rpartition("/")
    folder = Path(typed_dir or ("/" if value.startswith("/") else ".")).expanduser()
    try:
        names = sorted(
            entry.name + ("/" if entry.is_dir() else "")
            for entry in folder.iterdir()
            if entry.name.startswith(prefix) and (prefix.startswith(".") or not entry.name.startswith("."))
        )
    except OSError:
        return None
    if not names:
        return None
    return (typed_dir + "/" if "/" in value else "") + names[0]


class PathSuggester(Suggester):
    """Completes the media path as it is typed (→ or end accepts the suggestion)."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        return await asyncio.to_thread(complete_path, value)


class MediaPane(Screen[Any]):
    """ComposeScreen's media (a part of it: it runs on a ComposeScreen)."""

    # ---- media --------------------------------------------------------------------------------------------
    def _draw_media(self) -> None:
        media_list = self.query_one("#compose-media", OptionList)
        media_list.clear_options()
        media_list.add_options(
            [Option(Text(f"{i + 1}. {inert(m.label)}"), id=str(i)) for i, m in enumerate(self.media)]
        )
        media_list.display = bool(self.media)

    @on(Input.Submitted, "#compose-media-path")
    def _path_given(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.upload(event.value.strip())

    @work(exclusive=True, group="compose-upload")
    async def upload(self, text: str) -> None:
        error = self.query_one("#compose-media-error", Static)
        error.display = False
        if len(self.media) >= MAX_MEDIA:
            error.update(f"A post has at most {MAX_MEDIA} media.")
            error.display = True
            return
        path, size = await asyncio.to_thread(local_file, text)
        if size is None:
            error.update(f"{path}: no such file")
            error.display = True
            return
        bar = self.query_one("#compose-upload", ProgressBar)
        bar.update(total=max(size, 1), progress=0)
        bar.display = True
        self.uploading = True
        path_input = self.query_one("#compose-media-path", Input)
        path_input.disabled = True
        self._draw_status()
        try:
            media = await shell(self).client.upload_media_file(
                path, progress=lambda sent: bar.update(progress=sent)
            )
        except Exception as exc:  # noqa: BLE001
            error.update(f"{path.name}: {getattr(exc, 'message', exc)}")
            error.display = True
            shell(self).report(exc, f"uploading {path.name}")
            return
        finally:  # success or not: the field is the user's again, and the status line says so at once
            self.uploading = False
            bar.display = False
            path_input.disabled = False
            path_input.focus()
            self._draw_status()
        size_text = f"{media.bytes / 1024:.0f} KB" if media.bytes >= 1024 else f"{media.bytes} B"
        dims = f" · {media.width}×{media.height}" if media.width and media.height else ""
        self.attach_media(Media(media.url, media.type, f"{media.type} · {path.name}{dims} · {size_text}"))
        path_input.value = ""
        self._user_changed()
        self._draw_media()
        self.refresh_checks()

    def attach_media(self, media: Media) -> None:
        """Add a media to the post, and remember how it was shown for when the post is edited in this app."""
        self.media.append(media)
        shell(self).media_labels[media.url] = media.label

    def action_pick_generation(self) -> None:
        from socialpub_tui.screens.generations import (
            GenerationPickerScreen,  # deferred: ~16 ms, on ctrl+g only
        )

        def picked(g: Any) -> None:
            if g is None or not g.media_url:
                return
            if len(self.media) >= MAX_MEDIA:
                self.notify(f"A post has at most {MAX_MEDIA} media.", severity="warning")
                return
            if any(m.url == g.media_url for m in self.media):
                self.notify(f"{g.id} is attached already.", severity="warning")
                return
            prompt = " ".join(g.prompt.split())
            self.attach_media(Media(g.media_url, g.type, f"{g.type} · {g.id} · {prompt[:30]}"))
            self._user_changed()
            self._draw_media()
            self.refresh_checks()

        self.app.push_screen(GenerationPickerScreen(), picked)

    def action_remove_media(self) -> None:
        media_list = self.query_one("#compose-media", OptionList)
        index = media_list.highlighted
        if index is None or not (0 <= index < len(self.media)):
            return
        del self.media[index]
        self._user_changed()
        self._draw_media()
        self.refresh_checks()
