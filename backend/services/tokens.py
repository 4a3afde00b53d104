"""Token life of live accounts (issue 17 item 3; docs/tokens.md).

- `sweep` (the worker's `tokens.sweep`, every minute): one `token.refresh` job per live active account whose
  token expires within SOCIALPUB_TOKEN_REFRESH_MARGIN_S and that has a refresh token (deduplicated per account
  and expiry; on the lane of its network); then `warn_expiring`.
- `refresh_account`: THE one way a token is refreshed — by that job, and by a publish about to call a network
  with a token expired or within the margin. One refresh per account at a time (`token_refresh_until` under a
  lease token: a rotated refresh token used twice kills the grant), the call bounded by a watchdog shorter than
  the lease. The network is called outside any transaction; the new access token, refresh token and expiries
  are stored in ONE transaction (tried again if the store fails), unless another refresh stored a pair meanwhile.
- A dead refresh job is said at WARNING; the sweep queues it again later while the account is due.
- A dead grant (`GrantDead`) → `mark_needs_reauth`: in one transaction, the account `needs_reauth`, an
  `account.needs_reauth` event, and each of its `pending` targets failed `permanent` saying to reconnect, through
  the publishing engine's own path (decide + apply: posts settle, `publish.failed` events fire).
- A transient failure (timeout, 5xx, 429) raises `RefreshTransient`: the account is left as it is.
- `warn_expiring`: a live account whose token cannot be refreshed (or whose refresh token itself dies) within
  SOCIALPUB_TOKEN_WARNING_DAYS gets one `account.token_expiring` event per expiry; `token_warning` is the line
  the accounts API shows (`tokenWarning`).

Sandbox accounts are never touched: their emulator tokens do not expire.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from backend import clock, queue
from backend.config import Settings
from backend.ids import new_id
from backend.networks import oauth_apps, registry
from backend.networks import tokens as net
from backend.networks.oauth import TokenSet
from backend.outbound.watchdog import Watchdog
from backend.schemas.statuses import PostStatus, TargetStatus
from backend.services import adapters, events
from backend.services.publishing import decide
from backend.services.publishing.apply import apply, lock_post, state_of, unresolved_attempts
from backend.store import secretbox
from backend.store.db import locked, tx
from backend.store.models import Account, Post, PostTarget

log = logging.getLogger("socialpub.tokens")

REFRESH_JOB = "token.refresh"
SWEEP_EVERY_S = 60.0
REFRESH_MAX_ATTEMPTS = (
    10  # transient failures: retried with the worker's backoff (30 s doubling, capped at 1 h)
)
# a refresh job that died (its tries spent during an outage, or the app's configuration refused) holds its dedupe
# key; the sweep queues it again, while the account is still due, once it has been dead this long
DEAD_REFRESH_RETRY_S = SWEEP_EVERY_S * 10
REAUTH_BATCH_POSTS = 100  # mark_needs_reauth fails the targets of this many posts a transaction

GrantDead = net.GrantDead
RefreshTransient = net.RefreshTransient
RefreshRejected = net.RefreshRejected
NotRefreshable = net.NotRefreshable
RefreshError = net.RefreshError
NotConfigured = oauth_apps.NotConfigured


class RefreshBusy(Exception):
    """Another refresh of the account is in flight (until `until`)."""

    def __init__(self, until: datetime) -> None:
        super().__init__(f"a refresh of this account is in flight until {clock.iso(until)}")
        self.until = until


@dataclass(frozen=True)
class Refreshed:
    """What refresh_account did: `refreshed` (a new token stored), `fresh` (not due: nothing done; another
    refresh may have just stored one), `dead` (the grant is dead: the account now needs_reauth)."""

    result: str
    access_token: str = ""
    expires_at: datetime | None = None

    def __repr__(self) -> str:
        return f"<Refreshed {self.result} until {clock.iso(self.expires_at)}>"


def reconnect_command(account: Account) -> str:
    """The command that connects this account again: a login network's names the handle (`--handle`), a network of
    many servers the account's server (`--instance`)."""
    base = f"socialpub accounts connect {account.platform}"
    entry = registry.find(account.platform)
    if entry is not None and entry.login and account.username:
        return f"{base} --handle {account.username}"
    try:
        found = oauth_apps.oauth_app(account.platform)
    except oauth_apps.NotConfigured:
        return base
    host = found.instances.host_of(account.external_id) if found.instances is not None else None
    return f"{base} --instance {host}" if host else base


