"""A post's checks before it is accepted or changed (spec 2.4, 3.1): its timestamps, its targets resolved
against the workspace's accounts, its media inspected and held, and every network's rules — every per-target
problem collected into one 400 `invalid_targets`."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

import httpx
from peewee import JOIN

from backend import clock
from backend.config import Settings
from backend.errors import ApiError
from backend.media import fetch
from backend.media.storage import media_base_url
from backend.networks import registry
from backend.networks.base import MediaRef, NetworkError, TargetDraft
from backend.networks.rules import rules_for
from backend.networks.rules.common import VIDEO_OUT_OF_RANGE, VideoLimits
from backend.outbound.guard import not_public
from backend.services import adapters, network_instances, networks
from backend.services import media as media_service
from backend.store.models import Account, Workspace
from backend.store.shapes import Shape, Slot

log = logging.getLogger("socialpub.posts")


# ---------------------------------------------------------------------------------------------- parsing


def parse_timestamp(value: str, field_name: str) -> datetime:
    """ISO 8601 with a zone offset, to aware UTC. Naive or unparseable: 400 invalid_<field>."""
    code = "invalid_scheduled_at" if field_name == "scheduledAt" else "invalid_timestamp"
    text = value.strip()
    try:
        dt = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in ("z", "Z") else text)
    except (ValueError, IndexError):
        raise ApiError(
            400,
            code,
            f"{field_name} must be an ISO 8601 timestamp with a zone offset, "
            f"e.g. 2030-01-31T09:00:00Z or 2030-01-31T10:00:00+01:00",
            [{"field": field_name, "error": "not_iso8601", "message": f"cannot read {value!r}"}],
        ) from None
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise ApiError(
            400,
            code,
            f"{field_name} has no zone offset: add Z (UTC) or ±hh:mm, "
            f"e.g. {text if 'T' in text.upper() else dt.isoformat()}Z — a local time "
            "without offset is ambiguous",
            [
                {
                    "field": field_name,
                    "error": "missing_offset",
                    "message": "a zone offset (Z or ±hh:mm) is required",
                }
            ],
        )
    try:
        return clock.to_utc(dt)
    except OverflowError:  # e.g. 9999-12-31T23:59:59-23:59: no such instant in UTC
        raise ApiError(
            400,
            code,
            f"{field_name} {value!r} is out of the supported range of dates",
            [{"field": field_name, "error": "out_of_range", "message": f"cannot read {value!r}"}],
        ) from None


# ---------------------------------------------------------------------------------------------- targets


class AccountRef(NamedTuple):
    """What validation and acceptance need of a connected account (not the whole row)."""

    id: str
    platform: str
    status: str
    name: str
    kind: str = "sandbox"


@dataclass
class Target:
    """A requested target after resolution. `account` is None when it could not be resolved."""

    index: int
    platform: str
    channel_id: str | None
    account: AccountRef | None = None
    problems: list[dict[str, Any]] = field(default_factory=list)

    def problem(self, code: str, message: str, **extra: Any) -> None:
        entry: dict[str, Any] = {"platform": self.platform, "error": code, "message": message}
        if self.channel_id is not None:
            entry["channelId"] = self.channel_id
        entry.update(extra)
        self.problems.append(entry)


def raw_target(raw: Any) -> tuple[str, str | None]:
    if isinstance(raw, str):
        return raw, None
    if isinstance(raw, dict):
        return str(raw.get("platform", "")), raw.get("channelId", raw.get("channel_id"))
    return str(getattr(raw, "platform", "")), getattr(raw, "channel_id", None)


class WorkspaceState(NamedTuple):
    """The workspace columns acceptance reads (plan, free publications)."""

    plan_subscribed: str | None
    plan_status: str | None
    plan_period_end: datetime | None
    free_posts_used: int


# The workspace's plan state joined with its accounts: one statement, rendered once (backend/store/shapes.py).
_WORKSPACE_AND_ACCOUNTS = Shape(
    lambda: (
        Workspace.select(
            Workspace.plan_subscribed,
            Workspace.plan_status,
            Workspace.plan_period_end,
            Workspace.free_posts_used,
            Account.id,
            Account.platform,
            Account.status,
            Account.name,
            Account.kind,
        )
        .join(Account, JOIN.LEFT_OUTER, on=(Account.workspace == Workspace.id))
        .where(Workspace.id == Slot("workspace"))
        .order_by(Account.connected_at, Account.id)
        .tuples()
    )
)


def load_workspace(workspace_id: str) -> tuple[WorkspaceState, list[AccountRef]] | None:
    """The workspace's plan state and its accounts (oldest connected first: the default account of a
    network), in one statement; None when there is no such workspace."""
    rows = _WORKSPACE_AND_ACCOUNTS.rows(workspace=workspace_id)
    if not rows:
        return None
    ws = WorkspaceState(*rows[0][:4])
    return ws, [AccountRef(*r[4:]) for r in rows if r[4] is not None]


def resolve_targets(accounts: Sequence[AccountRef], raw_targets: Sequence[Any]) -> list[Target]:
    """Network names pick the default account (oldest connected active one); {platform, channelId} the
    exact account. Problems: invalid_target, channel_not_connected, duplicate_target.
    `accounts`: the workspace's accounts, oldest connected first (load_workspace)."""
    by_id = {a.id: a for a in accounts}
    default: dict[str, AccountRef] = {}
    for a in accounts:
        if a.status == "active" and a.platform not in default:
            default[a.platform] = a
    out: list[Target] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_targets):
        platform, channel_id = raw_target(raw)
        t = Target(i, platform, channel_id)
        out.append(t)
        if registry.find(platform) is None:
            known = ", ".join(registry.names())
            t.problem("invalid_target", f"{platform!r} is not a network: use one of {known}")
            continue
        if channel_id is None:
            acc = default.get(platform)
            if acc is None:
                t.problem(
                    "channel_not_connected",
                    f"no active {platform} account is connected to this workspace: "
                    "connect one (GET /v1/accounts lists the connected accounts)",
                )
                continue
        else:
            acc = by_id.get(channel_id)
            if acc is None or acc.platform != platform:
                t.problem(
                    "channel_not_connected",
                    f"channelId {channel_id!r} is not a {platform} account of this "
                    "workspace (GET /v1/accounts lists them)",
                )
                continue
            if acc.status != "active":
                why = "must be reconnected" if acc.status == "needs_reauth" else "is disconnected"
                t.problem("channel_not_connected", f"the {platform} account {acc.name!r} {why}")
                continue
        if acc.id in seen:
            t.problem(
                "duplicate_target",
                f"the {platform} account {acc.name!r} ({acc.id}) is already target "
                f"#{seen[acc.id] + 1}: each account can be targeted once",
            )
            continue
        seen[acc.id] = i
        t.account = acc
    return out


