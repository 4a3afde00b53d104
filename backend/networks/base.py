"""The adapter protocol: what the engine hands an adapter (Publication) and what it gets back (PublishOutcome).

Flow for one target:
    payload = RULES[platform].build(content, media, options)      # pure, done by the posts API / engine
    pub = Publication(payload, AccountCredentials(...), idempotency_token=target_id)
    out = adapter.publish(pub)          # published | pending | inbox_delivered | failed
    while out.state == "pending":       # later, from a job: out = adapter.check_status(pub, out.tracking_ref)
    if out.state == "ready":            # the network waits for the publishing call (a new attempt, recorded first)
        out = adapter.complete(pub, out.tracking_ref)
    if a previous attempt may have reached the network (crash, timeout, out.ambiguous):
        existing = adapter.find_existing(pub)   # ask the network first; publish again only if None

Every call that may publish (publish, complete) is an attempt the engine records before making it;
check_status and find_existing only read. find_existing's "absent" is conclusive only once the network's
listing delay (the network's registry entry, listing_delay_s) has passed since the earlier call was over.

Each network's package (backend/networks/<name>/) holds its adapter; the registry (registry.py) finds it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

from backend.clock import to_utc

MediaKind = Literal["image", "video"]
PayloadKind = Literal["text", "image", "video", "carousel", "document"]
OutcomeState = Literal["published", "pending", "ready", "inbox_delivered", "failed"]
FailType = Literal["retriable", "permanent"]


@dataclass(frozen=True)
class MediaRef:
    """One media of a post as the rules and adapters see it."""

    url: str
    kind: MediaKind
    mime: str | None = None
    width: int | None = None
    height: int | None = None
    generated: bool = False  # produced by our own generations: synthetic-media flags are forced on
    # a video's, as probed at ingestion (files on our media host; None when unknown: the rules then leave it be)
    duration_s: float | None = None
    frame_rate: float | None = None
    codec: str | None = None
    bytes: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MediaRef:
        return cls(
            url=d["url"],
            kind=d["kind"],
            mime=d.get("mime"),
            width=d.get("width"),
            height=d.get("height"),
            generated=bool(d.get("generated", False)),
            duration_s=d.get("duration_s"),
            frame_rate=d.get("frame_rate"),
            codec=d.get("codec"),
            bytes=d.get("bytes"),
        )


@dataclass(frozen=True)
class TargetDraft:
    """One target of a post being created or changed, as the network's own check against the account sees it (the
    registry entry's `target_check`: fn(adapter, access_token, draft) -> [(code, message, extra)]).

    account: the account's external id at the network (Mastodon: `<id>@<host>`, Bluesky: its DID). content, media:
    the post's, as the posts API read them (a media's bytes, duration… when probed). options: the network's own,
    parsed (its options model), or None. server_limits: for a network made of many servers (Mastodon), the limits
    the account's server reported when it was last read (the network's cached form: services/network_instances),
    None when they are not known; the check then applies the network's defaults."""

    account: str
    content: str
    media: tuple[MediaRef, ...] = ()
    options: Any = None
    server_limits: dict[str, Any] | None = None


@dataclass(frozen=True)
class Payload:
    """Exactly what one network receives for one post (spec 4.4 rules 4-7), before credentials.

    kind: text | image | video | carousel (2-10 images; instagram may mix videos) | document (linkedin PDF).
    text: the caption / message / commentary / description actually transmitted ('' when none is sent,
    e.g. a TikTok draft video). title: youtube title, tiktok photo title, linkedin document title.
    options: network-specific settings in snake_case, already filtered (e.g. no privacy in MEDIA_UPLOAD).
    """

    platform: str
    kind: PayloadKind
    text: str
    title: str | None
    media: tuple[MediaRef, ...]
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "platform": self.platform,
            "kind": self.kind,
            "text": self.text,
            "title": self.title,
            "media": [m.to_dict() for m in self.media],
            "options": dict(self.options),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Payload:
        return cls(
            platform=d["platform"],
            kind=d["kind"],
            text=d.get("text") or "",
            title=d.get("title"),
            media=tuple(MediaRef.from_dict(m) for m in d.get("media") or []),
            options=dict(d.get("options") or {}),
        )


@dataclass(frozen=True)
class AccountCredentials:
    """The connected account at the network. The token never shows in repr or logs."""

    external_account_id: str
    access_token: str = field(repr=False)
    username: str | None = None

    def __str__(self) -> str:
        return f"{self.external_account_id} (@{self.username})" if self.username else self.external_account_id