def margin(settings: Settings) -> timedelta:
    return timedelta(seconds=settings.token_refresh_margin_s)


def refreshable(platform: str, refresh_token: str | None, settings: Settings | None = None) -> bool:
    """The account's token can be refreshed: its network refreshes, the grant gave a refresh token and (when
    `settings` are given) the network's OAuth app is configured (SOCIALPUB_<NETWORK>_CLIENT_ID / _SECRET)."""
    if not refresh_token:
        return False
    try:
        found = oauth_apps.oauth_app(platform)
    except oauth_apps.NotConfigured:  # no OAuth app (or no such network any more)
        return False
    if found.refresh is not None:  # the network refreshes its sessions itself (no app credentials)
        return True
    real = found.endpoints
    if not real.refreshable:
        return False
    if settings is None:
        return True
    own = oauth_apps.network_settings(platform, settings)
    return bool(own.client_id and own.client_secret)


def due(account: Account, now: datetime, settings: Settings) -> bool:
    """A live active account whose refreshable token expires within the margin (or has expired)."""
    return (
        account.kind == "live"
        and account.status == "active"
        and account.token_expires_at is not None
        and account.token_expires_at - now <= margin(settings)
        and refreshable(account.platform, account.refresh_token, settings)
    )


# ---- the sweep ------------------------------------------------------------------------------------------
def sweep(settings: Settings, now: datetime | None = None) -> int:
    """Enqueue a refresh for every due account (one job per account and expiry); then the expiry warnings.
    Returns how many refresh jobs were asked for."""
    now = now or clock.now()
    rows = list(
        Account.select(
            Account.id,
            Account.workspace,
            Account.platform,
            Account.kind,
            Account.status,
            Account.token_expires_at,
            Account.refresh_token,
        ).where(
            (Account.kind == "live")
            & (Account.status == "active")
            & Account.token_expires_at.is_null(False)
            & (Account.token_expires_at <= now + margin(settings))
            & Account.refresh_token.is_null(False)
        )
    )
    jobs = [
        queue.JobSpec(
            REFRESH_JOB,
            {"account_id": a.id},
            workspace_id=a.workspace_id,
            dedupe_key=refresh_key(a.id, a.token_expires_at),
            lane=a.platform,
            max_attempts=REFRESH_MAX_ATTEMPTS,
        )
        for a in rows
        if due(a, now, settings)
    ]
    if jobs:
        with tx():
            queue.enqueue_many(jobs, if_absent=True)
            revived = queue.revive(
                [j.dedupe_key for j in jobs if j.dedupe_key],
                dead_before=now - timedelta(seconds=DEAD_REFRESH_RETRY_S),
            )
        if revived:
            log.info("%d dead token refresh job(s) queued again: their accounts are still due", revived)
    warn_expiring(settings, now)
    return len(jobs)


def refresh_key(account_id: str, expires_at: datetime | None) -> str:
    """The refresh job's dedupe key: one per account and expiry."""
    return f"token:{account_id}:{clock.iso(expires_at)}"


def refresh_died(account_id: str, error: str) -> None:
    """A refresh job died (its tries spent, or refused for good): said at WARNING with the account, findable;
    the sweep asks again later while the account is due (DEAD_REFRESH_RETRY_S)."""
    acc = Account.get_or_none(Account.id == account_id)
    log.warning(
        "account %s (%s): the token refresh job gave up (%s); the token expires at %s; the sweep tries "
        "again in %d s while it is due",
        account_id,
        acc.platform if acc else "?",
        error,
        clock.iso(acc.token_expires_at) if acc else "?",
        DEAD_REFRESH_RETRY_S,
    )


# ---- one refresh ----------------------------------------------------------------------------------------
STORE_BACKOFF_S = (
    0.05,
    0.25,
    1.0,
    3.0,
)  # the store of a refreshed pair is tried once, then after each of these
GRACE = (
    "grace"  # the lease token of a lease held for a refresh that may still be in flight (see refresh_account)
)