# ---------------------------------------------------------------------------------------------- media

_PROBE_POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="media-probe")


def _media_base(settings: Settings) -> str:
    return media_base_url(settings)


def _host_media(settings: Settings, workspace_id: str, url: str) -> MediaRef | str:
    """A file on our own media host: checked against the media store (exists, not expired, its type)."""
    key = media_service.key_of(url)
    try:
        row = media_service.get_media(workspace_id, key)
    except ApiError:
        return (
            "no such file in this workspace's media (deleted, expired after its 30-day retention, or never "
            "uploaded): upload it again with POST /v1/media"
        )
    return MediaRef(
        url=url,
        kind="video" if row.type == "video" else "image",  # media rows are images or videos
        mime=row.mime_type,
        width=row.width,
        height=row.height,
        generated=row.origin == "generated",
        duration_s=row.duration_ms / 1000 if row.duration_ms is not None else None,
        frame_rate=row.frame_rate,
        codec=row.video_codec,
        bytes=row.bytes,
    )


def _remote_media(settings: Settings, url: str) -> MediaRef | str:
    """Any other https URL: its first bytes are probed through the SSRF-guarded fetcher."""
    try:
        detected = fetch.probe(url, settings)
    except ApiError as exc:
        return exc.message
    if detected is None:
        return (
            "the file is neither an image nor a video this service can recognise (JPEG, PNG, WebP, MP4, ...)"
        )
    return MediaRef(url=url, kind=detected.kind, mime=detected.mime_type)


def _one_media(settings: Settings, workspace_id: str, url: str) -> MediaRef | str:
    if url.startswith(_media_base(settings)):
        return _host_media(settings, workspace_id, url)
    if not url.lower().startswith("https://"):
        return "only https URLs, or files on this service's media host (POST /v1/media), can be published"
    return _remote_media(settings, url)


