"""`socialpub gen`: create images and videos from a prompt (with a cost preview), list, show, delete, download.

A creation is asynchronous (spec 3.3): `create` answers at once with a `pending` generation; `--wait` follows it to
`completed` or `failed` with a spinner. The produced file is on the media host: post it with
`socialpub posts create … --media gen:ID`.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from backend.schemas.statuses import GenerationStatus
from socialpub_tui.cli._common import Output, api_command, get_client, short_time, time_options
from socialpub_tui.cli.media import is_url, upload_one
from socialpub_tui.client.errors import WaitTimeout
from socialpub_tui.look import inert

if TYPE_CHECKING:
    from backend.schemas.generations import GenerationOut, GenerationQuote
    from socialpub_tui.client.sync import Client

TYPES = ["image", "video"]
ASPECTS = ["9:16", "1:1", "16:9"]
DURATIONS = ["5", "10", "15"]
EXTENSIONS = {
    "image/jpeg": ".jpg",
    "image/png": ".png",
    "image/webp": ".webp",
    "video/mp4": ".mp4",
    "video/quicktime": ".mov",
    "video/webm": ".webm",
}


@click.group("gen")
def gen_group() -> None:
    """Generations: an image, or a 5, 10 or 15 second video with soundtrack, from a text prompt.

    Credits (spec 8): an image costs 2; a video 15, 30 or 45 for 5, 10 or 15 seconds. A creation that fails is
    refunded in full. Needs a current subscription.

    \b
    Examples:
      socialpub gen create --type image --prompt "A flat white on a sunny terrace" --aspect 1:1 --wait
      socialpub gen create --type video --prompt "Slow pan over roasted beans" --duration 10 --dry-run
      socialpub gen create --type video --prompt "From dawn to dusk" --source first.jpg --source last.jpg --wait
      socialpub posts create "Fresh beans" --to youtube --media gen:gen_01j9…
    """


# ---- shared pieces ---------------------------------------------------------------------------------------


def what(type_: str, duration: int | None) -> str:
    return "an image" if type_ == "image" else f"a {duration or 5}-second video"


def show_generation(out: Output, g: GenerationOut) -> None:
    pairs: list[tuple[str, Any]] = [
        ("id", g.id),
        ("type", g.type),
        ("status", out.status(g.status)),
        ("prompt", g.prompt),
        ("aspectRatio", g.aspect_ratio),
    ]
    if g.type == "video":
        pairs.append(("durationSec", g.duration_sec))
    pairs += [
        ("sourceUrls", g.source_urls or None),
        *([("backgroundUrl", g.background_url)] if g.background_url else []),
        ("creditsCost", g.credits_cost),
        ("createdAt", short_time(g.created_at)),
    ]
    if g.completed_at:
        pairs.append(("completedAt", short_time(g.completed_at)))
    if g.media_url:
        pairs += [("mediaUrl", g.media_url), ("mimeType", g.mime_type)]
    if g.error:
        pairs.append(("error", g.error))
    out.fields(pairs)
    if g.status == GenerationStatus.COMPLETED:
        out.line(f'Post it: socialpub posts create "…" --to NETWORK --media gen:{g.id}  (socialpub networks)')


class Spinner:
    """--wait: on a terminal, a spinner with the status and the time spent, redrawn on stderr; otherwise one line
    per status change on stderr (stdout keeps the result)."""

    FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, out: Output, generation_id: str) -> None:
        self.out = out
        self.id = generation_id
        self.live = out.err_tty
        self.status = GenerationStatus.PENDING
        self.started = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._seen: str | None = None

    def __enter__(self) -> Spinner:
        if self.live:
            self._thread = threading.Thread(target=self._spin, name="socialpub-spinner", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()

    def _spin(self) -> None:
        frames = 0
        while not self._stop.wait(0.1):
            frame = self.FRAMES[frames % len(self.FRAMES)]
            frames += 1
            sys.stderr.write(
                f"\r\x1b[K{frame} {self.id} {self.status} ({time.monotonic() - self.started:.0f} s)"
            )
            sys.stderr.flush()

    def __call__(self, g: GenerationOut) -> None:
        self.status = g.status
        if not self.live and g.status != self._seen:
            self._seen = g.status
            click.echo(f"{g.id}: {g.status}", err=True)


def follow(
    client: Client, out: Output, generation_id: str, timeout: float | None, *, progress: bool = True
) -> GenerationOut:
    """Wait for the generation (with `progress`, a spinner), `timeout` seconds at most (WaitTimeout)."""

    spinner = Spinner(out, generation_id)
    try:
        if not progress:
            return client.wait_generation(generation_id, timeout=timeout)
        with spinner:
            return client.wait_generation(generation_id, timeout=timeout, on_update=spinner)
    except WaitTimeout as exc:
        if exc.post is not None and out.json:
            out.emit(exc.post)
        if getattr(client, "embedded", False):  # the worker making it ends with this command
            raise WaitTimeout(
                f"{exc.message}; the embedded backend makes it inside this command, so it stops "
                "here: it ends failed, its credits refunded, when a socialpub command next runs the "
                "worker. Give it a longer --timeout, or make it on a server (`socialpub serve`)",
                exc.post,
            ) from None
        raise


def finish(out: Output, g: GenerationOut, waited: bool) -> None:
    """Print the generation; after --wait exit 1 when it failed (its error on stderr)."""
    out.emit(g, lambda: show_generation(out, g))
    if waited and g.status == GenerationStatus.FAILED:
        if not out.json:
            out.note(f"Error: {inert(g.error)}")
        raise SystemExit(1)


def sources(client: Client, out: Output, items: tuple[str, ...]) -> list[str]:
    """--source: URLs (and gen:ID) as they are; a local file is uploaded first (POST /v1/media)."""

    return [item if is_url(item) else upload_one(client, out, item).url for item in items]


def show_quote(out: Output, q: GenerationQuote) -> None:
    thing = what(q.type, q.duration_sec)
    if q.enough:
        out.line(
            f"{thing[0].upper()}{thing[1:]} costs {q.credits_cost} credits: balance {q.balance} → "
            f"{q.balance_after}. Nothing was created or charged."
        )
    else:
        out.line(
            f"Not enough credits: {thing} costs {q.credits_cost}, the balance is {q.balance} "
            f"({q.credits_cost - q.balance} missing). Nothing was created or charged."
        )


# ---- commands --------------------------------------------------------------------------------------------


@gen_group.command("create")
@click.option("--type", "type_", type=click.Choice(TYPES), required=True, help="image or video.")
@click.option("--prompt", required=True, help="What to create: 3 to 1,800 characters ('-' reads stdin).")
@click.option("--aspect", type=click.Choice(ASPECTS), default=None, help="Aspect ratio (default 9:16).")
@click.option(
    "--duration",
    type=click.Choice(DURATIONS),
    default=None,
    help="Video length in seconds (default 5): 15, 30 or 45 credits.",
)
@click.option(
    "--source",
    "sources_",
    multiple=True,
    metavar="URL_OR_FILE",
    help="Video: a start image (repeat once more for the last frame). Local files are uploaded first.",
)
@click.option(
    "--background",
    metavar="URL_OR_FILE",
    default=None,
    help="Image: your own photo as the design's background (an announcement card: the prompt's words and your "
    "brand set over it, legible). A local file is uploaded first. The local renderer only.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Only print the cost and the balance after (exit 1 when the balance "
    "is short); nothing is created or charged.",
)
@click.option(
    "--wait", is_flag=True, help="Follow it to completed or failed with a spinner; exit 1 if it failed."
)
@click.option(
    "--timeout",
    type=float,
    default=None,
    help="With --wait: give up after this many seconds (embedded: the creation stops with the command).",
)
@api_command
def gen_create(
    type_: str,
    prompt: str,
    aspect: str | None,
    duration: str | None,
    sources_: tuple[str, ...],
    background: str | None,
    dry_run: bool,
    wait: bool,
    timeout: float | None,
    out: Output,
) -> None:
    """Create an image or a video from a prompt (202: `pending`, the credits charged).

    On the embedded backend the worker lives in this command, so the command stays until the file is made even
    without --wait (Ctrl-C interrupts the creation: it ends failed and refunded).

    \b
    Examples:
      socialpub gen create --type image --prompt "Latte art close-up" --aspect 1:1 --wait
      socialpub gen create --type video --prompt "Beans falling" --duration 15 --dry-run --json
      socialpub gen create --type video --prompt "Sunrise" --source start.jpg --wait --json | jq -r .mediaUrl
      socialpub gen create --type image --prompt '"Grand opening" "Saturday 10am"' --background shop.jpg --wait
    """
    if prompt == "-":
        prompt = sys.stdin.read().strip()
    if type_ == "image" and (duration or sources_):
        raise click.UsageError("--duration and --source are for videos only (--type video)")
    if type_ == "video" and background:
        raise click.UsageError(
            "--background is for images (--type image); a video takes --source start images"
        )
    if len(sources_) > 2:
        raise click.UsageError("at most two --source: a start image, or a first and a last frame")
    body: dict[str, Any] = {"type": type_, "prompt": prompt}
    if aspect:
        body["aspectRatio"] = aspect
    if duration:
        body["durationSec"] = int(duration)
    client = get_client(worker=not dry_run)
    if dry_run:
        quote = client.create_generation(body, dry_run=True)
        out.emit(quote, lambda: show_quote(out, quote))  # type: ignore[arg-type]  # a dry run answers a GenerationQuote (create_generation's union)
        if not quote.enough:  # type: ignore[union-attr]  # a dry run answers a GenerationQuote (create_generation's union)
            raise SystemExit(1)
        return
    if sources_:
        body["sourceUrls"] = sources(client, out, sources_)
    if background:
        (body["backgroundUrl"],) = sources(client, out, (background,))
    created: GenerationOut = client.create_generation(body)  # type: ignore[assignment]  # without dry_run create_generation answers a GenerationOut
    if not wait and not getattr(client, "embedded", False):

        def human() -> None:
            show_generation(out, created)
            out.line(f"Follow it: socialpub gen show {created.id} --wait")

        out.emit(created, human)
        return
    if not out.json:
        out.note(
            f"Created {created.id} ({what(created.type, created.duration_sec)}, {created.credits_cost} "
            "credits); "
            + (
                "waiting for it — Ctrl-C stops watching."
                if wait
                else "producing it in this process (embedded backend) — Ctrl-C interrupts it."
            )
        )
    final = follow(client, out, created.id, timeout, progress=wait)
    finish(out, final, waited=wait)


@gen_group.command("list")
@click.option(
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice([s.value for s in GenerationStatus]),
    help="Only these statuses (repeat).",
)
@click.option("--type", "type_", type=click.Choice(TYPES), default=None, help="Only images or only videos.")
@click.option(
    "--limit",
    type=click.IntRange(1, 10000),
    default=20,
    show_default=True,
    help="At most this many (pages are followed).",
)
@time_options
@api_command
def gen_list(statuses: tuple[str, ...], type_: str | None, limit: int, out: Output) -> None:
    """Recent creations, newest first, and the credit balance. --json: {"items": [...], "credits": {...}}.

    \b
    Example:
      socialpub gen list --status completed --json | jq -r '.items[].mediaUrl'
    """
    client = get_client(worker=False)
    filters = {"status": list(statuses) or None, "type": type_, "limit": min(limit, 100)}
    first = page = client.list_generations(**filters)
    items = list(page.items)
    while page.next_cursor and len(items) < limit:
        page = client.list_generations(**filters, cursor=page.next_cursor)
        items += page.items
    items = items[:limit]

    def human() -> None:
        out.table(
            [
                (
                    g.id,
                    g.type + (f" {g.duration_sec}s" if g.duration_sec else ""),
                    out.status(g.status),
                    g.credits_cost,
                    short_time(g.created_at),
                    g.prompt,
                )
                for g in items
            ],
            ["ID", "TYPE", "STATUS", "COST", "CREATED", "PROMPT"],
            empty="(no creations)",
        )
        out.line(
            f"credits: {first.credits.balance} (image {first.credits.cost.get('IMAGE')}; video "
            + " / ".join(f"{s} s {c}" for s, c in first.credits.clip.items())
            + ")"
        )

    out.emit({"items": items, "credits": first.credits}, human)


@gen_group.command("show")
@click.argument("generation_id", metavar="ID")
@click.option("--wait", is_flag=True, help="Follow it to completed or failed; exit 1 if it failed.")
@click.option("--timeout", type=float, default=None, help="With --wait: give up after this many seconds.")
@time_options
@api_command
def gen_show(generation_id: str, wait: bool, timeout: float | None, out: Output) -> None:
    """One creation: status, and its mediaUrl or error.

    \b
    Example:
      socialpub gen show gen_01j9… --wait
    """
    client = get_client(worker=wait)
    g = follow(client, out, generation_id, timeout) if wait else client.get_generation(generation_id)
    finish(out, g, waited=wait)


@gen_group.command("delete")
@click.argument("generation_id", metavar="ID")
@api_command
def gen_delete(generation_id: str, out: Output) -> None:
    """Remove a creation from the list; its file is deleted unless a post not yet sent uses it.

    \b
    Example:
      socialpub gen delete gen_01j9…
    """
    res = get_client(worker=False).delete_generation(generation_id)

    def human() -> None:
        line = f"Deleted {res.id} ({res.status})."
        if res.media_deleted:
            line += " Its file was deleted."
        elif res.media_kept_by:
            line += f" Its file is kept for {inert(', '.join(res.media_kept_by))} (until sent + 30 days)."
        if res.credits_refunded:
            line += f" {res.credits_refunded} credits were refunded."
        out.line(line)

    out.emit(res, human)


@gen_group.command("download")
@click.argument("generation_id", metavar="ID")
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Where to save it (default: ID.jpg / ID.mp4 in the current directory; '-' for stdout).",
)
@api_command
def gen_download(generation_id: str, output: str | None, out: Output) -> None:
    """Save the produced file of a completed creation.

    \b
    Example:
      socialpub gen download gen_01j9… -o launch.mp4
    """
    client = get_client(worker=False)
    g = client.get_generation(generation_id)
    if g.status != GenerationStatus.COMPLETED or not g.media_url:
        why = f": {inert(g.error)}" if g.error else " (follow it with `socialpub gen show ID --wait`)"
        raise click.ClickException(f"{g.id} is {g.status}, there is no file to download{why}")
    if output == "-":
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "file"
            client.download_media(g.media_url, path)
            sys.stdout.buffer.write(path.read_bytes())
            sys.stdout.flush()
        return
    path = Path(output) if output else Path(g.id + EXTENSIONS.get(g.mime_type or "", ""))
    written = client.download_media(g.media_url, path)
    out.emit(
        {"id": g.id, "path": str(path), "bytes": written, "mediaUrl": g.media_url, "mimeType": g.mime_type},
        f"Saved {path} ({written:,} bytes, {g.mime_type}).",
    )