def lease_of(settings: Settings) -> timedelta:
    """How long a refresh holds the account: the refresh call's hard deadline (`deadline_s`) plus 30 s to
    store its answer."""
    return timedelta(seconds=deadline_s(settings) + 30)


def deadline_s(settings: Settings) -> float:
    """The whole refresh call's bound (a watchdog shuts its connection down): two network timeouts."""
    return settings.network_timeout_s * 2


def refresh_account(account_id: str, settings: Settings, *, force: bool = False) -> Refreshed:
    """Refresh the account's token if it is due (or `force`). Raises RefreshBusy (another refresh is in
    flight, or may be: try again after `until`), RefreshTransient (try again later: the account is untouched),
    RefreshRejected (the app's configuration: the account is untouched), NotRefreshable, NotConfigured,
    SecretsKeyError (the secrets key cannot encrypt: nothing sent). A dead grant is not raised: the account
    turns needs_reauth (mark_needs_reauth) and the result says `dead`.

    One refresh at a time: the refresh takes the account's lease (`token_refresh_until`, under its own lease
    token), calls the network with a hard deadline shorter than the lease, stores the answer only if nobody
    else stored a pair meanwhile (and, unless its answer rotated the refresh token, only if it still holds the
    lease), and releases only its own lease, whatever happens."""
    now = clock.now()
    platform = _platform(account_id)
    if oauth_apps.oauth_app(platform).refresh is None:
        oauth_apps.app(platform, settings)  # NotConfigured before anything is held
    secretbox.encrypt("probe")  # the new pair must be storable before the network retires the old one
    lease = lease_of(settings)
    mine = new_id("lease")
    with tx():
        acc = locked(Account.select().where(Account.id == account_id)).first()
        if acc is None or acc.kind != "live" or acc.status != "active":
            return Refreshed("fresh")
        if not refreshable(acc.platform, acc.refresh_token):
            raise NotRefreshable(acc.platform, "not_refreshable", "this account has no refresh token")
        if not force and not due(acc, now, settings):
            return Refreshed("fresh", acc.access_token, acc.token_expires_at)
        if acc.token_refresh_until is not None and acc.token_refresh_until > now:
            raise RefreshBusy(acc.token_refresh_until)
        # an expired lease not released: its refresh may still be in flight (a suspended process), or it died
        took_over = acc.token_refresh_until is not None and acc.token_refresh_lease != GRACE
        Account.update(token_refresh_until=now + lease, token_refresh_lease=mine).where(
            Account.id == acc.id
        ).execute()
        sent = acc.refresh_token
    try:
        try:
            with (
                adapters.network_client(settings, acc.platform) as client,
                Watchdog(deadline_s(settings)).running() as dog,
            ):
                got = net.refresh_grant(acc.platform, settings, client, sent, now=now, watchdog=dog)
        except net.GrantDead as exc:
            return _grant_dead(acc, sent, mine, took_over, exc, settings)
        except net.RefreshError as exc:
            log.warning("account %s (%s): token refresh failed: %s", account_id, acc.platform, exc)
            raise
        return _store(acc, sent, mine, got)
    finally:
        _release(account_id, mine)


def _grant_dead(
    acc: Account, sent: str | None, mine: str, took_over: bool, exc: net.GrantDead, settings: Settings
) -> Refreshed:
    current = Account.get_or_none(Account.id == acc.id)
    if current is not None and current.refresh_token != sent:  # refreshed meanwhile: not dead
        return Refreshed("fresh", current.access_token, current.token_expires_at)
    if took_over:
        # the lease we took had run out unreleased: its refresh may be in flight still, and may have rotated the
        # refresh token we sent. Hold the account a lease longer (GRACE) so that refresh can store its answer;
        # try once more then: a dead grant answered again is dead.
        until = clock.now() + lease_of(settings)
        with tx():
            Account.update(token_refresh_until=until, token_refresh_lease=GRACE).where(
                (Account.id == acc.id) & (Account.token_refresh_lease == mine)
            ).execute()
        log.warning(
            "account %s (%s): %s right after taking over an unreleased refresh lease: another refresh may "
            "have rotated the token; trying again after %s",
            acc.id,
            acc.platform,
            exc.code,
            clock.iso(until),
        )
        raise RefreshBusy(until)
    log.warning("account %s (%s): the grant is dead (%s): needs_reauth", acc.id, acc.platform, exc.code)
    mark_needs_reauth(acc.id, f"{exc.code}: {exc.detail}" if exc.detail else exc.code)
    return Refreshed("dead")