def inspect_media(
    settings: Settings, workspace_id: str, urls: Sequence[str]
) -> tuple[list[MediaRef], list[tuple[str, str]]]:
    """Readable media (in order) and (url, why) for every unreadable one. Remote probes run in parallel."""
    if not urls:
        return [], []
    if len(urls) == 1:
        results = [_one_media(settings, workspace_id, urls[0])]
    else:
        results = list(_PROBE_POOL.map(lambda u: _one_media(settings, workspace_id, u), urls))
    media = [r for r in results if isinstance(r, MediaRef)]
    problems = [(u, r) for u, r in zip(urls, results, strict=True) if isinstance(r, str)]
    return media, problems


def hold_media(workspace_id: str, post_id: str, urls: Sequence[str]) -> None:
    """Files of our media host attached to a post not yet sent are kept until it is sent (+30 days: the
    engine calls media.release(ref, sent_at) when sending). Call inside the post's transaction."""
    if urls:
        media_service.hold(workspace_id, list(urls), None, f"post:{post_id}")


def release_media(post_id: str) -> None:
    """Post cancelled: its files fall back to the base retention rule."""
    media_service.release(f"post:{post_id}", None)


# ---------------------------------------------------------------------------------------------- rules


def _video_problems(limits: VideoLimits | None, media: Sequence[MediaRef]) -> list[tuple[str, str, str]]:
    """(url, rule, sentence) for each video of the post that breaks a network's video rules (the first broken rule
    of each; the sentence names them all)."""
    out = []
    for m in media:
        found = limits.problems(m) if limits is not None and m.kind == "video" else []
        if found:
            out.append((m.url, found[0][0], "; ".join(why for _, why in found)))
    return out


def check_target_rules(
    targets: Sequence[Target],
    content: str,
    media: Sequence[MediaRef],
    options: dict[str, Any],
    media_problems: Sequence[tuple[str, str]],
) -> None:
    """Run the per-network rules (each network's rules.py) for every target of a known network. `options`: each
    network's own, parsed (networks.parse_options)."""
    cache: dict[str, list[str]] = {}
    for t in targets:
        rules = rules_for(t.platform)
        if rules is None or any(p["error"] == "duplicate_target" for p in t.problems):
            continue
        codes = cache.get(t.platform)
        if codes is None:
            codes = cache[t.platform] = rules.check(content, media, options.get(t.platform))
        for code in codes:
            if media_problems and code in ("media_required_for_target", "video_required_for_target"):
                continue  # the unreadable media is the cause to fix first
            if code == VIDEO_OUT_OF_RANGE:
                for url, rule, why in _video_problems(rules.video, media):
                    t.problem(code, f"{t.platform} refuses {url}: {why}", mediaUrl=url, rule=rule)
                continue
            t.problem(code, rules.message(code, content, media))
        for url, why in media_problems:
            t.problem("media_unreadable", f"{url}: {why}", mediaUrl=url)


def _cached_limits(platform: str, external_id: str) -> dict[str, Any] | None:
    found = network_instances.account_server(platform, external_id)
    return found[1] if found is not None else None


def check_against_accounts(
    settings: Settings,
    targets: Sequence[Target],
    options: dict[str, Any],
    content: str,
    media: Sequence[MediaRef],
) -> None:
    """The networks' own per-target checks against the account (registry entry `target_check`, given a TargetDraft:
    TikTok reads creator_info — the privacy the creator may choose; Mastodon applies the account's instance's cached
    limits), for the targets nothing else refused. A check that cannot reach the network refuses nothing: the post
    is accepted and its publication checks again (never lost)."""
    for t in targets:
        entry = registry.find(t.platform)
        check = entry.target_checker() if entry is not None and t.account is not None else None
        if check is None or t.problems:
            continue
        account = Account.get_or_none(Account.id == t.account.id)  # type: ignore[union-attr]  # checked above
        if account is None or not account.access_token:
            continue
        draft = TargetDraft(
            account=account.external_id,
            content=content,
            media=tuple(media),
            options=options.get(t.platform),
            server_limits=_cached_limits(t.platform, account.external_id),
        )
        try:
            found = check(adapters.adapter_for(account, settings), account.access_token, draft)
        except (NetworkError, httpx.HTTPError) as exc:
            log.info(
                "%s: the check of account %s at creation could not run (%s)", t.platform, account.id, exc
            )
            continue
        for code, message, extra in found:
            t.problem(code, message, **extra)


