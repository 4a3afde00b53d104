"""`socialpub posts`: create (now or scheduled, with media), list, show, edit, cancel, retry."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from backend.schemas.statuses import PostStatus
from socialpub_tui import times as _time
from socialpub_tui.cli._common import (
    Output,
    api_command,
    clip,
    get_client,
    platform_choice,
    reading_zone,
    short_time,
    time_options,
    tz_option,
    utc_option,
)
from socialpub_tui.cli.media import upload_all
from socialpub_tui.cli.network_flags import flag_for, option_flags
from socialpub_tui.client.errors import ApiError, WaitTimeout
from socialpub_tui.look import inert

if TYPE_CHECKING:
    from backend.schemas.posts import PostOut
    from socialpub_tui.client.sync import Client


@click.group("posts")
def posts_group() -> None:
    """Posts: one text and its media to several networks, now or at a set time.

    \b
    Examples:
      socialpub posts create "Launch day!" --to instagram --to linkedin --media photo.jpg --wait
      socialpub posts create "Tomorrow" --to facebook --at "tomorrow 9:00"
      socialpub posts list --status failed
      socialpub posts retry post_01j9…
    """


# ---- shared pieces ---------------------------------------------------------------------------------------


def parse_targets(values: tuple[str, ...]) -> list[Any]:
    """`instagram` → "instagram"; `linkedin:acc_123` → {"platform": "linkedin", "channelId": "acc_123"}."""
    targets: list[Any] = []
    for value in values:
        platform, sep, channel = value.partition(":")
        platform = platform.strip().lower()
        if not platform:
            raise click.BadParameter(f"{value!r}: expected NETWORK or NETWORK:ACCOUNT_ID", param_hint="--to")
        targets.append(
            {"platform": platform, "channelId": channel.strip()} if sep and channel.strip() else platform
        )
    return targets


def read_text(text: str | None, text_file: str | None) -> str | None:
    if text_file:
        with click.open_file(text_file, encoding="utf-8") as fh:
            return str(fh.read())
    if text == "-":
        return sys.stdin.read()
    return text


def resolve_at(out: Output, at: str | None, tz: str | None) -> str | None:
    """The UTC instant of --at, printed (stderr) in the zone it was read in and in UTC."""
    if at is None:
        return None

    tz = reading_zone(tz)
    try:
        instant = _time.resolve(at, tz)
    except _time.TimeError as exc:
        raise click.BadParameter(str(exc), param_hint="--at") from None
    out.note(f"--at read as {_time.describe(instant, tz)}")  # before the API answers: not yet accepted
    twice = _time.ambiguity(at, tz, instant)
    if twice:
        out.note(f"Note: {twice}")
    return _time.iso_utc(instant)


def next_attempt(target: Any) -> tuple[str, str] | None:
    """For a target waiting for its next attempt (API field `nextAttemptAt`, absent from older servers):
    (`in 4 min`, `2027-01-15 09:04 CET`); else None."""

    value = getattr(target, "next_attempt_at", None)
    instant = _time.parse_instant(value) if value else None
    if instant is None:
        return None
    return _time.relative(instant), short_time(value)


def post_rows(out: Output, post: PostOut) -> list[tuple[Any, ...]]:
    rows = []
    for t in post.targets:
        waiting = next_attempt(t)
        detail = (
            t.post_url
            or (
                f"next attempt {waiting[0]}" + (f": {t.fail_reason}" if t.fail_reason else "")
                if waiting
                else t.fail_reason
            )
            or ""
        )
        if warnings_of(t):
            detail = f"{detail}  [warning: {', '.join(w.code for w in warnings_of(t))}]".strip()
        rows.append((t.platform, t.account_name, out.status(t.status), t.fail_type or "", detail))
    return rows


def warnings_of(target: Any) -> list[Any]:
    """A target's warnings (API field `warnings`, `[{code, message}]`; absent from older servers)."""
    return list(getattr(target, "warnings", None) or [])


def warning_lines(post: PostOut) -> list[str]:
    """One line per warning of each target, in full: what the network did not do as asked and what to do."""
    return [
        f"  {t.platform} ({inert(t.account_name)}) warning {inert(w.code)}: {inert(w.message)}"
        for t in post.targets
        for w in warnings_of(t)
    ]


TARGET_HEADERS = ["NETWORK", "ACCOUNT", "STATUS", "FAIL", "LINK / REASON"]


