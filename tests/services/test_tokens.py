"""Token life of live accounts (issue 17 item 3), against the emulators' OAuth (in process): the worker refreshes a
token a margin before expiry (TikTok and Google rotating the refresh token, stored with the access token), a dead
grant turns the account needs_reauth and fails its pending targets saying to reconnect, a transient failure leaves
the account alone and is retried, a token that cannot be refreshed is warned about (event once, API field), a
publish refreshes an expired token first, and sandbox accounts are never touched."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from datetime import timedelta
from typing import Any

import httpx
import peewee
import pytest
import time_machine

from backend import clock, queue
from backend.ids import new_id
from backend.jobs.worker import Worker
from backend.networks import tokens as net
from backend.networks.sandbox import credentials
from backend.services import adapters, tokens
from backend.store import secretbox
from backend.store.models import Account, Event, Job, PostTarget
from tests.conftest import key_headers
from tests.media import corpus
from tests.networks.test_sandbox_oauth import api_call, connect
from tests.services.test_publishing import create, read, upload
from tests.support.networks import own
from tests.support.worker import work

pytestmark = pytest.mark.usefixtures("audited_tiktok")  # TikTok's audit is not what these test

NETWORKS = ("tiktok", "facebook", "instagram", "linkedin", "youtube")


@pytest.fixture
def fast(settings, owner):  # type: ignore[no-untyped-def]
    """No rate limit, immediate retries, a paid plan (as tests/services/test_publishing.py's)."""
    from backend.services import workspace

    workspace.set_plan(owner.workspace_id, "GROWTH", "active", None)
    settings.rate_limit_per_minute = 1_000_000
    settings.retry_base_s = 0.0
    settings.retry_max_attempts = 3
    return settings


@pytest.fixture
def image_url(client, owner, fast):  # type: ignore[no-untyped-def]
    return upload(client, owner, corpus.jpeg(400, 400))


@pytest.fixture
def emu(fast, monkeypatch):  # type: ignore[no-untyped-def]
    """The OAuth apps configured; token endpoints and live accounts' API calls reach the in-process emulators."""
    # the flows here (test_sandbox_oauth's `connect`) send PKCE: LinkedIn takes it from a native app only
    fast.sandbox_apps = {**fast.sandbox_apps, "linkedin": {"kind": "native"}}
    sb = adapters.sandbox(fast)
    for p in NETWORKS:
        own(fast, p).client_id, own(fast, p).client_secret = "app-123", "s3cret"
        credentials.configure_oauth(p, reset=True)

    def network_client(settings: Any, platform: str, kind: str = "live") -> httpx.Client:
        return httpx.Client(transport=sb.transport(platform))

    monkeypatch.setattr(adapters, "network_client", network_client)
    monkeypatch.setattr(
        adapters,
        "adapter_for",
        lambda account, settings: adapters.make_adapter(account.platform, settings, live=False),
    )
    return sb


def emu_client(sb: Any, platform: str) -> httpx.Client:
    return httpx.Client(transport=sb.transport(platform), base_url="https://oauth.sandbox.invalid")


def live(owner: Any, sb: Any, platform: str, name: str = "") -> tuple[Account, dict[str, Any]]:
    """A live account made through the emulator's OAuth (authorize, code exchange; Graph: the page token)."""
    got = connect(emu_client(sb, platform), platform)
    now = clock.now()
    if platform in ("facebook", "instagram"):
        page = got["page"]
        external = page["instagram_business_account"]["id"] if platform == "instagram" else page["id"]
        access, refresh, expires = page["access_token"], None, now + timedelta(days=60)
    else:
        external = got.get("open_id") or "member"
        access, refresh = got["access_token"], got.get("refresh_token")
        expires = now + timedelta(seconds=got["expires_in"])
    acc = Account.create(
        id=new_id("acc"),
        workspace=owner.workspace_id,
        platform=platform,
        name=name or f"Live {platform}",
        username=f"live-{platform}",
        kind="live",
        status="active",
        external_id=external,
        access_token=access,
        refresh_token=refresh,
        token_expires_at=expires,
        connected_at=now,
        created_at=now,
    )
    return acc, got


REFRESHING = ("tiktok", "youtube", "linkedin")  # LinkedIn with programmatic refresh (the emulator's switch)
# how far on a token is due for refresh (the 15 min margin): TikTok 2 h, Google 1 h, LinkedIn 60 days
DUE = {
    "tiktok": timedelta(hours=1, minutes=50),
    "youtube": timedelta(minutes=50),
    "linkedin": timedelta(days=59, hours=23, minutes=50),
}


def refreshing(platform: str) -> None:
    if platform == "linkedin":
        credentials.configure_oauth("linkedin", refresh_enabled=True)


@pytest.fixture
def media_for(client, owner, fast):  # type: ignore[no-untyped-def]
    """A file each network takes: an image, a video for YouTube."""
    made: dict[str, str] = {}

    def get(platform: str) -> str:
        kind = "video" if platform == "youtube" else "image"
        if kind not in made:
            made[kind] = upload(
                client, owner, corpus.vertical_video(3) if kind == "video" else corpus.jpeg(400, 400)
            )
        return made[kind]

    return get


def refresh_with(sb: Any, platform: str, token: str) -> httpx.Response:
    client = "client_key" if platform == "tiktok" else "client_id"
    path = {"tiktok": "/v2/oauth/token/", "youtube": "/token", "linkedin": "/oauth/v2/accessToken"}[platform]
    return emu_client(sb, platform).post(
        path,
        data={
            client: "app-123",
            "client_secret": "s3cret",
            "grant_type": "refresh_token",
            "refresh_token": token,
        },
    )


def events(type_: str) -> list[Event]:
    return list(Event.select().where(Event.type == type_))


# ---- refresh and rotation -----------------------------------------------------------------------------------
def test_tiktok_refresh_rotates_and_stores_both_tokens(owner, fast, emu):  # type: ignore[no-untyped-def]
    acc, got = live(owner, emu, "tiktok")
    assert tokens.sweep(fast) == 0  # 2 h left: not due
    with time_machine.travel(clock.now() + timedelta(hours=1, minutes=50), tick=False):
        work(fast)  # the periodic sweep enqueues the refresh; the job refreshes
        fresh = Account.get_by_id(acc.id)
        assert fresh.status == "active"
        assert fresh.access_token != got["access_token"] and fresh.refresh_token != got["refresh_token"]
        assert fresh.token_expires_at - clock.now() > timedelta(hours=1, minutes=59)
        assert fresh.refresh_expires_at is not None and fresh.token_refresh_until is None
        job = Job.get(Job.kind == tokens.REFRESH_JOB)
        assert job.status == "done" and job.lane == "tiktok"
        # the old refresh token is dead; the new access token works; a second sweep finds nothing due
        old = refresh_with(emu, "tiktok", got["refresh_token"])
        assert old.status_code == 400 and old.json()["error"] == "invalid_grant"
        assert api_call(emu_client(emu, "tiktok"), "tiktok", {}, fresh.access_token).status_code == 200
        assert tokens.sweep(fast) == 0
    # a day later the stored (rotated) refresh token refreshes again
    with time_machine.travel(clock.now() + timedelta(hours=47, minutes=50), tick=False):
        work(fast)
        again = Account.get_by_id(acc.id)
        assert again.status == "active" and again.refresh_token not in (
            fresh.refresh_token,
            got["refresh_token"],
        )
        assert Job.select().where(Job.kind == tokens.REFRESH_JOB).count() == 2


@pytest.mark.parametrize("rotate", [True, False], ids=["reissued", "kept"])
def test_google_refresh_keeps_or_replaces_the_refresh_token(owner, fast, emu, rotate):  # type: ignore[no-untyped-def]
    credentials.configure_oauth("youtube", rotate=rotate)
    acc, got = live(owner, emu, "youtube")
    with time_machine.travel(clock.now() + timedelta(minutes=50), tick=False):  # a 1 h token, 15 min margin
        assert tokens.refresh_account(acc.id, fast).result == "refreshed"
        fresh = Account.get_by_id(acc.id)
        assert fresh.access_token.startswith("ya29.") and fresh.access_token != got["access_token"]
        assert fresh.token_expires_at - clock.now() >= timedelta(minutes=59)
        assert (fresh.refresh_token != got["refresh_token"]) is rotate
        assert refresh_with(emu, "youtube", fresh.refresh_token).status_code == 200
        assert tokens.refresh_account(acc.id, fast).result == "fresh"  # not due any more: nothing done


def test_refresh_of_a_rotated_token_already_replaced_is_not_a_dead_grant(owner, fast, emu):  # type: ignore[no-untyped-def]
    """Two refreshes at once: the account is held by the first; the second is told so (and the job waits)."""
    acc, _ = live(owner, emu, "tiktok")
    with time_machine.travel(clock.now() + timedelta(hours=1, minutes=55), tick=False):
        Account.update(token_refresh_until=clock.now() + timedelta(seconds=30)).where(
            Account.id == acc.id
        ).execute()
        with pytest.raises(tokens.RefreshBusy):
            tokens.refresh_account(acc.id, fast)
        assert Account.get_by_id(acc.id).status == "active"


# ---- a dead grant ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["revoked", "switch"])
@pytest.mark.parametrize("platform", REFRESHING)
def test_a_dead_grant_needs_reauth_and_fails_pending_targets(
    client, owner, fast, emu, media_for, how, platform
):  # type: ignore[no-untyped-def]
    refreshing(platform)
    acc, got = live(owner, emu, platform, "Creator account")
    later = clock.iso(clock.now() + timedelta(days=2) + DUE[platform])
    post = create(
        client,
        owner,
        targets=[{"platform": platform, "channelId": acc.id}],
        content="later",
        mediaUrls=[media_for(platform)],
        scheduledAt=later,
    )
    if how == "revoked":
        assert credentials.revoke_token(got["refresh_token"], platform)
    else:
        credentials.configure_oauth(platform, token_failure="invalid_grant")
    with time_machine.travel(clock.now() + DUE[platform], tick=False):
        work(fast)
        assert Account.get_by_id(acc.id).status == "needs_reauth"
        shown = read(client, owner, post["id"])
        [target] = shown["targets"]
        assert target["status"] == "failed" and target["failType"] == "permanent"
        assert f"socialpub accounts connect {platform}" in target["failReason"]
        assert "must be reconnected" in target["failReason"]
        [ev] = events("account.needs_reauth")
        assert (
            ev.data["accountId"] == acc.id
            and ev.data["reconnect"] == f"socialpub accounts connect {platform}"
        )
        [row] = PostTarget.select().where(PostTarget.account == acc.id)
        assert ev.data["failedTargets"] == [row.id]
        assert [e.data["targetId"] for e in events("publish.failed")] == [row.id]
        listed = client.get("/v1/accounts", headers=key_headers(owner.api_key)).json()["items"]
        mine = next(a for a in listed if a["id"] == acc.id)
        assert (
            mine["status"] == "needs_reauth"
            and f"socialpub accounts connect {platform}" in mine["tokenWarning"]
        )
        # its only target failed: the post is failed now, not `scheduled` (editable, to be sent) until its time
        assert read(client, owner, post["id"])["status"] == "failed"
        assert (
            client.patch(
                f"/v1/posts/{post['id']}", json={"content": "x"}, headers=key_headers(owner.api_key)
            ).json()["error"]
            == "post_not_editable"
        )
    with time_machine.travel(clock.now() + timedelta(days=2, minutes=1) + DUE[platform], tick=False):
        work(fast)  # the post's time: nothing is sent, it stays failed
        assert read(client, owner, post["id"])["status"] == "failed"
        assert [e.data["targetId"] for e in events("publish.failed")] == [row.id]  # once
        assert len(events("account.needs_reauth")) == 1


def scheduled_on(client, owner, account_id: str, n: int) -> list[str]:  # type: ignore[no-untyped-def]
    later = clock.iso(clock.now() + timedelta(days=3))
    return [
        create(
            client,
            owner,
            targets=[{"platform": "facebook", "channelId": account_id}],
            content=f"later {i}",
            scheduledAt=later,
        )["id"]
        for i in range(n)
    ]


def test_needs_reauth_fails_a_month_of_targets_a_batch_of_posts_a_transaction(
    client,
    owner,
    fast,
    emu,  # type: ignore[no-untyped-def]
    monkeypatch,
):
    acc, _ = live(owner, emu, "facebook", "Page")
    posts = scheduled_on(client, owner, acc.id, 5)
    monkeypatch.setattr(tokens, "REAUTH_BATCH_POSTS", 2)
    opened = []
    real_tx = tokens.tx
    monkeypatch.setattr(tokens, "tx", lambda: (opened.append(1), real_tx())[1])
    assert tokens.mark_needs_reauth(acc.id, "revoked") == 5
    assert len(opened) == 3  # 2 + 2 + 1 posts
    assert [t["status"] for p in posts for t in read(client, owner, p)["targets"]] == ["failed"] * 5
    [ev] = events("account.needs_reauth")
    assert sorted(ev.data["failedTargets"]) == sorted(t.id for t in PostTarget.select())
    assert len(events("publish.failed")) == 5
    assert tokens.mark_needs_reauth(acc.id, "revoked") == 0  # once


def test_a_reconnect_between_batches_leaves_the_other_targets_pending(
    client,
    owner,
    fast,
    emu,
    monkeypatch,  # type: ignore[no-untyped-def]
    caplog,
):
    acc, _ = live(owner, emu, "facebook", "Page")
    scheduled_on(client, owner, acc.id, 5)
    monkeypatch.setattr(tokens, "REAUTH_BATCH_POSTS", 2)
    real_apply = tokens.apply
    applied = []

    def apply_then_reconnect(decision):  # type: ignore[no-untyped-def]
        real_apply(decision)
        applied.append(decision)
        if len(applied) == 2:  # the end of the first batch: the owner reconnects (committed before the next)
            Account.update(status="active").where(Account.id == acc.id).execute()

    monkeypatch.setattr(tokens, "apply", apply_then_reconnect)
    with caplog.at_level(logging.INFO, logger="socialpub.tokens"):
        assert tokens.mark_needs_reauth(acc.id, "revoked") == 2
    assert sorted(t.status for t in PostTarget.select()) == [
        "failed",
        "failed",
        "pending",
        "pending",
        "pending",
    ]
    assert "reconnected while its pending targets were being failed" in caplog.text


# ---- a transient failure ------------------------------------------------------------------------------------
@pytest.mark.parametrize("platform", REFRESHING)
def test_a_transient_refresh_failure_never_disconnects(owner, fast, emu, platform):  # type: ignore[no-untyped-def]
    fast.retry_base_s = 30.0  # the worker's backoff: the next try within 30 s
    refreshing(platform)
    acc, got = live(owner, emu, platform)
    credentials.configure_oauth(platform, token_failure="server_error")
    with time_machine.travel(clock.now() + DUE[platform], tick=False) as traveller:
        with pytest.raises(tokens.RefreshTransient):
            tokens.refresh_account(acc.id, fast)
        assert tokens.sweep(fast) == 1
        work(fast)
        job = Job.get(Job.kind == tokens.REFRESH_JOB)
        assert (
            job.status == "queued" and job.attempts == 1 and "token refresh" in job.last_error
        )  # retried later
        same = Account.get_by_id(acc.id)
        assert same.status == "active" and same.access_token == got["access_token"]
        assert same.token_refresh_until is None  # not held by the failed try
        assert not events("account.needs_reauth")
        credentials.configure_oauth(platform, token_failure=None)  # the network is back
        traveller.shift(timedelta(minutes=2))
        work(fast)
        assert Job.get_by_id(job.id).status == "done"
        assert Account.get_by_id(acc.id).access_token != got["access_token"]


# ---- the store of a refreshed pair (review of issue 17) --------------------------------------------------------
def failing_commits(monkeypatch: Any, fail: set[int]) -> list[int]:
    """The transactions of services/tokens.py numbered from 1; those in `fail` are rolled back at COMMIT with
    SQLite's `database is locked` (what a PostgreSQL serialization failure or a dropped connection does too)."""
    real_tx = tokens.tx
    calls: list[int] = []

    @contextlib.contextmanager
    def tx():  # type: ignore[no-untyped-def]
        calls.append(len(calls) + 1)
        n = calls[-1]
        with real_tx():
            yield
            if n in fail:
                raise peewee.OperationalError("database is locked")

    monkeypatch.setattr(tokens, "tx", tx)
    return calls


def test_a_failed_commit_after_rotation_is_tried_again(owner, fast, emu, monkeypatch):  # type: ignore[no-untyped-def]
    """TikTok has rotated the refresh token (the old one is dead); the store fails twice at COMMIT: tried
    again, the new pair is stored, the lease is released and the grant lives on."""
    acc, got = live(owner, emu, "tiktok")
    with time_machine.travel(clock.now() + DUE["tiktok"], tick=False):
        calls = failing_commits(monkeypatch, {2, 3})  # 1: the lease; 2, 3, 4: the store
        assert tokens.refresh_account(acc.id, fast).result == "refreshed"
        assert len(calls) == 5  # the lease, three tries of the store, the release (a no-op: released already)
        fresh = Account.get_by_id(acc.id)
        assert fresh.status == "active" and fresh.refresh_token != got["refresh_token"]
        assert fresh.token_refresh_until is None and fresh.token_refresh_lease is None
        assert (
            refresh_with(emu, "tiktok", fresh.refresh_token).status_code == 200
        )  # the stored one is the live one


def test_a_store_that_keeps_failing_releases_the_lease_and_says_the_token_is_lost(
    owner, fast, emu, monkeypatch, caplog
):  # type: ignore[no-untyped-def]
    acc, got = live(owner, emu, "tiktok")
    with time_machine.travel(clock.now() + DUE["tiktok"], tick=False):
        failing_commits(monkeypatch, {2, 3, 4, 5, 6})  # every try of the store
        with (
            caplog.at_level(logging.WARNING, logger="socialpub.tokens"),
            pytest.raises(peewee.OperationalError),
        ):
            tokens.refresh_account(acc.id, fast)
        same = Account.get_by_id(acc.id)
        assert same.token_refresh_until is None and same.token_refresh_lease is None  # released
        assert same.refresh_token == got["refresh_token"]
        [error] = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert acc.id in error.getMessage() and "LOST" in error.getMessage()
        assert got["refresh_token"] not in caplog.text and got["access_token"] not in caplog.text


def test_a_secrets_key_that_cannot_encrypt_stops_the_refresh_before_the_network(owner, fast, emu):  # type: ignore[no-untyped-def]
    """The new pair could not be stored: the network is not asked (it would retire the refresh token)."""
    acc, got = live(owner, emu, "tiktok")
    ring = secretbox.keyring()
    original = ring.path.read_bytes()
    try:
        ring.path.write_text("not a key\n")
        with (
            time_machine.travel(clock.now() + DUE["tiktok"], tick=False),
            pytest.raises(secretbox.SecretsKeyError),
        ):
            tokens.refresh_account(acc.id, fast)
    finally:
        ring.path.write_bytes(original)
    assert Account.get_by_id(acc.id).token_refresh_until is None  # nothing held
    assert refresh_with(emu, "tiktok", got["refresh_token"]).status_code == 200  # never sent: still alive


# ---- one refresh at a time (review of issue 17) ---------------------------------------------------------------
def test_a_refresh_outliving_its_lease_does_not_kill_a_live_grant(owner, fast, emu, monkeypatch):  # type: ignore[no-untyped-def]
    """The first refresh's answer comes late (a slow network, a suspended laptop): the lease has run out, a
    second refresh takes it and sends the refresh token TikTok has just rotated: invalid_grant. Not taken as a
    dead grant (the lease taken over was never released: its refresh may be in flight): the account is held a
    lease longer; the first stores its pair (rotated: the only live one); the second's retry finds it fresh."""
    acc, _ = live(owner, emu, "tiktok")
    real_refresh = net.refresh
    second: dict[str, Any] = {}

    def slow_refresh(app, client, refresh_token, **kw):  # type: ignore[no-untyped-def]
        got = real_refresh(app, client, refresh_token, **kw)  # TikTok rotates: the old refresh token is dead
        if not second:  # the answer is slow to arrive: the lease runs out meanwhile
            second["started"] = True
            with time_machine.travel(clock.now() + tokens.lease_of(fast) + timedelta(seconds=1), tick=False):
                try:
                    second["result"] = tokens.refresh_account(acc.id, fast)
                except tokens.RefreshBusy as exc:
                    second["busy"] = exc
        return got

    monkeypatch.setattr(net, "refresh", slow_refresh)
    with time_machine.travel(clock.now() + DUE["tiktok"], tick=False):
        first = tokens.refresh_account(acc.id, fast)
        assert first.result == "refreshed", second
        assert "busy" in second, second  # told to try again after the grace lease
        after = Account.get_by_id(acc.id)
        assert after.status == "active" and not events("account.needs_reauth")
        assert after.token_refresh_until is None and after.token_refresh_lease is None
        assert refresh_with(emu, "tiktok", after.refresh_token).status_code == 200
    with time_machine.travel(second["busy"].until + timedelta(seconds=1), tick=False):
        assert tokens.refresh_account(acc.id, fast).result == "fresh"  # the retry: the first stored a pair


def test_a_dead_grant_after_taking_over_a_lease_is_tried_once_more(owner, fast, emu):  # type: ignore[no-untyped-def]
    """A lease left unreleased (its process died): the grant really is dead. The first invalid_grant holds the
    account a lease longer; the second, on a lease that was released, turns it needs_reauth."""
    acc, got = live(owner, emu, "tiktok")
    assert credentials.revoke_token(got["refresh_token"], "tiktok")
    with time_machine.travel(clock.now() + DUE["tiktok"], tick=False) as traveller:
        Account.update(
            token_refresh_until=clock.now() - timedelta(seconds=1),
            token_refresh_lease="lease_of_a_dead_process",
        ).where(Account.id == acc.id).execute()
        with pytest.raises(tokens.RefreshBusy) as busy:
            tokens.refresh_account(acc.id, fast)
        assert Account.get_by_id(acc.id).status == "active"
        with pytest.raises(tokens.RefreshBusy):  # held meanwhile
            tokens.refresh_account(acc.id, fast)
        traveller.move_to(busy.value.until + timedelta(seconds=1))
        assert tokens.refresh_account(acc.id, fast).result == "dead"
        assert Account.get_by_id(acc.id).status == "needs_reauth"
        assert len(events("account.needs_reauth")) == 1


def test_a_refresh_answer_is_not_written_over_another_refreshs(owner, fast, emu, monkeypatch):  # type: ignore[no-untyped-def]
    """Google keeps the refresh token: two refreshes overlapping both get a valid answer; the one whose lease
    was taken over does not overwrite the pair the holder stored."""
    credentials.configure_oauth("youtube", rotate=False)
    acc, _ = live(owner, emu, "youtube")
    real_refresh = net.refresh
    seen: dict[str, Any] = {}

    def slow_refresh(app, client, refresh_token, **kw):  # type: ignore[no-untyped-def]
        got = real_refresh(app, client, refresh_token, **kw)
        if not seen:
            seen["started"] = True
            with time_machine.travel(clock.now() + tokens.lease_of(fast) + timedelta(seconds=1), tick=False):
                seen["second"] = tokens.refresh_account(acc.id, fast)
                seen["stored"] = Account.get_by_id(acc.id).access_token
        return got

    monkeypatch.setattr(net, "refresh", slow_refresh)
    with time_machine.travel(clock.now() + DUE["youtube"], tick=False):
        first = tokens.refresh_account(acc.id, fast)
    assert seen["second"].result == "refreshed" and first.result == "fresh"
    after = Account.get_by_id(acc.id)
    assert after.access_token == seen["stored"] == seen["second"].access_token
    assert after.status == "active" and after.token_refresh_until is None


class Trickle:
    """A loopback token endpoint that answers 200 and then one byte of its body every 0.1 s: each read is within
    any per-phase timeout, the whole answer never ends."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.base = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            conn, _ = self.sock.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
                )
                while not self.stop.wait(0.1):
                    conn.sendall(b" ")

    def close(self) -> None:
        self.stop.set()
        self.sock.close()
        self.thread.join(5)


def test_the_refresh_call_is_bounded_as_a_whole(owner, fast):  # type: ignore[no-untyped-def]
    """httpx's timeouts are per phase; the refresh's watchdog cuts the whole call at 2 network timeouts, well
    inside the lease: a transient failure, the account untouched and released."""
    server = Trickle()
    fast.network_timeout_s = 0.5  # each byte comes within it; the watchdog fires at 1 s, the lease is 31 s
    own(fast, "tiktok").api_base = server.base
    own(fast, "tiktok").client_id, own(fast, "tiktok").client_secret = "app-123", "s3cret"
    now = clock.now()
    acc = Account.create(
        id=new_id("acc"),
        workspace=owner.workspace_id,
        platform="tiktok",
        name="Slow",
        kind="live",
        status="active",
        external_id="o1",
        access_token="act.1",
        refresh_token="rft.1",
        token_expires_at=now + timedelta(minutes=5),
        connected_at=now,
        created_at=now,
    )
    try:
        started = time.monotonic()
        with pytest.raises(tokens.RefreshTransient) as failed:
            tokens.refresh_account(acc.id, fast)
        took = time.monotonic() - started
    finally:
        server.close()
    assert failed.value.code == "timeout" and "1 s" in failed.value.detail
    assert 0.9 < took < tokens.lease_of(fast).total_seconds() / 10, took
    same = Account.get_by_id(acc.id)
    assert (
        same.access_token == "act.1" and same.token_refresh_until is None and same.token_refresh_lease is None
    )


# ---- a dead refresh job (review of issue 17) -------------------------------------------------------------------
def test_the_sweep_refreshes_again_after_a_dead_refresh_job(owner, fast, emu, caplog):  # type: ignore[no-untyped-def]
    """Google unreachable long enough for the job to spend its tries: it dies (said at WARNING with the
    account); Google back, a later sweep (not the next: DEAD_REFRESH_RETRY_S) queues it again and the token is
    refreshed."""
    acc, got = live(owner, emu, "youtube")  # a 1 h token
    credentials.configure_oauth("youtube", token_failure="server_error")
    with (
        time_machine.travel(clock.now() + DUE["youtube"], tick=False) as traveller,
        caplog.at_level(logging.WARNING, logger="socialpub.tokens"),
    ):
        for _ in range(tokens.REFRESH_MAX_ATTEMPTS + 2):
            work(fast)
        job = Job.get(Job.kind == tokens.REFRESH_JOB)
        assert job.status == "dead" and job.attempts == tokens.REFRESH_MAX_ATTEMPTS
        [said] = [r for r in caplog.records if "gave up" in r.getMessage()]
        assert said.levelno == logging.WARNING and acc.id in said.getMessage()
        credentials.configure_oauth("youtube", token_failure=None)  # Google is back
        traveller.shift(timedelta(minutes=5))
        work(fast)  # a sweep soon after: the dead job is left alone for now
        assert Job.get_by_id(job.id).status == "dead"
        assert Account.get_by_id(acc.id).access_token == got["access_token"]
        traveller.shift(timedelta(seconds=tokens.DEAD_REFRESH_RETRY_S))  # the token has expired by now
        work(fast)
        after = Account.get_by_id(acc.id)
        assert after.access_token != got["access_token"] and after.token_expires_at > clock.now()
        assert Job.get_by_id(job.id).status == "done"
        assert after.status == "active" and not events("account.needs_reauth")


# ---- tokens that cannot be refreshed: the warning -------------------------------------------------------------
def test_expiry_warning_once_per_expiry(client, owner, fast, emu):  # type: ignore[no-untyped-def]
    fast.token_warning_days = 7
    fb, _ = live(owner, emu, "facebook", "Brand page")
    li, _ = live(owner, emu, "linkedin", "Brand LinkedIn")  # 60 days, no refresh token
    Account.update(token_expires_at=clock.now() + timedelta(days=3, hours=1)).where(
        Account.id == fb.id
    ).execute()
    assert tokens.warn_expiring(fast) == 1
    assert tokens.warn_expiring(fast) == 0  # once per expiry
    work(fast)  # the sweep warns too: nothing new
    [ev] = events("account.token_expiring")
    assert ev.data["accountId"] == fb.id and ev.data["reconnect"] == "socialpub accounts connect facebook"
    assert ev.data["warning"] == "token expires in 3 days: reconnect with socialpub accounts connect facebook"
    listed = {
        a["id"]: a for a in client.get("/v1/accounts", headers=key_headers(owner.api_key)).json()["items"]
    }
    assert listed[fb.id]["tokenWarning"] == ev.data["warning"]
    assert listed[li.id]["tokenWarning"] is None
    # LinkedIn's comes 53 days on, once
    with time_machine.travel(clock.now() + timedelta(days=54), tick=False):
        assert tokens.warn_expiring(fast) == 1
        listed = {
            a["id"]: a for a in client.get("/v1/accounts", headers=key_headers(owner.api_key)).json()["items"]
        }
        assert listed[li.id]["tokenWarning"].startswith("token expires in 6 days")
        assert listed[fb.id]["tokenWarning"].startswith("token expired 51 days ago")
    # reconnected (a new expiry): warned again when that one comes near
    Account.update(token_expires_at=clock.now() + timedelta(days=2)).where(Account.id == fb.id).execute()
    assert tokens.warn_expiring(fast) == 1


@pytest.mark.parametrize("platform", ["facebook", "instagram", "linkedin"])
def test_a_token_that_cannot_be_refreshed_is_warned_about_once(client, owner, fast, emu, platform):  # type: ignore[no-untyped-def]
    """Per network without refresh: the warning SOCIALPUB_TOKEN_WARNING_DAYS before expiry, once, as an event and
    in the API's tokenWarning (accounts list and the TUI's accounts screen show that field)."""
    fast.token_warning_days = 7
    acc, _ = live(owner, emu, platform)
    assert acc.refresh_token is None
    Account.update(token_expires_at=clock.now() + timedelta(days=8)).where(Account.id == acc.id).execute()
    assert tokens.warn_expiring(fast) == 0
    with time_machine.travel(clock.now() + timedelta(days=2), tick=False):
        work(fast)  # the periodic sweep warns
        [ev] = events("account.token_expiring")
        assert ev.data["accountId"] == acc.id and ev.data["platform"] == platform
        assert ev.data["warning"].startswith(("token expires in 5 days", "token expires in 6 days"))
        assert tokens.warn_expiring(fast) == 0
        listed = {
            a["id"]: a for a in client.get("/v1/accounts", headers=key_headers(owner.api_key)).json()["items"]
        }
        assert listed[acc.id]["tokenWarning"] == ev.data["warning"]
        assert f"socialpub accounts connect {platform}" in ev.data["warning"]


@pytest.mark.parametrize("platform", REFRESHING)
def test_a_refreshable_token_is_not_warned_about_but_its_refresh_token_is(owner, fast, emu, platform):  # type: ignore[no-untyped-def]
    refreshing(platform)
    tt, _ = live(owner, emu, platform)  # its access token is refreshed, never warned about
    assert tt.refresh_token
    assert tokens.warn_expiring(fast) == 0 and tokens.token_warning(tt, fast) is None
    Account.update(refresh_expires_at=clock.now() + timedelta(days=2)).where(Account.id == tt.id).execute()
    assert tokens.warn_expiring(fast) == 1
    assert tokens.token_warning(Account.get_by_id(tt.id), fast).startswith("authorisation expires in 2 days")


def test_a_refresh_token_without_the_app_configured_is_warned_about(owner, fast, emu):  # type: ignore[no-untyped-def]
    tt, _ = live(owner, emu, "tiktok")
    own(fast, "tiktok").client_id = None  # SOCIALPUB_TIKTOK_CLIENT_ID unset: nobody can refresh it
    with time_machine.travel(clock.now() + timedelta(hours=1, minutes=55), tick=False):
        assert tokens.sweep(fast) == 0
        assert tokens.token_warning(Account.get_by_id(tt.id), fast).startswith("token expires in 5 minutes")
        assert len(events("account.token_expiring")) == 1


# ---- publish-time refresh -------------------------------------------------------------------------------------
def test_a_publish_refreshes_an_expired_token_first(client, owner, fast, emu, image_url):  # type: ignore[no-untyped-def]
    fast.track_poll_s = 0.05
    acc, got = live(owner, emu, "tiktok")
    with time_machine.travel(
        clock.now() + timedelta(hours=25), tick=True
    ):  # ticking: the tracking polls come
        # the old token is refused now; the publish refreshes it before calling
        refused = api_call(emu_client(emu, "tiktok"), "tiktok", {}, got["access_token"])
        assert refused.status_code == 401
        post = create(
            client,
            owner,
            targets=[{"platform": "tiktok", "channelId": acc.id}],
            content="now",
            mediaUrls=[image_url],
        )
        Worker(fast, concurrency=1).run_until_idle(max_seconds=20, settle_s=1)
        done = read(client, owner, post["id"])
        assert done["targets"][0]["status"] in ("succeeded", "inbox_delivered"), done["targets"][0][
            "failReason"
        ]
        fresh = Account.get_by_id(acc.id)
        assert fresh.status == "active" and fresh.access_token != got["access_token"]
        assert fresh.refresh_token != got["refresh_token"]


def test_a_publish_with_a_dead_grant_fails_saying_to_reconnect(client, owner, fast, emu, image_url):  # type: ignore[no-untyped-def]
    acc, got = live(owner, emu, "tiktok")
    credentials.revoke_token(got["refresh_token"], "tiktok")
    with time_machine.travel(clock.now() + timedelta(hours=25), tick=False):
        post = create(
            client,
            owner,
            targets=[{"platform": "tiktok", "channelId": acc.id}],
            content="now",
            mediaUrls=[image_url],
        )
        Worker(fast, concurrency=1).run_until_idle(max_seconds=20, settle_s=1)
        done = read(client, owner, post["id"])
        assert done["status"] == "failed"
        assert "socialpub accounts connect tiktok" in done["targets"][0]["failReason"]
        assert Account.get_by_id(acc.id).status == "needs_reauth"
        assert len(events("account.needs_reauth")) == 1


@pytest.mark.parametrize("platform", NETWORKS)
def test_a_token_refused_during_a_publication_is_reported_once(client, owner, fast, emu, media_for, platform):  # type: ignore[no-untyped-def]
    """A grant revoked at the network while its token is still young: the publish call is refused, the account
    turns needs_reauth with its event (one, whatever the number of refused targets), and the account's other
    pending targets (a post scheduled for tomorrow) fail at once saying to reconnect, listed in the event."""
    acc, got = live(owner, emu, platform)
    assert credentials.revoke_token(acc.access_token, platform)
    media = [media_for(platform)]
    later = create(
        client,
        owner,
        targets=[{"platform": platform, "channelId": acc.id}],
        content="tomorrow",
        mediaUrls=media,
        scheduledAt=clock.iso(clock.now() + timedelta(days=1)),
    )
    post = create(
        client, owner, targets=[{"platform": platform, "channelId": acc.id}], content="now", mediaUrls=media
    )
    work(fast)
    done = read(client, owner, post["id"])
    assert done["status"] == "failed" and done["targets"][0]["failType"] == "permanent"
    assert Account.get_by_id(acc.id).status == "needs_reauth"
    [ev] = events("account.needs_reauth")
    assert ev.data["accountId"] == acc.id and ev.data["reconnect"] == f"socialpub accounts connect {platform}"
    waiting = read(client, owner, later["id"])
    assert waiting["targets"][0]["status"] == "failed"  # the post settles at its time, sending nothing
    assert f"socialpub accounts connect {platform}" in waiting["targets"][0]["failReason"]
    refused, other = (PostTarget.get(PostTarget.post == p["id"]).id for p in (post, later))
    assert ev.data["failedTargets"] == [refused, other]


# ---- sandbox accounts ----------------------------------------------------------------------------------------
def test_sandbox_accounts_are_untouched(settings, client, owner, fast, emu):  # type: ignore[no-untyped-def]
    from backend.services import accounts

    accounts.connect_sandbox_defaults(settings, owner.workspace_id)
    Account.update(token_expires_at=clock.now() + timedelta(minutes=1), refresh_token="rft.x").where(
        Account.kind == "sandbox"
    ).execute()
    before = {a.id: (a.access_token, a.status) for a in Account.select()}
    with time_machine.travel(clock.now() + timedelta(days=30), tick=False):
        assert tokens.sweep(fast) == 0 and tokens.warn_expiring(fast) == 0
        work(fast)
        assert {a.id: (a.access_token, a.status) for a in Account.select()} == before
        assert all(
            a["tokenWarning"] is None
            for a in client.get("/v1/accounts", headers=key_headers(owner.api_key)).json()["items"]
        )
    assert not Job.select().where(Job.kind == tokens.REFRESH_JOB).exists()
    assert not PostTarget.select().exists() and queue.stats().get("dead", 0) == 0


# ---- over HTTP, against `socialpub sandbox serve` ------------------------------------------------------------
def test_refresh_and_a_revoked_grant_against_a_served_emulator(client, owner, fast, tmp_path):  # type: ignore[no-untyped-def]
    """No transport swapped: the token endpoint is found from SOCIALPUB_TIKTOK_BASE_URL on loopback, as a user
    pointing socialpub at `socialpub sandbox serve tiktok` has it."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from tests.networks.test_sandbox_oauth import _free_port

    port = _free_port()
    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "PYTHONPATH": str(root),
        "SOCIALPUB_DATA_DIR": str(tmp_path / "product"),
        "SOCIALPUB_SANDBOX_DELAY_S": "0",
    }
    env.pop("SOCIALPUB_DATABASE_URL", None)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from socialpub_tui.cli.main import main; main()",
            "sandbox",
            "serve",
            "tiktok",
            "--port",
            str(port),
            "--data-dir",
            str(tmp_path / "emu"),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    own(fast, "tiktok").api_base = base
    own(fast, "tiktok").client_id, own(fast, "tiktok").client_secret = "app-123", "s3cret"
    try:
        with httpx.Client(base_url=base, trust_env=False, timeout=5) as c:
            deadline = time.monotonic() + 30
            while True:
                try:
                    c.get("/_sandbox/oauth")
                    break
                except httpx.TransportError:
                    assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1]
                    time.sleep(0.2)
            got = connect(c, "tiktok")
            now = clock.now()
            acc = Account.create(
                id=new_id("acc"),
                workspace=owner.workspace_id,
                platform="tiktok",
                name="Served",
                kind="live",
                status="active",
                external_id=got["open_id"],
                access_token=got["access_token"],
                refresh_token=got["refresh_token"],
                token_expires_at=now + timedelta(seconds=got["expires_in"]),
                connected_at=now,
                created_at=now,
            )
            with time_machine.travel(now + timedelta(hours=1, minutes=55), tick=False):
                assert tokens.refresh_account(acc.id, fast).result == "refreshed"
                fresh = Account.get_by_id(acc.id)
                assert fresh.refresh_token != got["refresh_token"]
                assert (
                    c.post(
                        "/v2/oauth/token/",
                        data={
                            "client_key": "app-123",
                            "client_secret": "s3cret",
                            "grant_type": "refresh_token",
                            "refresh_token": got["refresh_token"],
                        },
                    ).status_code
                    == 400
                )
                # the user revokes the grant at the network
                r = c.post(
                    "/v2/oauth/revoke/",
                    data={"client_key": "app-123", "client_secret": "s3cret", "token": fresh.access_token},
                )
                assert r.status_code == 200
                assert tokens.refresh_account(acc.id, fast, force=True).result == "dead"
            listed = {
                a["id"]: a
                for a in client.get("/v1/accounts", headers=key_headers(owner.api_key)).json()["items"]
            }
            assert listed[acc.id]["status"] == "needs_reauth"
            assert "reconnect with socialpub accounts connect tiktok" in listed[acc.id]["tokenWarning"]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)