@dataclass(frozen=True)
class Publication:
    """One target's publication: payload + account + a stable idempotency token (the target id).

    attempted_at: when the first attempt started; find_existing only matches what the network
    created after it (minus a little clock slack).

    resume: what the network holds of an earlier attempt that was interrupted (the adapter's own ref, as it
    gave it to `save_progress`): publish continues from it (an Instagram container, a YouTube upload session)
    when the network still has it, instead of creating another that costs quota (find_existing gets it too: the
    network may answer for it more cheaply than its listing — YouTube's upload session). save_progress: called by the
    adapter with such a ref as soon as the network created it, before its next call (the engine stores it
    with the target); None: nothing is saved.

    held_elsewhere: the network's ids of publications the account's OTHER targets hold (their external_post_id,
    as the engine read them when it reconciled this one): a listing matched by text (or title) never takes one of
    them for this target's — two targets of one account with one caption in the same minutes (a recurring
    caption, a burst, a recipe's one caption over different images) cannot be told apart by their text, and a
    target that took another's publication succeeded without ever being published. find_existing skips them and
    keeps paging. Empty outside a reconciliation.

    made_by: a time by which the earlier attempts' publication, if there is one, was made — when their calls were
    over plus the network's listing delay (the engine's `decide.absence_conclusive_at`: the moment from which the
    listing's silence proves absence; None outside a reconciliation). A listed item the network made after it (beyond
    clock slack) is another target's, whatever its text: a text-matching listing skips it (`made_later`)."""

    payload: Payload
    account: AccountCredentials
    idempotency_token: str
    attempted_at: datetime | None = None
    resume: str | None = None
    save_progress: Callable[[str], None] | None = field(default=None, compare=False, repr=False)
    held_elsewhere: frozenset[str] = frozenset()
    made_by: datetime | None = None

    def made_later(self, made: datetime, slack_s: float = 5.0) -> bool:
        """Whether a listed item the network made at `made` came after `made_by` (set by the engine when it
        reconciles; `slack_s` for the network's clock): another target's, whatever its text — a text-matching
        listing skips it and keeps paging."""
        if self.made_by is None:
            return False
        from datetime import timedelta

        return to_utc(made) > to_utc(self.made_by) + timedelta(seconds=slack_s)

    def saved(self, ref: str) -> None:
        """The adapter created something at the network that a later attempt could continue from."""
        if self.save_progress is not None:
            self.save_progress(ref)

    @property
    def platform(self) -> str:
        return self.payload.platform

    def not_before(self, slack_s: float = 120.0) -> datetime | None:
        if self.attempted_at is None:
            return None
        from datetime import timedelta

        return to_utc(self.attempted_at) - timedelta(seconds=slack_s)


@dataclass(frozen=True)
class TargetWarning:
    """Something the user must know about a target that succeeded (or is still under way): the network took the
    post but not quite as asked (YouTube locked the video private; TikTok posted it SELF_ONLY).

    code: stable, snake_case, prefixed with the network's name (`youtube_private_lock`) — a contract, as error
    codes are. message: for humans: what happened, why, and what to do about it.
    The API answers a target's warnings as `warnings: [{code, message}]` (an additive extension)."""

    code: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True)
class PublishOutcome:
    """What happened at the network.

    published: online (external_post_id, post_url when the network exposes one).
    pending: accepted, still processing: call check_status(pub, tracking_ref) later.
    ready: (check_status only) the network holds everything and waits for the publishing call: record an
    attempt, then call complete(pub, tracking_ref) (LinkedIn: the asset is AVAILABLE; Instagram: the
    container is FINISHED).
    inbox_delivered: TikTok draft delivered to the creator's inbox (a success for the post).
    failed: fail_type 'retriable' (throttling, downtime: retry after retry_after_s if given) or
    'permanent' (fix the media / reconnect the account); fail_reason is for humans.
    ambiguous: the call may have reached the network (timeout, connection cut mid-request): call
    find_existing before calling publish again.
    wait: (failed, retriable) the network set a window to wait out — a daily cap, a rate limit, throttling
    (retry_after_s says how long when it is known) — not a failure: the engine waits without using a retry.
    network_status: the network's own status word (e.g. TikTok PROCESSING_DOWNLOAD); network_code: its
    own error code (e.g. 'spam_risk_too_many_posts', '9/2207042'). auth_refused: the network refused the
    account's authorisation (a token expired, revoked or without the publishing scope): reconnecting is the fix,
    the account turns needs_reauth.
    warnings: what the user must know although it went through (TargetWarning), on any outcome of any call
    (publish, check_status, complete, find_existing): the engine keeps each one on the target (one per code, the
    latest message wins) and never drops one an earlier call of the target gave.
    listed_at: (find_existing) the publication was matched in the account's listing by its text (or title), which
    another target of one caption would match too: when the network says it created it (the listing item's
    time). None: an answer about the attempt's very own object (its container, upload session, publish id, record
    key). The engine takes a listed match only when no other target's call that began before it is still under
    way (that call may have made it).
    """

    state: OutcomeState
    external_post_id: str | None = None
    post_url: str | None = None
    tracking_ref: str | None = None
    fail_reason: str | None = None
    fail_type: FailType | None = None
    retry_after_s: float | None = None
    network_code: str | None = None
    network_status: str | None = None
    ambiguous: bool = False
    auth_refused: bool = False
    wait: bool = False
    warnings: tuple[TargetWarning, ...] = ()
    listed_at: datetime | None = None

    @property
    def done(self) -> bool:
        return self.state not in ("pending", "ready")

    @property
    def succeeded(self) -> bool:
        return self.state in ("published", "inbox_delivered")

    @classmethod
    def published(cls, external_post_id: str, post_url: str | None, **kw: Any) -> PublishOutcome:
        return cls(state="published", external_post_id=external_post_id, post_url=post_url, **kw)

    @classmethod
    def pending(cls, tracking_ref: str, **kw: Any) -> PublishOutcome:
        return cls(state="pending", tracking_ref=tracking_ref, **kw)

    @classmethod
    def ready(cls, tracking_ref: str, **kw: Any) -> PublishOutcome:
        return cls(state="ready", tracking_ref=tracking_ref, **kw)

    @classmethod
    def failed(cls, fail_type: FailType, reason: str, **kw: Any) -> PublishOutcome:
        return cls(state="failed", fail_type=fail_type, fail_reason=reason, **kw)


