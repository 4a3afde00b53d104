"""Posts (spec 2.4, 3.1, 4.4): validation, acceptance, idempotency, scheduling, editing, cancelling.

Everything is checked before acceptance; every per-target failure of every network is collected into one
400 `invalid_targets`. An accepted post is written with its targets and its publish job in one transaction;
the engine claims the job (`post.publish`, dedupe key `post:<id>`, due at `scheduledAt` or now).

Edits and cancels lock the post row and check its state in the same transaction as the change, so the
engine's claim (which locks the same row to move `scheduled -> processing`) and an edit never interleave.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

import httpx
from peewee import JOIN, SQL, Field, ForeignKeyField, NodeList, fn
from pydantic import BaseModel

from backend import clock, queue
from backend.config import Settings
from backend.errors import ApiError
from backend.ids import new_id
from backend.networks import registry
from backend.networks.base import MediaRef, NetworkError
from backend.networks.rules import rules_for
from backend.networks.rules.common import VIDEO_OUT_OF_RANGE, VideoLimits
from backend.schemas.posts import LABEL_KEY_PATTERN, LABEL_VALUE_MAX, MAX_LABELS, PostQuery
from backend.schemas.statuses import PostStatus, TargetStatus
from backend.services import cursors, networks, plans
from backend.services.adapters import adapter_for
from backend.store.db import locked, tx
from backend.store.models import Account, Post, PostLabel, PostTarget, Workspace
from backend.store.models.posts import folded

log = logging.getLogger("socialpub.posts")

PUBLISH_JOB = "post.publish"
EDITABLE = (PostStatus.SCHEDULED,)


def job_key(post_id: str) -> str:
    return f"post:{post_id}"


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


def _raw_target(raw: Any) -> tuple[str, str | None]:
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


def load_workspace(workspace_id: str) -> tuple[WorkspaceState, list[AccountRef]] | None:
    """The workspace's plan state and its accounts (oldest connected first: the default account of a
    network), in one statement; None when there is no such workspace."""
    rows = list(
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
        .where(Workspace.id == workspace_id)
        .order_by(Account.connected_at, Account.id)
        .tuples()
    )
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
        platform, channel_id = _raw_target(raw)
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
    from backend.media.storage import media_base_url

    return media_base_url(settings)


def _host_media(settings: Settings, workspace_id: str, url: str) -> MediaRef | str:
    """A file on our own media host: checked against the media store (exists, not expired, its type)."""
    from backend.services import media as media_service

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
        kind=row.type,
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
    from backend.media import fetch

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
    from backend.services import media as media_service

    if urls:
        media_service.hold(workspace_id, list(urls), None, f"post:{post_id}")


def release_media(post_id: str) -> None:
    """Post cancelled: its files fall back to the base retention rule."""
    from backend.services import media as media_service

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


def check_against_accounts(settings: Settings, targets: Sequence[Target], options: dict[str, Any]) -> None:
    """The networks' own per-target checks against the account (registry entry `target_check`; TikTok reads
    creator_info: the privacy the creator may choose), for the targets nothing else refused. A check that cannot
    reach the network refuses nothing: the post is accepted and its publication checks again (never lost)."""
    for t in targets:
        entry = registry.find(t.platform)
        check = entry.target_checker() if entry is not None and t.account is not None else None
        if check is None or t.problems:
            continue
        account = Account.get_or_none(Account.id == t.account.id)  # type: ignore[union-attr]
        if account is None or not account.access_token:
            continue
        try:
            found = check(adapter_for(account, settings), account.access_token, options.get(t.platform))
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
    from backend.outbound.guard import not_public

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


def _schedule_problem(targets: Sequence[Target], scheduled_at: datetime | None, now: datetime) -> bool:
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


def _options_dict(options: dict[str, Any], media: Sequence[MediaRef], platforms: set[str]) -> dict[str, Any]:
    """The options stored with the post: as given, and what a target's network forces for these media (a
    generated video declaring synthetic media…)."""
    out = networks.wire_options(options)
    for platform in sorted(platforms):
        rules = rules_for(platform)
        forced = rules.forced_options(media) if rules is not None else {}
        if forced:
            out.setdefault(platform, {}).update(forced)
    return out


# ---------------------------------------------------------------------------------------------- create


def _existing_by_key(workspace_id: str, key: str, fingerprint: str) -> str | None:
    """The post created with `key`, for a replay of the same request; 409 `idempotency_key_reused` when that post
    was created with another body (a post from before fingerprints were kept replays, as it did)."""
    row = (
        Post.select(Post.id, Post.idempotency_fingerprint)
        .where((Post.workspace == workspace_id) & (Post.idempotency_key == key))
        .tuples()
        .first()
    )
    if row is None:
        return None
    post_id, kept = row
    if kept is not None and kept != fingerprint:
        raise ApiError(
            409,
            "idempotency_key_reused",
            f"the idempotencyKey {key!r} was used for another request ({post_id}, created with a different "
            "body): send a new key for a new post, or the very same body to get that post again",
            [{"field": "idempotencyKey", "postId": post_id}],
        )
    return str(post_id)


def request_fingerprint(body: dict[str, Any]) -> str:
    """The sha256 of a creation request, the idempotency key aside: targets (a name or {platform, channelId}, as
    a pair), content, mediaUrls, scheduledAt (the instant, whatever its offset), options and labels, as JSON with
    sorted keys (absent, null and empty are one). Two requests with one fingerprint ask for the same post."""

    def target(raw: Any) -> list[Any]:
        platform, channel = _raw_target(raw)
        return [platform, channel]

    scheduled = body.get("scheduled_at")
    if scheduled:
        try:
            scheduled = clock.iso(parse_timestamp(scheduled, "scheduledAt"))
        except ApiError:
            pass  # refused below anyway; the text as sent
    raw_options = body.get("options")
    options = (
        raw_options.model_dump(by_alias=True, exclude_none=True)
        if isinstance(raw_options, BaseModel)
        else dict(raw_options or {})
    )
    canonical = {
        "targets": [target(t) for t in body.get("targets") or []],
        "content": body.get("content"),
        "mediaUrls": list(body.get("media_urls") or []),
        "scheduledAt": scheduled or None,
        "options": options or None,
        "labels": dict(body.get("labels") or {}) or None,
    }
    text = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _free_publication_check(ws: WorkspaceState, now: datetime) -> bool:
    """True when this post needs a free publication (no current subscription); 402 when none is left."""
    if plans.has_current_subscription(ws.plan_subscribed, ws.plan_status, ws.plan_period_end, now):
        return False
    if ws.free_posts_used >= plans.FREE_PUBLICATIONS:
        raise _subscription_required()
    return True


def _subscription_required() -> ApiError:
    return ApiError(
        402,
        "subscription_required",
        f"this workspace has used its {plans.FREE_PUBLICATIONS} free publications: subscribe to a plan "
        "to keep publishing",
    )


def _take_free_publication(workspace_id: str) -> bool:
    """Count one free publication, in the post's transaction; the condition makes concurrent posts safe."""
    return (
        Workspace.update(free_posts_used=Workspace.free_posts_used + 1)
        .where((Workspace.id == workspace_id) & (Workspace.free_posts_used < plans.FREE_PUBLICATIONS))
        .execute()
    ) == 1


