"""`socialpub tiktok`: dedicated TikTok publishing — photo carousels, videos, status (docs/tiktok.md)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from backend.schemas.tiktok import TIKTOK_FINAL, TikTokStatus
from socialpub_tui.cli._common import Output, api_command, get_client
from socialpub_tui.cli.media import is_url, upload_one
from socialpub_tui.client.errors import WaitTimeout
from socialpub_tui.look import inert

if TYPE_CHECKING:
    from backend.schemas.tiktok import TikTokStatusOut
    from socialpub_tui.client.sync import Client

MODES = {"draft": "MEDIA_UPLOAD", "direct": "DIRECT_POST"}
PRIVACY = ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"]
STATUS_COLOURS = {
    "SEND_TO_USER_INBOX": "green",
    "PUBLISH_COMPLETE": "green",
    "FAILED": "red",
    "PROCESSING_UPLOAD": "cyan",
    "PROCESSING_DOWNLOAD": "cyan",
}
WAIT_S = 120.0


@click.group("tiktok")
def tiktok_group() -> None:
    """TikTok: carousels and videos to a connected tiktok account, as a draft or a direct post; status.

    \b
    Examples:
      socialpub tiktok photo a.jpg b.jpg c.jpg --title "Launch" --mode draft --wait
      socialpub tiktok video clip.mp4 --title "Hello #launch" --mode direct --privacy SELF_ONLY
      socialpub tiktok status p_inbox_url~v2.123… --channel acc_01j9… --wait
    """


# ---- shared pieces ---------------------------------------------------------------------------------------


def media_urls(client: Client, out: Output, items: list[str], ingest: bool) -> list[str]:
    """Local files are uploaded first (POST /v1/media); URLs are passed as is (they must be on the media
    host) unless --ingest asks to ingest them too."""

    urls: list[str] = []
    for item in items:
        if is_url(item) and not ingest:
            urls.append(item)
        else:
            urls.append(upload_one(client, out, item).url)
    return urls


def colour(out: Output, status: str) -> str:
    c = STATUS_COLOURS.get(status)
    return out.style(inert(status), fg=c) if c else inert(status)


def describe(status: str) -> str:
    return {
        "SEND_TO_USER_INBOX": "draft delivered to the creator's TikTok inbox: finish it in the app",
        "PUBLISH_COMPLETE": "published on the profile",
        "PROCESSING_UPLOAD": "TikTok is receiving the media",
        "PROCESSING_DOWNLOAD": "TikTok is pulling the media from the media host",
        "FAILED": "failed",
    }.get(status, status)


def show_status(out: Output, publish_id: str, st: TikTokStatusOut) -> None:
    out.fields(
        [("publishId", publish_id), ("status", colour(out, st.status)), ("meaning", describe(st.status))]
        + (
            [("failReason", st.fail_reason), ("why", st.fail_message)]
            if st.status == TikTokStatus.FAILED
            else []
        )
        + ([("channel", st.channel_id)] if st.channel_id else [])
        + ([("postIds", st.public_post_ids)] if st.public_post_ids else [])
    )


class Progress:
    """--wait: one line redrawn in place on a terminal; one line per change otherwise (stderr with --json)."""

    def __init__(self, out: Output, publish_id: str) -> None:
        self.out = out
        self.publish_id = publish_id
        self.live = out.tty and not out.json

    def __call__(self, st: TikTokStatusOut) -> None:
        done = f" {st.downloaded_bytes:,} bytes" if st.downloaded_bytes else ""
        text = f"{self.publish_id}: {colour(self.out, st.status)}{done}"
        if st.status == TikTokStatus.FAILED:
            text += f" ({inert(st.fail_reason)}: {inert(st.fail_message or '')})"
        if self.live:
            sys.stdout.write("\r\x1b[K" + text)
            if st.status in TIKTOK_FINAL:
                sys.stdout.write("\n")
            sys.stdout.flush()
            return
        click.echo(text, err=self.out.json)


def follow(
    client: Client, out: Output, publish_id: str, channel: str | None, timeout: float
) -> TikTokStatusOut:

    try:
        return client.wait_tiktok(publish_id, channel, timeout=timeout, on_update=Progress(out, publish_id))
    except WaitTimeout as exc:
        if out.tty and not out.json:
            sys.stdout.write("\n")
        if exc.post is not None and out.json:
            out.emit(exc.post)
        raise


def finish(out: Output, result: dict[str, Any], st: TikTokStatusOut | None) -> None:
    """Print the publish response (and the final status after --wait); exit 1 when it FAILED."""
    if st is not None:
        result = {**result, "finalStatus": st.model_dump(mode="json", by_alias=True, exclude_none=True)}

    def human() -> None:
        out.fields([(k, v) for k, v in result.items() if k != "finalStatus" and v not in (None, "")])
        if st is not None:
            out.line(
                f"final: {colour(out, st.status)} — {describe(st.status)}"
                + (
                    f" ({inert(st.fail_reason)}: {inert(st.fail_message)})"
                    if st.status == TikTokStatus.FAILED
                    else ""
                )
            )
        else:
            out.line(
                f"follow it: socialpub tiktok status {inert(result['publishId'])} --channel "
                f"{inert(result.get('channelId'))} "
                "--wait"
            )

    out.emit(result, human)
    if st is not None and st.status == TikTokStatus.FAILED:
        raise SystemExit(1)


def common_flags(fn: Any) -> Any:
    for deco in reversed(
        [
            click.option(
                "--title",
                default=None,
                help="Title (photo: 90 characters, pre-filled in a draft; video: 2200, "
                "published in direct mode only).",
            ),
            click.option(
                "--mode",
                type=click.Choice(list(MODES)),
                default=None,
                help="draft (MEDIA_UPLOAD: to the creator's inbox, the server default) or direct (DIRECT_POST).",
            ),
            click.option(
                "--channel",
                default=None,
                metavar="ACCOUNT_ID",
                help="The tiktok account (default: the oldest connected one).",
            ),
            click.option(
                "--privacy",
                type=click.Choice(PRIVACY),
                default=None,
                help="Direct mode: who can see the post, one of the account's privacy levels — required, "
                "asked on a terminal (TikTok makes the creator choose; an unaudited app: SELF_ONLY on a private "
                "account only).",
            ),
            click.option(
                "--no-comments",
                "no_comments",
                is_flag=True,
                default=None,
                help="Direct mode only: disable comments.",
            ),
            click.option(
                "--ingest",
                is_flag=True,
                help="Ingest remote URLs through the media host first (without it, "
                "URLs must already be on the media host).",
            ),
            click.option(
                "--wait",
                is_flag=True,
                help="Follow the publication to its terminal status (every 10 s, "
                "faster embedded; 2 minutes at most); exit 1 if it FAILED.",
            ),
            click.option(
                "--timeout",
                type=float,
                default=WAIT_S,
                show_default=True,
                help="With --wait: give up after this many seconds.",
            ),
        ]
    ):
        fn = deco(fn)
    return fn


def _body(
    title: str | None, mode: str | None, channel: str | None, privacy: str | None, no_comments: bool | None
) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if title is not None:
        body["title"] = title
    if mode:
        body["postMode"] = MODES[mode]
    if channel:
        body["channelId"] = channel
    if mode != "direct" and (privacy or no_comments):
        raise click.UsageError(
            "--privacy and --no-comments apply to --mode direct only (a draft is finished in the TikTok app)"
        )
    if mode == "direct" and not privacy:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise click.UsageError(
                f"--mode direct needs --privacy: who can see the post, one of {', '.join(PRIVACY)} (TikTok "
                "makes the creator choose; the account's own options are checked before anything is sent)"
            )
        privacy = click.prompt(
            "Who can see this TikTok post (TikTok checks it against the account's options)",
            type=click.Choice(PRIVACY),
        )
    if privacy:
        body["privacyLevel"] = privacy
    if no_comments:
        body["disableComment"] = True
    return body


# ---- commands --------------------------------------------------------------------------------------------


@tiktok_group.command("photo")
@click.argument("images", nargs=-1, required=True, metavar="IMAGE...")
@click.option("--description", default=None, help="Description (4000 characters; pre-filled in a draft).")
@common_flags
@click.option(
    "--music", "auto_add_music", is_flag=True, default=None, help="Direct mode only: let TikTok add music."
)
@api_command
def tiktok_photo(
    images: tuple[str, ...],
    description: str | None,
    title: str | None,
    mode: str | None,
    channel: str | None,
    privacy: str | None,
    no_comments: bool | None,
    ingest: bool,
    wait: bool,
    timeout: float,
    auto_add_music: bool | None,
    out: Output,
) -> None:
    """Publish a carousel of 1 to 35 IMAGEs (local files are uploaded first; URLs must be on the media host).

    \b
    Examples:
      socialpub tiktok photo 1.jpg 2.jpg 3.jpg 4.jpg 5.jpg --title "Five" --description "Swipe →" --wait
      socialpub tiktok photo https://media.example/med_01….jpg --mode direct --privacy SELF_ONLY --json
    """
    if len(images) > 35:
        raise click.UsageError(f"at most 35 images; {len(images)} given")
    body = _body(title, mode, channel, privacy, no_comments)
    if auto_add_music:
        if mode != "direct":
            raise click.UsageError("--music applies to --mode direct only")
        body["autoAddMusic"] = True
    if description is not None:
        body["description"] = description
    client = get_client(worker=True)
    body["imageUrls"] = media_urls(client, out, list(images), ingest)
    result = client.publish_tiktok_photo(body).model_dump(mode="json", by_alias=True, exclude_none=True)
    st = (
        follow(client, out, result["publishId"], result.get("channelId") or channel, timeout)
        if wait
        else None
    )
    finish(out, result, st)


@tiktok_group.command("video")
@click.argument("video", metavar="FILE_OR_URL")
@common_flags
@click.option("--no-duet", "no_duet", is_flag=True, default=None, help="Direct mode only: disable duets.")
@click.option(
    "--no-stitch", "no_stitch", is_flag=True, default=None, help="Direct mode only: disable stitches."
)
@api_command
def tiktok_video(
    video: str,
    title: str | None,
    mode: str | None,
    channel: str | None,
    privacy: str | None,
    no_comments: bool | None,
    ingest: bool,
    wait: bool,
    timeout: float,
    no_duet: bool | None,
    no_stitch: bool | None,
    out: Output,
) -> None:
    """Publish a video (a local file is uploaded first; a URL must be on the media host). In draft mode the
    title is not sent (TikTok takes no caption for inbox videos: it is typed in the app).

    \b
    Examples:
      socialpub tiktok video clip.mp4 --title "Hello #launch" --mode direct --wait
      socialpub tiktok video clip.mp4 --mode draft --json | jq -r .publishId
    """
    body = _body(title, mode, channel, privacy, no_comments)
    for flag, key, value in (
        ("--no-duet", "disableDuet", no_duet),
        ("--no-stitch", "disableStitch", no_stitch),
    ):
        if value:
            if mode != "direct":
                raise click.UsageError(f"{flag} applies to --mode direct only")
            body[key] = True
    client = get_client(worker=True)
    body["videoUrl"] = media_urls(client, out, [video], ingest)[0]
    result = client.publish_tiktok_video(body).model_dump(mode="json", by_alias=True, exclude_none=True)
    if mode != "direct" and title and not out.json:
        out.note(
            "note: a draft video carries no title at TikTok; type it in the app when finishing the draft"
        )
    st = (
        follow(client, out, result["publishId"], result.get("channelId") or channel, timeout)
        if wait
        else None
    )
    finish(out, result, st)


@tiktok_group.command("status")
@click.argument("publish_id")
@click.option(
    "--channel",
    default=None,
    metavar="ACCOUNT_ID",
    help="The tiktok account that created it (needed when several are connected).",
)
@click.option(
    "--wait",
    is_flag=True,
    help="Poll until a terminal status (every 10 s, faster embedded; 2 minutes "
    "at most); exit 1 if it FAILED.",
)
@click.option(
    "--timeout",
    type=float,
    default=WAIT_S,
    show_default=True,
    help="With --wait: give up after this many seconds.",
)
@api_command
def tiktok_status(publish_id: str, channel: str | None, wait: bool, timeout: float, out: Output) -> None:
    """Show a publication's status: PROCESSING_UPLOAD/DOWNLOAD, then SEND_TO_USER_INBOX (draft delivered),
    PUBLISH_COMPLETE or FAILED with its failReason. With --wait, exit 1 if it FAILED.

    \b
    Examples:
      socialpub tiktok status v_pub_url~v2.123… --wait
      socialpub tiktok status p_inbox_url~v2.456… --channel acc_01j9… --json | jq -r .status
    """
    client = get_client(worker=wait)
    st = (
        follow(client, out, publish_id, channel, timeout)
        if wait
        else client.tiktok_status(publish_id, channel)
    )
    out.emit(
        st.model_dump(mode="json", by_alias=True, exclude_none=True), lambda: show_status(out, publish_id, st)
    )
    if wait and st.status == TikTokStatus.FAILED:
        raise SystemExit(1)