class NetworkError(Exception):
    """A failure classified by the network's own code. Adapters raise it internally and turn it into
    a failed PublishOutcome at their public boundary."""

    def __init__(
        self,
        fail_type: FailType,
        reason: str,
        *,
        code: str | None = None,
        retry_after_s: float | None = None,
        http_status: int | None = None,
        ambiguous: bool = False,
        auth_refused: bool = False,
        wait: bool | None = None,
    ) -> None:
        super().__init__(reason)
        self.fail_type: FailType = fail_type
        self.reason = reason
        self.code = code
        self.retry_after_s = retry_after_s
        self.http_status = http_status
        self.ambiguous = ambiguous
        self.auth_refused = auth_refused  # PublishOutcome.auth_refused
        # PublishOutcome.wait: a cap or rate limit the adapter recognised; by default an HTTP 429
        self.wait = (http_status == 429 and fail_type == "retriable") if wait is None else wait

    def outcome(self, **kw: Any) -> PublishOutcome:
        return PublishOutcome.failed(
            self.fail_type,
            self.reason,
            network_code=self.code,
            retry_after_s=self.retry_after_s,
            ambiguous=self.ambiguous,
            auth_refused=self.auth_refused,
            wait=self.wait,
            **kw,
        )


class Unverifiable(Exception):
    """find_existing cannot tell whether the publication exists at the network (the network offers no way to
    look: e.g. a TikTok draft sent to the creator's inbox). The engine then ends the target `failed` with a
    reason that says it may have been published and to check before retrying: never publishes twice."""


@runtime_checkable
class NetworkAdapter(Protocol):
    """What the publishing engine calls: every network's adapter (its package's adapter.py) is one."""

    platform: str

    def publish(self, pub: Publication) -> PublishOutcome: ...

    def check_status(self, pub: Publication, ref: str) -> PublishOutcome:
        """Where an accepted publication stands: pending, ready, published, inbox_delivered or failed. Never
        publishes (a write that publishes is `complete`'s, made only after the engine recorded an attempt)."""
        ...

    def complete(self, pub: Publication, ref: str) -> PublishOutcome:
        """The publishing call of a publication check_status found `ready` (an adapter that never answers ready
        answers it with `never_ready`)."""
        ...

    def find_existing(self, pub: Publication) -> PublishOutcome | None:
        """The publication at the network if it exists, created at or after `pub.attempted_at` (minus clock
        slack): pages through the network's listing as far back as that window needs. None: absent from the
        listing now — conclusive only once the network's listing delay has passed since the earlier call was
        over (the engine waits until then). Raises Unverifiable when the network offers no way to check.
        A listing matched by text (or title) skips every item whose id is in `pub.held_elsewhere` (another
        target's publication, never this one's) and keeps paging; an answer about the attempt's very own object
        (a saved container, upload session, publish id, record key) needs no such care."""
        ...


MAX_LISTING_PAGES = 500  # a bound on find_existing's paging, whatever the window (100 a page: 50,000 posts)
PAGES_WITHOUT_WINDOW = 5  # when the attempt's start is unknown: the newest pages only


def check_failed(network: str, exc: NetworkError) -> PublishOutcome:
    """find_existing could not read the network's listing: not "absent" (that would publish twice), but a
    failure that is still ambiguous, so the check runs again before any new publish."""
    return PublishOutcome.failed(
        exc.fail_type,
        f"could not check {network} for a publication of an earlier attempt: {exc.reason}",
        network_code=exc.code,
        retry_after_s=exc.retry_after_s,
        ambiguous=True,
        wait=exc.wait,
    )


def never_ready(network: str) -> PublishOutcome:
    """`complete` of a network whose check_status never answers `ready`: a failure, never a call."""
    return PublishOutcome.failed(
        "permanent", f"{network} has no publishing call to complete: its publications never wait for one"
    )


def encode_ref(**parts: Any) -> str:
    """Tracking refs are opaque strings to the engine; multi-step adapters pack JSON in them."""
    return json.dumps(parts, separators=(",", ":"), sort_keys=True)


def decode_ref(ref: str) -> dict[str, Any]:
    try:
        value = json.loads(ref)
    except ValueError:
        return {"id": ref}
    return value if isinstance(value, dict) else {"id": ref}