@dataclass
class Accepted:
    """The outcome of create: the post's row values (by field name) and its targets' as written, or, for an
    idempotent replay (created False), the id of the post already created with the key."""

    post_id: str
    created: bool
    post: dict[str, Any] = field(default_factory=dict)
    targets: list[dict[str, Any]] = field(default_factory=list)


def accept(settings: Settings, workspace_id: str, body: dict[str, Any]) -> Accepted:
    """Validate and accept a post: the post row, its targets, its publish job and the hold on its media
    written in one transaction. The idempotency key is decided by the UNIQUE (workspace, key) index."""
    key = body.get("idempotency_key")
    fingerprint = request_fingerprint(body) if key is not None else None
    if key is not None and fingerprint is not None:
        found = _existing_by_key(
            workspace_id, key, fingerprint
        )  # fast path: the UNIQUE index decides races below
        if found is not None:
            return Accepted(found, False)
    now = clock.now()
    loaded = load_workspace(workspace_id)
    if loaded is None:
        raise ApiError(404, "workspace_not_found", "workspace not found")
    ws, accounts = loaded
    needs_free = _free_publication_check(ws, now)

    scheduled_at = parse_timestamp(body["scheduled_at"], "scheduledAt") if body.get("scheduled_at") else None
    content: str = body["content"]
    options = networks.parse_options(body.get("options"))
    targets = resolve_targets(accounts, body["targets"])
    urls: list[str] = list(body.get("media_urls") or [])
    media, media_problems = inspect_media(settings, workspace_id, urls)
    check_target_rules(targets, content, media, options, media_problems)
    check_public_media(
        targets,
        media,
        {t.index for t in targets if t.account is not None and t.account.kind == "live"},
        settings,
    )
    check_against_accounts(settings, targets, options)
    in_past = _schedule_problem(targets, scheduled_at, clock.now())
    raise_problems(targets, in_past)

    labels: dict[str, str] = dict(body.get("labels") or {})
    post_id = new_id("post")
    media_dicts = [m.to_dict() for m in media]
    options_dict = _options_dict(options, media, {t.platform for t in targets})
    with tx():
        now = clock.now()
        post = {
            "id": post_id,
            "workspace": workspace_id,
            "status": PostStatus.SCHEDULED if scheduled_at else PostStatus.PROCESSING,
            "content": content,
            "content_folded": folded(content),
            "media_urls": urls,
            "media": media_dicts,
            "options": options_dict,
            "scheduled_at": scheduled_at,
            "idempotency_key": key,
            "idempotency_fingerprint": fingerprint,
            "free_publication": needs_free,
            "version": 1,
            "labels": labels or None,
            "created_at": now,
            "updated_at": now,
        }
        if key is None:  # nothing but a broken invariant can conflict: any error aborts the transaction
            Post.insert(post).as_rowcount().execute()
        elif not Post.insert(post).on_conflict_ignore().as_rowcount().execute():
            # the UNIQUE (workspace, idempotency_key) index refused it: a replay (post ids never collide)
            found = _existing_by_key(workspace_id, key, fingerprint or "")
            if found is None:
                raise ApiError(
                    409,
                    "idempotency_conflict",
                    "a post with this idempotency key is being created by another request: retry",
                )
            return Accepted(found, False)
        if needs_free and not _take_free_publication(workspace_id):
            raise _subscription_required()
        rows = [
            {
                "id": new_id("tgt"),
                "post": post_id,
                "position": pos,
                "platform": t.platform,
                "account": t.account.id if t.account else None,
                "account_name": t.account.name if t.account else "",
                "status": TargetStatus.PENDING,
                "idempotency_token": new_id("pub"),
                "updated_at": now,
            }
            for pos, t in enumerate(targets)
        ]
        PostTarget.insert_many(rows).as_rowcount().execute()
        if labels:
            PostLabel.insert_many(
                [
                    {"post": post_id, "workspace": workspace_id, "key": k, "value": v}
                    for k, v in labels.items()
                ]
            ).as_rowcount().execute()
        queue.enqueue(
            PUBLISH_JOB,
            {"post_id": post_id},
            run_at=scheduled_at or now,
            workspace_id=workspace_id,
            dedupe_key=job_key(post_id),
        )
        hold_media(workspace_id, post_id, urls)
    return Accepted(post_id, True, post, rows)