def _store(acc: Account, sent: str | None, mine: str, got: TokenSet) -> Refreshed:
    """Store the new pair in ONE transaction (a rotated refresh token is never kept apart from its access
    token), tried again on a failure of the store (a locked SQLite, a serialization failure or a dropped
    connection at COMMIT): the network may have retired `sent`, so this pair may be the grant's only key."""
    rotated = got.refresh_token != sent
    for attempt, pause in enumerate((*STORE_BACKOFF_S, None)):
        try:
            with tx():
                stored = _store_once(acc, sent, mine, got, rotated)
            break
        except Exception as exc:  # noqa: BLE001  (whatever failed, the pair is only in memory: try again)
            if pause is None:
                log.error(
                    "account %s (%s): the refreshed token could not be stored after %d tries (%s: %s)%s",
                    acc.id,
                    acc.platform,
                    attempt + 1,
                    type(exc).__name__,
                    exc,
                    ": the network has rotated the refresh token, which is LOST; the account will need "
                    "to be reconnected"
                    if rotated
                    else "",
                )
                raise
            log.warning(
                "account %s (%s): storing the refreshed token failed (%s: %s); trying again in %g s",
                acc.id,
                acc.platform,
                type(exc).__name__,
                exc,
                pause,
            )
            time.sleep(pause)
    if stored is not None:
        return stored
    log.info(
        "account %s (%s): token refreshed, valid until %s%s",
        acc.id,
        acc.platform,
        clock.iso(got.expires_at),
        " (refresh token rotated)" if rotated else "",
    )
    return Refreshed("refreshed", got.access_token, got.expires_at)


def _store_once(acc: Account, sent: str | None, mine: str, got: TokenSet, rotated: bool) -> Refreshed | None:
    """One try of the store (inside its transaction). None: stored; else what is there instead."""
    current = locked(Account.select().where(Account.id == acc.id)).first()
    other_stored = current is not None and (
        current.refresh_token != sent or current.access_token != acc.access_token
    )
    if (
        current is None
        or current.status != "active"
        or other_stored
        or (current.token_refresh_lease not in (mine, None) and not rotated)
    ):
        # removed, reconnected or needs_reauth meanwhile; or another refresh stored its pair, or holds the lease
        # (our answer did not rotate the refresh token: theirs is as good): theirs is kept
        log.warning(
            "account %s (%s): a refresh answered after the account changed (%s); its token is not stored%s",
            acc.id,
            acc.platform,
            "gone"
            if current is None
            else current.status
            if current.status != "active"
            else "another refresh stored a token"
            if other_stored
            else "another refresh holds it",
            " although the network rotated the refresh token" if rotated else "",
        )
        if current is None or current.status != "active":
            return Refreshed("fresh")
        return Refreshed("fresh", current.access_token, current.token_expires_at)
    refresh_at = got.refresh_expires_at if (got.refresh_expires_at or rotated) else acc.refresh_expires_at
    Account.update(
        access_token=got.access_token,
        refresh_token=got.refresh_token or sent,
        token_expires_at=got.expires_at,
        refresh_expires_at=refresh_at,
        token_refresh_until=None,
        token_refresh_lease=None,
        token_warned_for=None,
    ).where(Account.id == acc.id).execute()
    return None


def _platform(account_id: str) -> str:
    acc = Account.select(Account.platform).where(Account.id == account_id).first()
    return acc.platform if acc is not None else ""


def _release(account_id: str, lease: str) -> None:
    """Release the account's refresh lease if it is still `lease` (never another refresh's)."""
    with tx():
        Account.update(token_refresh_until=None, token_refresh_lease=None).where(
            (Account.id == account_id) & (Account.token_refresh_lease == lease)
        ).execute()