def media_url_refusals(platform: str, media: Sequence[MediaRef], settings: Settings) -> list[tuple[str, str]]:
    """The rule of the public-media refusal for one live account of `platform`: (url, message) for each media URL
    the network would have to fetch but cannot reach, [] when it is not concerned. Whether a network pulls is its
    rules' pulls_media(media, configured): some always, some for some media, some only when named in
    SOCIALPUB_MEDIA_BY_URL (Settings.media_by_url_networks); the others receive the bytes. An emulator served on
    this machine is no exception: it is as strict as its network (Instagram's refuses a media URL Meta could not
    fetch). Used by the posts engine (check_public_media) and the dedicated TikTok routes."""
    rules = rules_for(platform)
    if rules is None or not media or not rules.pulls_media(media, platform in settings.media_by_url_networks):
        return []

    configured = platform in settings.media_by_url_networks
    unreachable = [  # the media it fetches (Instagram: its images; its videos go as bytes)
        (m.url, why)
        for m in media
        if rules.pulls_media([m], configured) and (why := not_public(m.url)) is not None
    ]
    if not unreachable:
        return []
    if not rules.pulls_media(media, False):  # it pulls only because it is configured to
        what = f"{platform} is configured to fetch the media from its URL (SOCIALPUB_MEDIA_BY_URL)"
        fix = (
            f"remove {platform} from SOCIALPUB_MEDIA_BY_URL to upload the bytes instead, or set "
            "SOCIALPUB_MEDIA_URL (or SOCIALPUB_S3_PUBLIC_URL) to a public address that serves the media "
            "host, e.g. a CDN, a bucket or a tunnel"
        )
    else:
        what = rules.pull_reason or f"{platform} fetches the media from its URL"
        fix = (
            "set SOCIALPUB_MEDIA_URL (or SOCIALPUB_S3_PUBLIC_URL) to a public address that serves the media "
            "host, e.g. a CDN, a bucket or a tunnel"
        )
    return [
        (url, f"{what}, and {url} cannot be reached from the internet ({why}): {fix}")
        for url, why in unreachable
    ]


def check_public_media(
    targets: Sequence[Target], media: Sequence[MediaRef], live: set[int], settings: Settings
) -> None:
    """A live network that fetches media from its URL must be able to reach it: a file on a loopback or private
    address (SOCIALPUB_MEDIA_URL on a laptop) is refused now, per target, with what to configure — never accepted
    and failed later (media_url_refusals). `live`: the indexes of the targets on live accounts."""
    refusals: dict[str, list[tuple[str, str]]] = {}
    for t in targets:
        if t.index not in live:
            continue
        if t.platform not in refusals:
            refusals[t.platform] = media_url_refusals(t.platform, media, settings)
        for url, message in refusals[t.platform]:
            t.problem("media_url_not_public", message, mediaUrl=url)


def schedule_problem(targets: Sequence[Target], scheduled_at: datetime | None, now: datetime) -> bool:
    if scheduled_at is None or scheduled_at > now:
        return False
    for t in targets:
        t.problem(
            "scheduled_at_in_past",
            f"scheduledAt {clock.iso(scheduled_at)} is already past (now {clock.iso(now)}): "
            "pick a future time, or leave it out to publish now",
        )
    return True


def raise_problems(targets: Sequence[Target], schedule_in_past: bool) -> None:
    details = [p for t in targets for p in t.problems]
    if not details:
        return
    codes = {d["error"] for d in details}
    if codes == {"scheduled_at_in_past"}:
        raise ApiError(400, "scheduled_at_in_past", details[0]["message"], details)
    networks = sorted({d["platform"] for d in details})
    summary = "; ".join(f"{d['platform']}: {d['error']}" for d in details[:5])
    more = f" (+{len(details) - 5} more)" if len(details) > 5 else ""
    raise ApiError(
        400,
        "invalid_targets",
        f"{len(details)} problem(s) on {', '.join(networks)}: {summary}{more}. Nothing was published.",
        details,
    )


def stored_options(options: dict[str, Any], media: Sequence[MediaRef], platforms: set[str]) -> dict[str, Any]:
    """The options stored with the post: as given, and what a target's network forces for these media (a
    generated video declaring synthetic media…)."""
    out = networks.wire_options(options)
    for platform in sorted(platforms):
        rules = rules_for(platform)
        forced = rules.forced_options(media) if rules is not None else {}
        if forced:
            out.setdefault(platform, {}).update(forced)
    return out