def create(settings: Settings, workspace_id: str, body: dict[str, Any]) -> tuple[Post, bool]:
    """Validate and accept a post. Returns (post, created); created is False for an idempotent replay."""
    done = accept(settings, workspace_id, body)
    if not done.created:
        return get(workspace_id, done.post_id), False
    return Post(**done.post), True


def create_public(settings: Settings, workspace_id: str, body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """POST /v1/posts: (the public post, created). A new post is answered from the values just written (no
    re-read: 202 with targets `pending`); a replay reads the post already created with the key."""
    done = accept(settings, workspace_id, body)
    if not done.created:
        return get_public(workspace_id, done.post_id), False
    return _public(done.post, done.targets), True


# ---------------------------------------------------------------------------------------------- read


def get(workspace_id: str, post_id: str) -> Post:
    post = Post.get_or_none((Post.id == post_id) & (Post.workspace == workspace_id))
    if post is None:
        raise ApiError(404, "post_not_found", f"post {post_id!r} not found in this workspace")
    return post


def targets_of(post_ids: Sequence[str]) -> dict[str, list[PostTarget]]:
    out: dict[str, list[PostTarget]] = {pid: [] for pid in post_ids}
    if not post_ids:
        return out
    for t in PostTarget.select().where(PostTarget.post.in_(list(post_ids))).order_by(PostTarget.position):
        out[t.post_id].append(t)
    return out


# GET /v1/posts/:id is the hottest route: one statement reads only the columns of the answer, the post's
# joined with its targets' (as tuples: no model instance per row).
_POST_FIELDS = (
    Post.id,
    Post.status,
    Post.scheduled_at,
    Post.created_at,
    Post.updated_at,
    Post.content,
    Post.media_urls,
    Post.options,
    Post.idempotency_key,
    Post.labels,
)
_TARGET_FIELDS = (
    PostTarget.platform,
    PostTarget.account,
    PostTarget.account_name,
    PostTarget.status,
    PostTarget.external_post_id,
    PostTarget.post_url,
    PostTarget.fail_reason,
    PostTarget.fail_type,
    PostTarget.completed_at,
    PostTarget.next_attempt_at,
    PostTarget.warnings,
)
_POST_NAMES = tuple(f.name for f in _POST_FIELDS)
_TARGET_NAMES = tuple(f.name for f in _TARGET_FIELDS)


def get_public(workspace_id: str, post_id: str) -> dict[str, Any]:
    """GET /v1/posts/:id: the public post, or 404 post_not_found."""
    rows = list(
        Post.select(*_POST_FIELDS, *_TARGET_FIELDS)
        .join(PostTarget, JOIN.LEFT_OUTER, on=(PostTarget.post == Post.id))
        .where((Post.id == post_id) & (Post.workspace == workspace_id))
        .order_by(PostTarget.position)
        .tuples()
    )
    if not rows:
        raise ApiError(404, "post_not_found", f"post {post_id!r} not found in this workspace")
    n = len(_POST_NAMES)
    post = dict(zip(_POST_NAMES, rows[0][:n], strict=True))
    targets = [dict(zip(_TARGET_NAMES, r[n:], strict=True)) for r in rows if r[n] is not None]
    return _public(post, targets)


def _public(post: dict[str, Any], targets: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The public form of a post (the one serializer of GET/POST /v1/posts and the lists), given as row values
    by field name; absent target columns (a target just written) are None."""
    return {
        "id": post["id"],
        "status": post["status"],
        "scheduledAt": clock.iso(post["scheduled_at"]),
        "createdAt": clock.iso(post["created_at"]),
        "updatedAt": clock.iso(post["updated_at"]),
        "content": post["content"],
        "mediaUrls": list(post["media_urls"] or []),
        "options": dict(post["options"] or {}),
        "idempotencyKey": post["idempotency_key"],
        "labels": dict(post.get("labels") or {}),
        "targets": [
            {
                "platform": t["platform"],
                "accountId": t["account"],
                "accountName": t["account_name"],
                "status": t["status"],
                "externalPostId": t.get("external_post_id"),
                "postUrl": t.get("post_url"),
                "failReason": t.get("fail_reason"),
                "failType": t.get("fail_type"),
                "completedAt": clock.iso(t.get("completed_at")),
                "nextAttemptAt": clock.iso(t.get("next_attempt_at")),
                "warnings": list(t.get("warnings") or []),
            }
            for t in targets
        ],
    }


def to_public(post: Post, targets: Sequence[PostTarget] | None = None) -> dict[str, Any]:
    """The public form of a post read as a model (its targets read when not given): the same serializer as
    get_public's, fed the same columns."""
    if targets is None:
        targets = targets_of([post.id])[post.id]
    return _public(_values(post, _POST_FIELDS), [_values(t, _TARGET_FIELDS) for t in targets])


def _values(row: Post | PostTarget, fields: Sequence[Field]) -> dict[str, Any]:
    """A model's values of `fields` by field name (a foreign key's id, never the related row: no query)."""
    return {
        f.name: getattr(row, f.object_id_name if isinstance(f, ForeignKeyField) else f.name) for f in fields
    }


# order=upcoming: the scheduled posts first, soonest due first, then every other post, most recent first, both
# by the post's due time: `scheduledAt`, or `createdAt` for a post published at once (what `timeField=dueAt`
# filters on). Ties are broken by id, so the order is total and a cursor (section, due time, id) is a stable
# position in it. Two partial indexes (migration 0015) serve each section in index order. The status values
# are written into the SQL as literals so that the query planner can match the partial indexes' conditions.
_DUE = fn.COALESCE(Post.scheduled_at, Post.created_at)
_SCHEDULED = SQL("'scheduled'")


def _due_of(post: Post) -> datetime:
    return post.scheduled_at or post.created_at


def _position(post: Post) -> tuple[str, datetime, str]:
    return ("s" if post.status == PostStatus.SCHEDULED else "r"), _due_of(post), post.id


def _decode_cursor(cursor: str) -> tuple[str, Any, str]:
    """(section `s` or `r`, the due time as the store compares it, the post id); 400 invalid_cursor otherwise."""
    section, due, post_id = cursors.decode_position(cursor, "GET /v1/posts")
    return section, Post.scheduled_at.db_value(due), post_id


def _text_matches(q: str) -> Any:
    """Case-insensitive substring of the text (`q` taken literally: `%` and `_` are not wildcards): the folded
    query in the folded text (backend.store.models.posts.folded), the same comparison on SQLite and PostgreSQL."""
    pattern = "%" + re.sub(r"([!%_])", r"!\1", folded(q)) + "%"
    return NodeList((Post.content_folded, SQL("LIKE"), pattern, SQL("ESCAPE '!'")))


def list_posts(workspace_id: str, query: PostQuery) -> dict[str, Any]:
    """`order=newest` (default): newest first (ids are time-sortable: id order is creation order).
    `order=upcoming`: scheduled posts soonest first, then the others most recent first (see _DUE).
    Cursor pagination; `q`: a case-insensitive substring of the text; `label`: `KEY=VALUE` each, all must
    match."""
    limit, cursor, q, time_field = query.limit, query.cursor, query.q, query.time_field
    statuses, labels, idempotency_key = query.status, query.label, query.idempotency_key
    platform, account_id, since, until = query.platform, query.account_id, query.since, query.until
    upcoming = query.order == "upcoming"
    position = _decode_cursor(cursor) if cursor is not None else None
    q_ = Post.select().where(Post.workspace == workspace_id)
    if position is not None and not upcoming:
        q_ = q_.where(Post.id < position[2])
    if statuses:
        q_ = q_.where(Post.status.in_(list(statuses)))
    if idempotency_key is not None:
        q_ = q_.where(Post.idempotency_key == idempotency_key)
    if labels and len(labels) > MAX_LABELS:
        raise ApiError(
            400,
            "validation_error",
            f"at most {MAX_LABELS} label filters",
            [{"field": "label", "error": "too_many", "message": f"at most {MAX_LABELS}"}],
        )
    for key, value in (parse_label(text) for text in labels or ()):
        q_ = q_.where(
            Post.id.in_(
                PostLabel.select(PostLabel.post).where(
                    (PostLabel.workspace == workspace_id)
                    & (PostLabel.key == key)
                    & (PostLabel.value == value)
                )
            )
        )
    if platform is not None or account_id is not None:
        # EXISTS, probed row by row as the page is read in index order (an IN list would read every target
        # of the network first: ~75 ms a page at 100,000 posts)
        sub = PostTarget.select(SQL("1")).where(PostTarget.post == Post.id)
        if platform is not None:
            sub = sub.where(PostTarget.platform == platform)
        if account_id is not None:
            sub = sub.where(PostTarget.account == account_id)
        q_ = q_.where(fn.EXISTS(sub))
    column = {"scheduledAt": Post.scheduled_at, "dueAt": _DUE}.get(time_field, Post.created_at)
    if since is not None:
        q_ = q_.where(column >= _bound(column, parse_timestamp(since, "from")))
    if until is not None:
        q_ = q_.where(column < _bound(column, parse_timestamp(until, "to")))
    if q:
        q_ = q_.where(_text_matches(q))
    if not upcoming:
        rows = list(q_.order_by(Post.id.desc()).limit(limit + 1))
        more = len(rows) > limit
        rows = rows[:limit]
        next_cursor = cursors.encode_position(*_position(rows[-1])) if more and rows else None
    else:
        rows, next_cursor = _upcoming_page(q_, limit, position, statuses)
    by_post = targets_of([p.id for p in rows])
    return {"items": [to_public(p, by_post[p.id]) for p in rows], "nextCursor": next_cursor}


def parse_label(text: str) -> tuple[str, str]:
    """A `label` filter, `KEY=VALUE` (the value may itself hold `=`); 400 validation_error otherwise."""
    key, sep, value = text.partition("=")
    if not sep or not re.fullmatch(LABEL_KEY_PATTERN, key) or len(value) > LABEL_VALUE_MAX:
        raise ApiError(
            400,
            "validation_error",
            "label is KEY=VALUE: a label key (lowercase letters, digits and ._/-) and its value",
            [{"field": "label", "error": "invalid", "message": f"not KEY=VALUE: {text[:120]!r}"}],
        )
    return key, value


def _bound(column: Any, instant: datetime) -> Any:
    """A time bound as the store compares it with `column` (a field converts its own; the due-time expression
    is compared with the value the fields store)."""
    return instant if column is not _DUE else Post.scheduled_at.db_value(instant)


def _upcoming_page(
    query: Any, limit: int, position: tuple[str, Any, str] | None, statuses: Sequence[str] | None
) -> tuple[list[Post], str | None]:
    section, due, after = position or ("s", None, None)
    rows: list[Post] = []
    if section == "s" and (not statuses or PostStatus.SCHEDULED in statuses):
        first = query.where(Post.status == _SCHEDULED)
        if due is not None:  # (due, id) > the cursor's, written so that `due >= …` bounds the index range
            first = first.where((_DUE >= due) & ((_DUE > due) | (Post.id > after)))
        rows = list(first.order_by(_DUE.asc(), Post.id.asc()).limit(limit + 1))
    scheduled = len(rows)
    if len(rows) <= limit and (not statuses or set(statuses) != {PostStatus.SCHEDULED}):
        rest = query.where(Post.status != _SCHEDULED)
        if section == "r":
            rest = rest.where((_DUE <= due) & ((_DUE < due) | (Post.id < after)))
        rows += list(rest.order_by(_DUE.desc(), Post.id.desc()).limit(limit + 1 - len(rows)))
    if len(rows) <= limit:
        return rows, None
    rows = rows[:limit]
    last = rows[-1]
    return rows, cursors.encode_position("s" if len(rows) <= scheduled else "r", _due_of(last), last.id)


# ---------------------------------------------------------------------------------------------- edit


def _not_editable(post: Post) -> ApiError:
    why = {PostStatus.CANCELLED: "it was cancelled", PostStatus.PROCESSING: "it is being sent"}.get(
        post.status, "it was already sent"
    )
    return ApiError(
        409,
        "post_not_editable",
        f"post {post.id} is {post.status}: only a scheduled post not yet sent can be edited ({why})",
        [{"status": post.status}],
    )


def edit(settings: Settings, workspace_id: str, post_id: str, changes: dict[str, Any]) -> Post:
    """PATCH: scheduledAt, content, mediaUrls, options; re-checked per network as on creation."""
    if "labels" in changes:
        raise ApiError(
            400,
            "labels_not_editable",
            "a post's labels are fixed at creation",
            [{"field": "labels", "error": "not_editable", "message": "labels are fixed at creation"}],
        )
    if "targets" in changes:
        raise ApiError(
            400,
            "targets_not_editable",
            "the targeted accounts of a post cannot change: cancel it (DELETE /v1/posts/{id}) and "
            "create a new post",
            [
                {
                    "field": "targets",
                    "error": "not_editable",
                    "message": "cancel the post and create a new one",
                }
            ],
        )
    for name in ("content", "media_urls", "options", "scheduled_at"):
        if name in changes and changes[name] is None:
            wire = {"media_urls": "mediaUrls", "scheduled_at": "scheduledAt"}.get(name, name)
            raise ApiError(
                400,
                "validation_error",
                f"{wire} cannot be null: leave it out to keep it",
                [{"field": wire, "error": "null", "message": "leave the field out to keep it"}],
            )
    new_at = parse_timestamp(changes["scheduled_at"], "scheduledAt") if "scheduled_at" in changes else None
    for _attempt in range(5):
        post = get(workspace_id, post_id)
        if post.status not in EDITABLE:
            raise _not_editable(post)
        rows = targets_of([post.id])[post.id]
        targets = []
        for i, row in enumerate(rows):
            t = Target(i, row.platform, None)
            targets.append(t)
        content = changes.get("content", post.content)
        options = networks.parse_options(changes["options"] if "options" in changes else post.options)
        if "media_urls" in changes:
            urls = list(changes["media_urls"])
            media, media_problems = inspect_media(settings, workspace_id, urls)
        else:
            urls = list(post.media_urls or [])
            media, media_problems = [MediaRef.from_dict(m) for m in post.media or []], []
        if any(k in changes for k in ("content", "media_urls", "options")):
            check_target_rules(targets, content, media, options, media_problems)
        if "media_urls" in changes:
            ids = [row.account_id for row in rows if row.account_id]
            live_ids = {
                a.id for a in Account.select(Account.id).where(Account.id.in_(ids) & (Account.kind == "live"))
            }
            check_public_media(
                targets, media, {i for i, row in enumerate(rows) if row.account_id in live_ids}, settings
            )
        if "options" in changes:  # the networks' own checks against the account (TikTok: the privacy)
            for t, row in zip(targets, rows, strict=True):
                if row.account_id:
                    t.account = AccountRef(row.account_id, row.platform, "active", row.account_name)
            check_against_accounts(settings, targets, options)
        for t, row in zip(targets, rows, strict=True):
            if row.account_id:
                for p in t.problems:
                    p["channelId"] = row.account_id
        in_past = _schedule_problem(targets, new_at, clock.now())
        raise_problems(targets, in_past)
        with tx():
            fresh = locked(Post.select().where(Post.id == post.id)).get()
            if fresh.status not in EDITABLE:
                raise _not_editable(fresh)
            if fresh.version != post.version:
                continue  # changed since it was checked: check again against the new state
            now = clock.now()
            values: dict[Any, Any] = {Post.version: fresh.version + 1, Post.updated_at: now}
            if "content" in changes:
                values[Post.content] = content
                values[Post.content_folded] = folded(content)
            if "media_urls" in changes:
                values[Post.media_urls] = urls
                values[Post.media] = [m.to_dict() for m in media]
            if "options" in changes or "media_urls" in changes:
                values[Post.options] = _options_dict(options, media, {r.platform for r in rows})
            if new_at is not None:
                values[Post.scheduled_at] = new_at
                queue.move(job_key(post.id), new_at)
            Post.update(values).where(Post.id == post.id).execute()
            if "media_urls" in changes:
                release_media(post.id)  # the hold is replaced by one on the new list
                hold_media(workspace_id, post.id, urls)
        return Post.get_by_id(post.id)
    raise ApiError(409, "post_edit_conflict", "the post kept changing while this edit was checked: retry")


def cancel(workspace_id: str, post_id: str) -> None:
    """DELETE: a scheduled post not yet sent becomes `cancelled`; its publish job is removed."""
    with tx():
        post = locked(
            Post.select().where((Post.id == post_id) & (Post.workspace == workspace_id))
        ).get_or_none()
        if post is None:
            raise ApiError(404, "post_not_found", f"post {post_id!r} not found in this workspace")
        if post.status not in EDITABLE:
            raise ApiError(
                409,
                "post_not_cancellable",
                f"post {post.id} is {post.status}: only a scheduled post not yet sent can be cancelled",
                [{"status": post.status}],
            )
        now = clock.now()
        Post.update(
            status=PostStatus.CANCELLED, cancelled_at=now, updated_at=now, version=Post.version + 1
        ).where(Post.id == post.id).execute()
        queue.cancel(job_key(post.id))
        if post.free_publication:  # nothing was published: the free publication is given back
            Workspace.update(free_posts_used=Workspace.free_posts_used - 1).where(
                (Workspace.id == workspace_id) & (Workspace.free_posts_used > 0)
            ).execute()
        release_media(post.id)