# ---- a dead grant ---------------------------------------------------------------------------------------
def mark_needs_reauth(
    account_id: str, detail: str | None = None, *, refused_target: str | None = None
) -> int:
    """The account's grant is dead: the account turns `needs_reauth`, an `account.needs_reauth` event is recorded,
    and each of its `pending` targets (not accepted by a network, no call in flight) fails `permanent` saying to
    reconnect — through the engine's decide + apply, so posts settle and their `publish.failed` events fire.
    Returns how many targets failed (0 and nothing done when the account was not active any more).
    `refused_target`: the target whose publication the network refused for the token (failed already by the
    engine), listed first in the event's failedTargets. Every way an account turns needs_reauth comes here: a dead
    grant at refresh, `accounts check`, a publication or a TikTok call refused.

    The account's change, its event and the targets of the first REAUTH_BATCH_POSTS posts are one transaction;
    the other posts' targets follow in transactions of that many posts each, so an account with a month of
    scheduled posts never holds the database's writer lock for long (on SQLite, 20,000 targets in one
    transaction held every other writer — the API, the worker's results and lease renewals — past the busy
    timeout). A later batch stops if the account was reconnected meanwhile; one cut short by a crash leaves
    targets `pending` on a `needs_reauth` account, which the engine fails the same way when they fall due.
    Locks: the posts (in id order), then the account, then each target (the engine's order is post, then
    target)."""
    post_ids = sorted({t.post_id for t in _pending(account_id)})
    batches = [post_ids[i : i + REAUTH_BATCH_POSTS] for i in range(0, len(post_ids), REAUTH_BATCH_POSTS)] or [
        []
    ]
    now = clock.now()
    failed = 0
    platform = ""
    for n, batch in enumerate(batches):
        with tx():
            posts = {p.id: p for p in (lock_post(pid) for pid in batch) if p is not None}
            acc = locked(Account.select().where(Account.id == account_id)).first()
            if acc is None or acc.status != ("active" if n == 0 else "needs_reauth"):
                if n == 0:
                    return 0
                log.info(
                    "account %s was reconnected while its pending targets were being failed: the targets of "
                    "%d post(s) stay pending",
                    account_id,
                    sum(len(b) for b in batches[n:]),
                )
                break
            targets = list(
                PostTarget.select()
                .where(
                    (PostTarget.account == account_id)
                    & (PostTarget.status == TargetStatus.PENDING)
                    & PostTarget.tracking_ref.is_null()
                    & PostTarget.post.in_(list(posts))
                )
                .order_by(PostTarget.post, PostTarget.position)
            )
            if n == 0:
                platform = acc.platform
                Account.update(
                    status="needs_reauth", token_refresh_until=None, token_refresh_lease=None
                ).where(Account.id == account_id).execute()
                events.record(
                    acc.workspace_id,
                    "account.needs_reauth",
                    {
                        "accountId": acc.id,
                        "platform": acc.platform,
                        "name": acc.name,
                        "status": "needs_reauth",
                        "reason": detail,
                        "reconnect": reconnect_command(acc),
                        "failedTargets": ([refused_target] if refused_target else [])
                        + [t.id for t in _pending(account_id)],
                    },
                    subject_id=acc.id,
                )
            for t in targets:
                apply(
                    decide.inactive_account(
                        state_of(t, posts[t.post_id]),
                        "needs_reauth",
                        now,
                        detail=detail,
                        unresolved=bool(unresolved_attempts(t.id)),
                    )
                )
            failed += len(targets)
    log.warning("account %s (%s) needs reauth; %d pending target(s) failed", account_id, platform, failed)
    return failed


def _pending(account_id: str) -> Any:
    """The account's targets mark_needs_reauth fails (pending, no call in flight, on a post not final), in its
    order: post, then position."""
    return (
        PostTarget.select(PostTarget.id, PostTarget.post)
        .join(Post, on=(PostTarget.post == Post.id))
        .where(
            (PostTarget.account == account_id)
            & (PostTarget.status == TargetStatus.PENDING)
            & PostTarget.tracking_ref.is_null()
            & Post.status.in_([PostStatus.SCHEDULED, PostStatus.PROCESSING])
        )
        .order_by(PostTarget.post, PostTarget.position)
    )