def test_removing_an_account_drops_its_refresh_token_too(owner, fast, emu):  # type: ignore[no-untyped-def]
    from backend.services import accounts as accounts_service

    acc, _ = live(owner, emu, "tiktok")
    assert Account.get_by_id(acc.id).refresh_token  # a year-long TikTok credential, encrypted at rest
    accounts_service.disconnect(owner.workspace_id, acc.id)
    gone = Account.get_by_id(acc.id)
    assert gone.status == "disconnected" and gone.access_token == "" and gone.refresh_token is None


def test_an_expired_token_the_network_will_not_refresh_now_is_said_on_the_waiting_target(
    client,
    owner,
    fast,
    emu,  # type: ignore[no-untyped-def]
    media_for,
):
    """YouTube's token endpoint failing (500) when a post falls due on an expired token: the target waits
    `pending` saying why, with its next attempt; when the job's tries run out, the failure names that cause
    (it said only "an internal error")."""
    acc, _ = live(owner, emu, "youtube")  # a 1 h token
    credentials.configure_oauth("youtube", token_failure="server_error")
    fast.retry_base_s = 60.0  # each try waits: the waiting target can be read between them
    due = clock.now() + timedelta(hours=2)
    post = create(
        client,
        owner,
        targets=[{"platform": "youtube", "channelId": acc.id}],
        content="x",
        mediaUrls=[media_for("youtube")],
        scheduledAt=clock.iso(due),
    )
    with time_machine.travel(due + timedelta(seconds=1), tick=False) as traveller:
        work(fast)
        [target] = read(client, owner, post["id"])["targets"]
        assert target["status"] == "pending" and target["nextAttemptAt"] is not None, target
        assert (
            "YouTube token has expired" in target["failReason"]
            and "could not refresh" in target["failReason"]
        )
        for _ in range(12):  # the job's tries, each after its wait
            traveller.shift(timedelta(hours=1))
            work(fast)
        [target] = read(client, owner, post["id"])["targets"]
    assert target["status"] == "failed" and target["failType"] == "retriable", target
    assert "the last problem seen: the account's YouTube token has expired" in target["failReason"]