def show_post(out: Output, post: PostOut) -> None:
    when = (
        f"scheduled {short_time(post.scheduled_at)} ({post.scheduled_at})"
        if post.scheduled_at
        else "immediate"
    )
    out.line(f"{post.id}  {out.status(post.status)}  {when}")
    first = post.content.splitlines()[0] if post.content else ""
    out.line(f"  text   {inert(first[:100])}{'…' if len(post.content) > len(first[:100]) else ''}")
    for url in post.media_urls:
        out.line(f"  media  {inert(url)}")
    if post.idempotency_key:
        out.line(f"  key    {inert(post.idempotency_key)}")
    out.table(post_rows(out, post), TARGET_HEADERS)
    for t in post.targets:  # the table cuts long text: each failure reason in full, with what to do
        waiting = next_attempt(t)
        if waiting:
            out.line(
                f"  {t.platform} ({inert(t.account_name)}) {t.status}: next attempt {waiting[0]}, at {waiting[1]}"
                + (f" ({inert(t.fail_reason)})" if t.fail_reason else "")
            )
        elif t.fail_reason and len(t.fail_reason) > 59:
            out.line(
                f"  {t.platform} ({inert(t.account_name)}) {t.fail_type or 'failed'}: {inert(t.fail_reason)}"
            )
    for line in warning_lines(post):
        out.line(line)


class LiveView:
    """--wait: the per-target table redrawn in place on a terminal; one line per change otherwise
    (on stderr with --json, so stdout keeps one JSON document)."""

    def __init__(self, out: Output) -> None:
        self.out = out
        self.live = out.tty and not out.json
        self.lines = 0
        self.seen: dict[tuple[str, str | None], str] = {}
        self.warned: set[tuple[tuple[str, str | None], str]] = set()

    def __call__(self, post: PostOut) -> None:
        if self.live:
            if self.lines:
                sys.stdout.write(f"\x1b[{self.lines}F\x1b[J")
            rows = post_rows(self.out, post)
            self.out.line(f"{post.id}  {self.out.status(post.status)}")
            self.out.table(rows, TARGET_HEADERS)
            warnings = warning_lines(post)
            for line in warnings:
                self.out.line(line)
            self.lines = len(rows) + 2 + len(warnings)
            return
        for t in post.targets:
            key = (t.platform, t.account_id)
            if self.seen.get(key) != t.status:
                self.seen[key] = t.status
                line = f"{post.id} {t.platform} {inert(t.account_name)}: {t.status}" + (
                    f" ({t.fail_type + ': ' if t.fail_type else ''}{inert(t.fail_reason)})"
                    if t.fail_reason
                    else f" {inert(t.post_url)}"
                    if t.post_url
                    else ""
                )
                click.echo(line, err=self.out.json)
            for w in warnings_of(t):
                if (key, w.code) not in self.warned:
                    self.warned.add((key, w.code))
                    click.echo(
                        f"{post.id} {t.platform} {inert(t.account_name)}: warning {inert(w.code)}: "
                        f"{inert(w.message)}",
                        err=self.out.json,
                    )


def wait_and_report(client: Client, out: Output, post: PostOut, timeout: float | None) -> PostOut:
    view = LiveView(out)
    try:
        final = client.wait_post(post.id, timeout=timeout, on_update=view)
    except WaitTimeout as exc:
        if exc.post is not None and out.json:
            out.emit(exc.post)
        raise
    return final


def note_unsent(client: Client, out: Output, post: PostOut) -> None:
    """Embedded, not waiting: this process's worker stops when the command ends, so say who will send it."""
    if getattr(client, "embedded", False) and post.status == PostStatus.PROCESSING:
        out.note(
            f"Sending {post.id} before this command exits (follow it with `socialpub posts show {post.id} "
            "--wait`; a confirmation that takes longer is picked up by `socialpub serve`, `worker` or `tick`)."
        )


def exit_for(post: PostOut) -> None:
    """After --wait: exit 1 unless every target succeeded (or delivered its draft)."""
    if post.status != PostStatus.COMPLETED:
        raise SystemExit(1)


# ---- commands --------------------------------------------------------------------------------------------