# ---- warnings -------------------------------------------------------------------------------------------
def life_end(account: Account, settings: Settings) -> datetime | None:
    """When the account stops working unless reconnected: its token's expiry when it cannot be refreshed, else
    its refresh token's (None: not known to end)."""
    end: datetime | None = (
        account.refresh_expires_at
        if refreshable(account.platform, account.refresh_token, settings)
        else account.token_expires_at
    )
    return end


def _in(delta: timedelta) -> str:
    """`in 3 days` / `5 hours ago`: the nearest whole unit."""
    s = abs(delta.total_seconds())
    if s >= 1.5 * 86400:
        n, unit = round(s / 86400), "day"
    elif s >= 1.5 * 3600:
        n, unit = round(s / 3600), "hour"
    else:
        n, unit = max(1, round(s / 60)), "minute"
    words = f"{n} {unit}{'' if n == 1 else 's'}"
    return f"in {words}" if delta.total_seconds() > 0 else f"{words} ago"


@dataclass(frozen=True)
class TokenState:
    """What needs doing about a live account's authorisation. code: `needs_reauth` (the network refused it),
    `token_expired` (it ended and cannot be refreshed), `token_expiring` (it ends within
    SOCIALPUB_TOKEN_WARNING_DAYS); problem: the warning's first half; fix: `reconnect with socialpub accounts
    connect NETWORK`."""

    code: str
    problem: str
    fix: str

    @property
    def warning(self) -> str:
        return f"{self.problem}: {self.fix}"


def token_state(account: Account, settings: Settings, now: datetime | None = None) -> TokenState | None:
    """The state behind `tokenWarning` and `accounts doctor`'s token findings; None when all is well (and for a
    sandbox or disconnected account)."""
    if account.kind != "live" or account.status == "disconnected":
        return None
    fix = f"reconnect with {reconnect_command(account)}"
    if account.status == "needs_reauth":
        return TokenState("needs_reauth", "the network no longer accepts its authorisation", fix)
    end = life_end(account, settings)
    now = now or clock.now()
    if end is None or end - now > timedelta(days=settings.token_warning_days):
        return None
    what = "token" if end == account.token_expires_at else "authorisation"
    if end <= now:
        return TokenState("token_expired", f"{what} expired {_in(end - now)}", fix)
    return TokenState("token_expiring", f"{what} expires {_in(end - now)}", fix)


def token_warning(account: Account, settings: Settings, now: datetime | None = None) -> str | None:
    """The warning the accounts API shows (`tokenWarning`) for a live account, None when all is well."""
    state = token_state(account, settings, now)
    return state.warning if state is not None else None


def warn_expiring(settings: Settings, now: datetime | None = None) -> int:
    """One `account.token_expiring` event per live active account and expiry within the warning window (a
    token that cannot be refreshed, or a refresh token that dies). Returns how many were recorded."""
    now = now or clock.now()
    horizon = now + timedelta(days=settings.token_warning_days)
    rows = Account.select().where(
        (Account.kind == "live")
        & (Account.status == "active")
        & ((Account.token_expires_at <= horizon) | (Account.refresh_expires_at <= horizon))
    )
    n = 0
    for acc in rows:
        end = life_end(acc, settings)
        if end is None or end > horizon or acc.token_warned_for == end:
            continue
        with tx():
            changed = (
                Account.update(token_warned_for=end)
                .where(
                    (Account.id == acc.id)
                    & (Account.status == "active")
                    & (Account.token_warned_for.is_null() | (Account.token_warned_for != end))
                )
                .execute()
            )
            if changed:
                events.record(
                    acc.workspace_id,
                    "account.token_expiring",
                    {
                        "accountId": acc.id,
                        "platform": acc.platform,
                        "name": acc.name,
                        "expiresAt": clock.iso(end),
                        "warning": token_warning(acc, settings, now),
                        "reconnect": reconnect_command(acc),
                    },
                    subject_id=acc.id,
                )
                n += 1
    return n


def public_fields(account: Account, settings: Settings, now: datetime | None = None) -> dict[str, Any]:
    """What the accounts API adds to an account's public form."""
    return {"tokenWarning": token_warning(account, settings, now)}
