"""`socialpub media`: ingest images and videos (local files or URLs) and list the media library."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from backend.schemas.media import MediaOut
from backend.schemas.statuses import GenerationStatus
from socialpub_tui.cli._common import Output, api_command, get_client, short_time, time_options
from socialpub_tui.client.errors import ApiError
from socialpub_tui.look import inert

if TYPE_CHECKING:
    from backend.schemas.media import MediaOut
    from socialpub_tui.client.sync import Client


def is_url(item: str) -> bool:
    return item.startswith(("http://", "https://"))


def upload_one(client: Client, out: Output, item: str) -> MediaOut:
    """Upload a local file (progress bar on a terminal) or ingest a URL; `gen:ID` is the produced file of a
    completed generation (already on the media host: nothing is uploaded)."""

    if item.startswith("gen:"):
        return generated(client, item[4:])
    try:
        return _upload(client, out, item)
    except ApiError as err:
        if err.status:  # the API refused this file or URL: say which (a command may upload several)
            err.message = f"{item}: {err.message}"
        raise


def _upload(client: Client, out: Output, item: str) -> MediaOut:
    if is_url(item):
        return client.upload_media_url(item)
    path = Path(item).expanduser()
    if not path.is_file():
        raise click.BadParameter(f"{item}: no such file (give a path or an http(s) URL)", param_hint="media")
    if not (out.tty and out.err_tty) or out.json:
        return client.upload_media_file(path)
    size = path.stat().st_size
    with click.progressbar(
        length=size,
        label=f"uploading {path.name}",
        file=click.get_text_stream("stderr"),
        show_pos=False,
        show_percent=True,
    ) as bar:
        state = {"sent": 0}

        def progress(sent: int) -> None:
            bar.update(sent - state["sent"])
            state["sent"] = sent

        return client.upload_media_file(path, progress)


def generated(client: Client, generation_id: str) -> MediaOut:
    """`gen:ID`: the generation's file, as the media object of its mediaUrl."""

    g = client.get_generation(generation_id)
    if g.status != GenerationStatus.COMPLETED or not g.media_url:
        why = f" ({inert(g.error)})" if g.error else "; wait for it: socialpub gen show ID --wait"
        raise click.ClickException(f"gen:{generation_id} is {g.status}, it has no file yet{why}")
    return MediaOut(
        type=g.type, url=g.media_url, key=g.media_url.rsplit("/", 1)[-1], bytes=0, mime_type=g.mime_type
    )


def upload_all(client: Client, out: Output, items: list[str]) -> list[MediaOut]:
    return [upload_one(client, out, item) for item in items]


@click.group("media")
def media_group() -> None:
    """Media: upload images and videos so they are served from the media host; list the library.

    \b
    Examples:
      socialpub media upload photo.jpg clip.mp4
      socialpub media upload https://example.com/video.mp4 --json | jq -r '.[0].url'
      socialpub media list --type video
    """


@media_group.command("upload")
@click.argument("items", nargs=-1, required=True, metavar="FILE_OR_URL...")
@api_command
def media_upload(items: tuple[str, ...], out: Output) -> None:
    """Upload local files (converted/checked server side) or ingest files from public URLs.

    Images become JPEG (longer side at most 1080 px); videos (MP4, MOV, WebM) are stored as is. Files stay
    30 days, or until 30 days after the post using them is sent.

    \b
    Example:
      socialpub media upload ~/shots/launch.png --json | jq -r '.[].url'
    """
    client = get_client(worker=False)
    done: list[Any] = []
    for item in items:
        media = upload_one(client, out, item)
        done.append(media)
        if not out.json:
            dims = f" {media.width}x{media.height}" if media.width else ""
            out.line(f"{inert(item)} -> {inert(media.url)}  ({media.type}{dims}, {media.bytes} bytes)")
    out.emit(done)


@media_group.command("list")
@click.option(
    "--type", "kind", type=click.Choice(["image", "video"]), default=None, help="Only images or videos."
)
@click.option(
    "--limit", type=click.IntRange(1, 10000), default=50, show_default=True, help="At most this many."
)
@time_options
@api_command
def media_list(kind: str | None, limit: int, out: Output) -> None:
    """List the media library, newest first, with each file's expiry.

    \b
    Example:
      socialpub media list --type image --json | jq -r '.[] | [.url, .expiresAt] | @tsv'
    """
    items = list(get_client(worker=False).iter_media(max_items=limit, type=kind))
    out.emit(
        items,
        lambda: out.table(
            [
                (
                    m.key,
                    m.type,
                    f"{m.width}x{m.height}" if m.width else "-",
                    m.bytes,
                    m.origin,
                    short_time(m.created_at),
                    short_time(m.expires_at) if m.expires_at else "held",
                    m.url,
                )
                for m in items
            ],
            ["KEY", "TYPE", "SIZE", "BYTES", "ORIGIN", "CREATED", "EXPIRES", "URL"],
            empty="(no media)",
        ),
    )


@media_group.command("delete")
@click.argument("key")
@api_command
def media_delete(key: str, out: Output) -> None:
    """Delete a file from the media host (refused while a scheduled post uses it).

    \b
    Example:
      socialpub media delete 01j9x7abc.jpg
    """
    res = get_client(worker=False).delete_media(key)
    out.emit(res, f"Deleted {inert(res.key)}.")