def on_terminal() -> bool:
    """Whether a question can be asked (stdin and stdout are a terminal)."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def creator_lines(
    client: Client, network: str, account_id: str | None, options: dict[str, Any] | None = None
) -> list[str]:
    """What to show before the creator chooses (GET /v1/accounts/{id}/choices of the target's account, else of the
    network's default account): whom the post goes to, the network's notes, the label the post gets for what its
    `options` say (a set option's `x-note` in the network's options schema: TikTok's 'Paid partnership') and the
    consent sentence (a set option's `x-consent`, else the network's). Nothing when the server cannot tell (an older
    server, the network unreachable): the question is asked all the same."""
    try:
        if account_id is None:
            account_id = next(
                (a.id for a in client.list_accounts().items if a.platform == network and a.is_default), None
            )
        if account_id is None:
            return []
        found = client.account_choices(account_id)
    except ApiError:
        return []
    lines: list[str] = []
    if found.creator is not None and (found.creator.name or found.creator.handle):
        who = " ".join(
            x for x in (found.creator.name, f"@{found.creator.handle}" if found.creator.handle else "") if x
        )
        lines.append(f"Posting to {inert(network)} as {inert(who)}")
    lines.extend(inert(n) for n in found.notes)
    consent = found.consent
    try:
        props = (client.networks().options_schema(network) or {}).get("properties") or {}
    except ApiError:
        props = {}
    labels: list[str] = []
    for name, prop in props.items():
        if (options or {}).get(name) is True:
            labels += [str(prop["x-note"])] if prop.get("x-note") else []
            consent = str(prop.get("x-consent") or consent or "") or None
    lines += (
        [inert(labels[-1])] if labels else []
    )  # the later one's (TikTok: both ticked → 'Paid partnership')
    if consent:
        lines.append(inert(consent))
    return lines


def create_with_choices(client: Client, body: dict[str, Any]) -> Any:
    """POST /v1/posts. A network may require a choice only the creator makes (TikTok: who sees a direct post,
    nothing pre-selected): the server refuses the target with a detail naming the option (`field`) and the values
    the account allows (`allowed`, TikTok's from its creator_info). When every refusal is such a choice: on a
    terminal each is asked among those values — after whom the post goes to, the network's notes and its consent
    sentence (creator_lines) — and the post is sent again (nothing was stored); elsewhere a usage error names them
    and the flag that gives them."""
    try:
        return client.create_post(body)
    except ApiError as err:
        choices: dict[tuple[str, str], list[str]] = {}
        messages: dict[tuple[str, str], str] = {}
        for d in err.details:
            allowed = [str(v) for v in d.get("allowed") or []]
            if not (d.get("field") and d.get("platform") and allowed):
                raise
            key = (str(d["platform"]), str(d["field"]))
            # several accounts of one network: the values every one allows
            choices[key] = [v for v in choices.get(key, allowed) if v in allowed]
            messages.setdefault(key, str(d.get("message") or ""))
        if not choices or not all(choices.values()):
            raise
        if not on_terminal():
            raise click.UsageError(
                "; ".join(
                    f"{inert(network)} needs {flag_for(network, field)}: one of {', '.join(values)} "
                    f"({inert(messages[network, field])})"
                    for (network, field), values in choices.items()
                )
            ) from None
        options = {k: dict(v) for k, v in (body.get("options") or {}).items()}
        accounts = {str(d["platform"]): d.get("channelId") for d in err.details}
        for network in dict.fromkeys(n for n, _f in choices):
            for line in creator_lines(client, network, accounts.get(network), options.get(network)):
                click.echo(line, err=True)
        for (network, field), values in choices.items():
            options.setdefault(network, {})[field] = click.prompt(
                f"{inert(messages[network, field])}\n{network} {field}", type=click.Choice(values), err=True
            )
        return client.create_post({**body, "options": options})


@posts_group.command("create")
@click.argument("text", required=False)
@click.option("--file", "text_file", default=None, help="Read the text from a file ('-' for stdin).")
@click.option(
    "--to",
    "targets",
    multiple=True,
    required=True,
    metavar="NETWORK[:ACCOUNT_ID]",
    help="A target (repeat): a network name (its default account) or network:accountId.",
)
@click.option(
    "--media",
    "media",
    multiple=True,
    metavar="FILE_OR_URL",
    help="An image or video (repeat, up to 10): local files are uploaded first; gen:ID posts a creation.",
)
@click.option(
    "--at",
    default=None,
    help="When to publish: '2026-12-01 09:00', 'tomorrow 9:00', '+2h' or ISO 8601 with offset. Default: now.",
)
@tz_option(
    expose=True,
    help="Time zone of --at without offset and of the times shown (IANA name, e.g. Europe/Paris; default: the profile's `timezone`, else the system's).",
)
@utc_option(help="Read the times given without offset, and show times, in UTC.")
@option_flags
@click.option(
    "--idempotency-key", default=None, help="Stable key: re-running returns the same post, no duplicate."
)
@click.option(
    "--wait",
    is_flag=True,
    help="Follow the post to its final state (live per-target view); exit 1 unless it completed.",
)
@click.option("--timeout", type=float, default=None, help="With --wait: give up after this many seconds.")
@api_command
def posts_create(
    text: str | None,
    text_file: str | None,
    targets: tuple[str, ...],
    media: tuple[str, ...],
    at: str | None,
    tz: str | None,
    options: dict[str, Any] | None,
    idempotency_key: str | None,
    wait: bool,
    timeout: float | None,
    out: Output,
) -> None:
    """Publish TEXT (or --file; '-' reads stdin) to one or more networks, now or at --at.

    \b
    Examples:
      socialpub posts create "Hello" --to instagram --to linkedin:acc_01j9… --media photo.jpg --wait
      socialpub posts create "Soon" --to facebook --at "2026-12-01 09:00" --tz Europe/Paris
      socialpub posts create "Draft" --to tiktok --media clip.mp4 --tiktok-mode draft --json | jq -r .id
      socialpub posts create "Clip" --to youtube --media clip.mp4 --option youtube.privacyStatus=unlisted
    """
    content = read_text(text, text_file)
    if content is None:
        raise click.UsageError("give the TEXT of the post (or --file PATH)")
    if len(media) > 10:
        raise click.UsageError("at most 10 --media")
    body: dict[str, Any] = {"targets": parse_targets(targets), "content": content}
    scheduled = resolve_at(out, at, tz)
    if scheduled:
        body["scheduledAt"] = scheduled
    if options:
        body["options"] = options
    if idempotency_key:
        body["idempotencyKey"] = idempotency_key
    client = get_client()
    if media:
        body["mediaUrls"] = [m.url for m in upload_all(client, out, list(media))]
    post = create_with_choices(client, body)
    if getattr(post, "_http_status", None) == 200:
        out.note(
            f"The idempotency key {inert(repr(idempotency_key))} was used already: this is the existing post "
            f"{post.id}; nothing new was created."
        )
    if not wait:
        note_unsent(client, out, post)
        out.emit(post, lambda: show_post(out, post))
        return
    if not out.json:
        out.line(
            f"Created {post.id} ({post.status}); following it{' until its time' if post.scheduled_at else ''}"
            " — Ctrl-C stops watching, not the post."
        )
    final = wait_and_report(client, out, post, timeout)
    out.emit(final, lambda: show_post(out, final) if not LiveView(out).live else None)
    exit_for(final)


@posts_group.command("list")
@click.option(
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice([s.value for s in PostStatus]),
    help="Only these statuses (repeat).",
)
@click.option("--platform", type=platform_choice(), default=None, help="Posts with a target on this network.")
@click.option("--account", "account_id", default=None, help="Posts with a target on this account id.")
@click.option(
    "--from", "since", default=None, help="Created (or scheduled, --scheduled) at or after this time."
)
@click.option("--to", "until", default=None, help="Created (or scheduled) before this time.")
@tz_option(
    expose=True,
    help="Time zone of --from/--to without offset and of the times shown (IANA name; default: the profile's `timezone`, else the system's).",
)
@utc_option(help="Read the times given without offset, and show times, in UTC.")
@click.option("--scheduled", is_flag=True, help="--from/--to apply to the scheduled time, not creation.")
@click.option("--idempotency-key", default=None, help="The post created with this key.")
@click.option("--search", "q", default=None, help="Posts whose text contains this (ignoring case).")
@click.option(
    "--label",
    "labels",
    multiple=True,
    metavar="KEY=VALUE",
    help="Posts carrying this label (repeat: all of them), e.g. socialpub.recipe/set=january.",
)
@click.option(
    "--order",
    type=click.Choice(["newest", "upcoming"]),
    default="newest",
    show_default=True,
    help="newest: creation order, newest first; upcoming: scheduled posts soonest first, then the rest.",
)
@click.option(
    "--limit",
    type=click.IntRange(1, 100000),
    default=20,
    show_default=True,
    help="At most this many posts (pages are followed); when there are more, a note on stderr says so.",
)
@click.option(
    "--all", "every", is_flag=True, help="Every matching post, however many (scripts: with --json)."
)
@api_command
def posts_list(
    statuses: tuple[str, ...],
    platform: str | None,
    account_id: str | None,
    since: str | None,
    until: str | None,
    tz: str | None,
    scheduled: bool,
    idempotency_key: str | None,
    q: str | None,
    labels: tuple[str, ...],
    order: str,
    limit: int,
    every: bool,
    out: Output,
) -> None:
    """List posts, newest first (or --order upcoming).

    \b
    Examples:
      socialpub posts list --status scheduled --from today --scheduled
      socialpub posts list --order upcoming --search launch
      socialpub posts list --status failed --all --json | jq -r '.[] | .id'
    """

    tz = reading_zone(tz)
    from backend.schemas.posts import PostQuery  # deferred: ~13 ms of models, for this command only

    def when(value: str | None, flag: str) -> str | None:
        if value is None:
            return None
        text = "today 00:00" if value == "today" else "tomorrow 00:00" if value == "tomorrow" else value
        try:
            return _time.iso_utc(_time.resolve(text, tz))
        except _time.TimeError as exc:
            raise click.BadParameter(str(exc), param_hint=flag) from None

    query = PostQuery(
        status=list(statuses) or None,
        platform=platform,
        account_id=account_id,
        since=when(since, "--from"),
        until=when(until, "--to"),
        time_field="scheduledAt" if scheduled else "createdAt",
        idempotency_key=idempotency_key,
        q=q or None,
        label=list(labels) or None,
        order=order,
        limit=100 if every else min(limit + 1, 100),
    )
    posts = list(get_client(worker=False).iter_posts(query, max_items=None if every else limit + 1))
    if (
        not every and len(posts) > limit
    ):  # one more was read to know: said, so a script does not miss the rest
        posts = posts[:limit]
        out.note(f"Note: the first {limit} posts only; --limit N or --all for more")

    def human() -> None:
        out.table(
            [
                (
                    p.id,
                    out.status(p.status),
                    short_time(p.scheduled_at or p.created_at),  # a post sent now: when it was made
                    " ".join(sorted({t.platform for t in p.targets})),
                    f"{sum(t.status in ('succeeded', 'inbox_delivered') for t in p.targets)}/{len(p.targets)}",
                    clip((p.content.splitlines() or [""])[0], 40),
                )
                for p in posts
            ],
            ["ID", "STATUS", "WHEN", "NETWORKS", "OK", "TEXT"],
            empty="(no post)",
        )

    out.emit(posts, human)


@posts_group.command("show")
@click.argument("post_id")
@click.option("--wait", is_flag=True, help="Follow the post to its final state; exit 1 unless it completed.")
@click.option("--timeout", type=float, default=None, help="With --wait: give up after this many seconds.")
@time_options
@api_command
def posts_show(post_id: str, wait: bool, timeout: float | None, out: Output) -> None:
    """Show a post and each target's state, link and failure reason.

    \b
    Example:
      socialpub posts show post_01j9… --json | jq '.targets[] | {platform, status, postUrl, failReason}'
    """
    client = get_client(worker=wait)
    post = client.get_post(post_id)
    if wait:
        post = wait_and_report(client, out, post, timeout)
    out.emit(post, lambda: show_post(out, post) if not (wait and LiveView(out).live) else None)
    if wait:
        exit_for(post)


@posts_group.command("edit")
@click.argument("post_id")
@click.option("--text", default=None, help="New text ('-' reads stdin).")
@click.option("--file", "text_file", default=None, help="Read the new text from a file.")
@click.option("--media", "media", multiple=True, metavar="FILE_OR_URL", help="Replace the media (repeat).")
@click.option("--no-media", is_flag=True, help="Remove every media.")
@click.option("--at", default=None, help="New time (same forms as `posts create --at`).")
@tz_option(
    expose=True,
    help="Time zone of --at without offset and of the times shown (IANA name, e.g. Europe/Paris; default: the profile's `timezone`, else the system's).",
)
@utc_option(help="Read the times given without offset, and show times, in UTC.")
@option_flags
@api_command
def posts_edit(
    post_id: str,
    text: str | None,
    text_file: str | None,
    media: tuple[str, ...],
    no_media: bool,
    at: str | None,
    tz: str | None,
    options: dict[str, Any] | None,
    out: Output,
) -> None:
    """Change a scheduled post not yet sent: text, media, time, options (targets cannot change).

    \b
    Example:
      socialpub posts edit post_01j9… --at "2026-12-02 10:30" --tz Europe/Paris --text "New text"
    """
    if media and no_media:
        raise click.UsageError("--media and --no-media exclude each other")
    changes: dict[str, Any] = {}
    content = read_text(text, text_file)
    if content is not None:
        changes["content"] = content
    scheduled = resolve_at(out, at, tz)
    if scheduled:
        changes["scheduledAt"] = scheduled
    if options:
        changes["options"] = options
    if not changes and not media and not no_media:
        raise click.UsageError("nothing to change: give --text, --at, --media, --no-media or an option")
    client = get_client(worker=False)
    if no_media:
        changes["mediaUrls"] = []
    elif media:
        changes["mediaUrls"] = [m.url for m in upload_all(client, out, list(media))]
    post = client.edit_post(post_id, changes)
    out.emit(post, lambda: (out.line("Updated."), show_post(out, post)))


@posts_group.command("cancel")
@click.argument("post_id")
@api_command
def posts_cancel(post_id: str, out: Output) -> None:
    """Cancel a scheduled post not yet sent (409 post_not_cancellable once sent).

    \b
    Example:
      socialpub posts list --status scheduled --json | jq -r '.[].id' | xargs -n1 socialpub posts cancel
    """
    get_client(worker=False).cancel_post(post_id)
    out.emit({"ok": True, "id": post_id, "status": "cancelled"}, f"Cancelled {post_id}.")


@posts_group.command("retry")
@click.argument("post_id")
@click.option("--wait", is_flag=True, help="Follow the new post to its final state.")
@click.option("--timeout", type=float, default=None, help="With --wait: give up after this many seconds.")
@time_options
@api_command
def posts_retry(post_id: str, wait: bool, timeout: float | None, out: Output) -> None:
    """Create a new post for the targets that failed with failType `retriable` — never the permanent
    failures, never the successes. Running it twice creates one post (its idempotency key is
    `retry-of:POST_ID`); to retry again, retry the new post.

    \b
    Example:
      socialpub posts list --status partial --status failed --json | jq -r '.[].id' | xargs -n1 socialpub posts retry
    """
    # deferred: socialpub_tui.client.calls costs ~67 ms of start-up, paid only by the commands that use it
    from socialpub_tui.client import calls

    client = get_client(worker=wait)
    original = client.get_post(post_id)
    body, retried, skipped = calls.retry_body(original)
    skipped_info = [
        {"platform": t.platform, "accountId": t.account_id, "status": t.status, "failType": t.fail_type}
        for t in skipped
    ]
    if body is None:
        why = (
            "it has not finished yet"
            if original.status in (PostStatus.SCHEDULED, PostStatus.PROCESSING)
            else "no target failed with failType retriable"
        )
        out.emit(
            {"retried": False, "originalId": post_id, "post": None, "reason": why, "skipped": skipped_info},
            f"Nothing to retry for {post_id}: {why}.",
        )
        return
    post = client.create_post(body)
    replayed = getattr(post, "_http_status", None) == 200
    if not wait:
        note_unsent(client, out, post)
    else:
        post = wait_and_report(client, out, post, timeout)

    def human() -> None:
        names = ", ".join(f"{t.platform} ({inert(t.account_name)})" for t in retried)
        if replayed:
            out.line(
                f"Already retried: {post.id} (created by an earlier `posts retry {post_id}`, now {post.status}) "
                f"retries {names}; nothing new was created. To retry again, retry {post.id}."
            )
        else:
            out.line(f"Created {post.id} retrying {len(retried)} target(s) of {post_id}: {names}.")
        for t in skipped:
            reason = (
                "succeeded"
                if t.status in ("succeeded", "inbox_delivered")
                else "failed permanently"
                if t.fail_type == "permanent"
                else t.status
            )
            out.line(f"  not retried: {t.platform} ({inert(t.account_name)}) — {reason}")
        show_post(out, post)

    out.emit(
        {"retried": True, "replayed": replayed, "originalId": post_id, "post": post, "skipped": skipped_info},
        human,
    )
    if wait:
        exit_for(post)
