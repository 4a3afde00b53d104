"""The sandbox as its own system: its database, its latency, caps under concurrency, paginated listings and
find_existing over a window, the upgrade from the product's tables (migration 0012)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import httpx
import pytest
import time_machine

from backend import clock
from backend.networks.base import Publication, Unverifiable, encode_ref
from backend.networks.sandbox import list_published
from backend.networks.youtube.emulator import UPLOAD_SESSION as YT_UPLOAD_SESSION
from backend.services.adapters import make_adapter, sandbox
from tests.networks.conftest import IMG, READABLE_APPS, VID, publication
from tests.networks.test_networks import loader
from tests.support.networks import own

pytestmark = pytest.mark.usefixtures("audited_tiktok")  # TikTok's audit is not what these test

MEDIA = {"facebook": [IMG[0]], "instagram": [IMG[0]], "linkedin": [], "tiktok": [VID], "youtube": [VID]}


def counting(settings, platform: str, seen: list[httpx.Request]):  # type: ignore[no-untyped-def]
    """The sandbox adapter of `platform` with a spy on every request it sends."""
    emu = sandbox(settings).transport(platform)

    def spy(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        return emu.handle_request(req)

    return make_adapter(platform, settings, transport=httpx.MockTransport(spy), media_loader=loader)


def publish_done(ad, pub):  # type: ignore[no-untyped-def]
    out = ad.publish(pub)
    if out.state == "pending":
        out = ad.check_status(pub, out.tracking_ref)
    return out


def test_emulators_import_nothing_of_the_product() -> None:
    code = (
        "import sys, backend.networks.sandbox as s\n"
        "from backend.networks import registry\n"  # the entries only: each names its emulator
        "s.know_emulators(tuple((n.name, n.emulator) for n in registry.networks()))\n"
        "for p in registry.names(): s.emulator_class(p)\n"
        "bad = [m for m in sys.modules if m.startswith(('backend.config', 'backend.store', 'backend.clock',"
        " 'backend.services', 'backend.api', 'backend.jobs', 'backend.media', 'backend.ids'))]\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_state_lives_in_its_own_database(settings, account) -> None:  # type: ignore[no-untyped-def]
    from backend.store.db import database

    ident = account("facebook")
    assert publish_done(
        make_adapter("facebook", settings), publication(ident, "facebook", "hi", [])
    ).succeeded
    product_tables = set(database.obj.get_tables())
    assert not {"sandbox_account", "sandbox_item"} & product_tables  # the old tables are gone (0012)
    assert {"emulator_account", "emulator_item", "emulator_migration"} <= set(
        sandbox(settings).db.get_tables()
    )
    if settings.is_postgres:  # the product's database, the sandbox's own tables
        return
    path = settings.data_dir / "sandbox.db"
    assert path.exists() and (path.stat().st_mode & 0o777) == 0o600
    assert not {"emulator_account", "emulator_item"} & product_tables


def test_every_call_takes_the_configured_latency(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_delay_s = 0.05
    settings.sandbox_network_delay_s = {"linkedin": 0.3}
    fb, li = account("facebook"), account("linkedin")
    seen: list[httpx.Request] = []
    ad = counting(settings, "facebook", seen)
    t0 = time.monotonic()
    assert publish_done(ad, publication(fb, "facebook", "hello", [IMG[0]])).succeeded
    assert time.monotonic() - t0 >= 0.05 * len(seen) and len(seen) >= 2  # publish + permalink
    t0 = time.monotonic()
    assert publish_done(make_adapter("linkedin", settings), publication(li, "linkedin", "text", [])).succeeded
    assert time.monotonic() - t0 >= 0.3


@pytest.mark.parametrize("platform", ["instagram", "youtube"])
def test_caps_hold_exactly_under_concurrency(settings, account, platform) -> None:  # type: ignore[no-untyped-def]
    own(settings, "instagram").sandbox_daily_posts = 100  # YouTube: 100 uploads a day
    ident = account(platform)
    ad = make_adapter(platform, settings, media_loader=loader)
    pubs = [publication(ident, platform, f"post {i}", MEDIA[platform], token=f"t{i}") for i in range(150)]
    with ThreadPoolExecutor(50) as pool:
        outcomes = list(pool.map(lambda p: publish_done(ad, p), pubs))
    assert sum(o.state == "published" for o in outcomes) == 100
    assert all(o.fail_type == "retriable" for o in outcomes if o.state != "published")
    assert len(list_published(platform=platform, limit=1000)) == 100


def test_tiktok_cap_holds_under_concurrency(settings, account) -> None:  # type: ignore[no-untyped-def]
    own(settings, "tiktok").sandbox_daily_posts = 100
    ident = account("tiktok")
    emu = sandbox(settings).transport("tiktok")

    def init(i: int) -> str:
        resp = emu.handle_request(
            httpx.Request(
                "POST",
                "https://open.tiktokapis.sandbox.invalid/v2/post/publish/video/init/",
                headers={"Authorization": f"Bearer {ident.access_token}"},
                json={
                    "post_info": {
                        "title": f"v{i}",
                        "privacy_level": "PUBLIC_TO_EVERYONE",
                        "brand_content_toggle": False,
                    },
                    "source_info": {"source": "PULL_FROM_URL", "video_url": VID.url},
                },
            )
        )
        return json.loads(resp.read())["error"]["code"]

    with time_machine.travel(clock.now(), tick=False) as t:  # 6 a minute: one minute per batch of 6
        codes = []
        for batch in range(0, 150, 6):
            with ThreadPoolExecutor(6) as pool:
                codes += list(pool.map(init, range(batch, min(150, batch + 6))))
            t.shift(61)
    assert codes.count("ok") == 100 and codes.count("spam_risk_too_many_posts") == 50


@pytest.mark.parametrize("platform", ["facebook", "instagram", "linkedin", "tiktok", "youtube"])
def test_find_existing_pages_beyond_the_first_page(settings, account, platform) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_limits = False
    settings.sandbox_apps = {**settings.sandbox_apps, **READABLE_APPS}
    ident = account(platform)
    ad = make_adapter(platform, settings, media_loader=loader)
    start = clock.now()
    with time_machine.travel(start, tick=True) as t:
        pub = publication(ident, platform, "the one we lost\nbody", MEDIA[platform], attempted_at=clock.now())
        lost = publish_done(ad, pub)
        assert lost.succeeded
        for i in range(120):  # newer posts in between
            t.shift(1)
            assert publish_done(
                ad, publication(ident, platform, f"newer {i}\nbody", MEDIA[platform])
            ).succeeded
        seen: list[httpx.Request] = []
        pub = forgotten(pub)
        found = counting(settings, platform, seen).find_existing(pub)
        assert found is not None and found.state == "published"
        assert found.external_post_id == lost.external_post_id or platform == "facebook"
        assert len(seen) >= 2  # more than one page of the listing
        # something never published in the window: paged back to the window's start, then confirmed absent
        seen.clear()
        absent = publication(
            ident,
            platform,
            "never sent\nbody",
            MEDIA[platform],
            attempted_at=clock.now() - timedelta(seconds=300),
        )
        assert counting(settings, platform, seen).find_existing(forgotten(absent)) is None
        # outside the window: the lost post is older than the attempt (minus slack), so it is not that one
        late = publication(
            ident,
            platform,
            "the one we lost\nbody",
            MEDIA[platform],
            attempted_at=clock.now() + timedelta(seconds=600),
        )
        assert ad.find_existing(forgotten(late)) is None


# Some listings are asked only about an attempt whose saved progress leaves the question open (an attempt that saved
# none made nothing): Instagram's about a container it no longer knows (expired after 24 h), YouTube's about an upload
# session it no longer has (after a week), LinkedIn's about an attempt that reached POST /rest/posts.
FORGOTTEN = {
    "instagram": encode_ref(container="17999999999999999"),
    "youtube": encode_ref(session=f"{YT_UPLOAD_SESSION}?uploadType=resumable&upload_id=gone", size=1),
    "linkedin": encode_ref(stage="post"),
}


def forgotten(pub: Publication) -> Publication:
    gone = FORGOTTEN.get(pub.platform)
    return dataclasses.replace(pub, resume=gone) if gone else pub


def test_tiktok_draft_is_unverifiable(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")
    ad = make_adapter("tiktok", settings)
    pub = publication(
        ident, "tiktok", "draft", [VID], {"tiktok": {"postMode": "MEDIA_UPLOAD"}}, attempted_at=clock.now()
    )
    assert pub.payload.options.get("post_mode") == "MEDIA_UPLOAD"
    with pytest.raises(Unverifiable):
        ad.find_existing(pub)


def test_instagram_published_container_is_found_never_failed(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_processing_s = 5.0
    settings.sandbox_limits = False
    ident = account("instagram")
    ad = make_adapter("instagram", settings, media_loader=loader)  # a reel's bytes (resumable upload)
    start = clock.now()
    with time_machine.travel(start, tick=False) as t:
        pub = publication(ident, "instagram", "reel of the day", [VID], attempted_at=clock.now())
        first = ad.publish(pub)
        assert first.state == "pending"
        t.shift(6)
        # the first attempt published the container and crashed before recording it
        ready = ad.check_status(pub, first.tracking_ref)
        assert ready.state == "ready"
        published = ad.complete(pub, ready.tracking_ref)
        assert published.state == "published"
        # ... and many newer posts arrived since
        for i in range(120):
            newer = publication(ident, "instagram", f"newer {i}", [IMG[0]])
            ref = ad.publish(newer).tracking_ref
            t.shift(2)  # an image container is ready in a fifth of the processing time
            assert ad.complete(newer, ad.check_status(newer, ref).tracking_ref).state == "published"
        again = ad.check_status(pub, first.tracking_ref)  # the container now says PUBLISHED
        assert again.state == "published" and again.network_status == "PUBLISHED"
        assert again.external_post_id == published.external_post_id and again.post_url


def test_failed_listing_is_not_absence(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("facebook")

    def down(req: httpx.Request) -> httpx.Response:
        return httpx.Response(503, json={"error": {"message": "down", "type": "OAuthException", "code": 2}})

    ad = make_adapter("facebook", settings, transport=httpx.MockTransport(down))
    out = ad.find_existing(publication(ident, "facebook", "x", [], attempted_at=clock.now()))
    assert out is not None and out.state == "failed" and out.ambiguous and out.fail_type == "retriable"


def test_upgrade_moves_the_old_sandbox_tables(settings) -> None:  # type: ignore[no-untyped-def]
    """A data dir from before the sandbox had its own database: its sandbox account still publishes."""
    import importlib.util

    from backend.networks.sandbox.core import token_hash
    from backend.store.db import MIGRATIONS_DIR, database

    spec = importlib.util.spec_from_file_location("m0012", MIGRATIONS_DIR / "0012_sandbox_own_database.py")
    assert spec and spec.loader
    m0012 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m0012)
    db = database.obj
    old_account, old_item = m0012._models(db, "sandbox_account", "sandbox_item")
    db.create_tables([old_account, old_item])  # the tables as migration 0004 made them
    now = clock.now().replace(tzinfo=None)
    old_account.create(
        id="sbx_old",
        platform="facebook",
        external_id="100000000000001",
        token_hash=token_hash("EAAGold"),
        name="Old",
        username="old_1234",
        display_name="Old",
        behaviour="ok",
        is_private=False,
        privacy_level_options=[],
        calls=0,
        created_at=now,
    )
    old_item.create(
        id="100000000000001_1",
        platform="facebook",
        account_id="sbx_old",
        kind="post",
        mode="feed",
        text="from before",
        url="https://www.facebook.com/100000000000001/posts/1",
        started_at=now,
        created_at=now,
    )
    m0012.up(None, db)
    assert "sandbox_account" not in db.get_tables() and "sandbox_item" not in db.get_tables()
    from backend.networks.base import AccountCredentials, Payload, Publication

    ad = make_adapter("facebook", settings)
    creds = AccountCredentials("100000000000001", "EAAGold", "old_1234")
    out = ad.publish(Publication(Payload("facebook", "text", "after the upgrade", None, ()), creds, "t1"))
    assert out.state == "published"
    texts = [r["text"] for r in list_published(platform="facebook")]
    assert texts == ["after the upgrade", "from before"]


@pytest.mark.parametrize("platform", ["facebook", "instagram", "linkedin", "tiktok", "youtube"])
def test_adapter_for_honours_the_accounts_kind(settings, platform) -> None:  # type: ignore[no-untyped-def]
    from types import SimpleNamespace

    from backend.services.adapters import adapter_for

    live = adapter_for(SimpleNamespace(platform=platform, kind="live"), settings)  # type: ignore[arg-type]
    sbx = adapter_for(SimpleNamespace(platform=platform, kind="sandbox"), settings)  # type: ignore[arg-type]
    assert type(live) is type(sbx)  # one adapter: only the host (and the transport) differ
    # the configured base (Meta's Graph API: followed by the configured version)
    assert ".invalid" not in live.base and live.base.startswith(own(settings, platform).api_base.rstrip("/"))
    assert sbx.base.startswith("https://") and ".sandbox.invalid" in sbx.base
    assert (
        adapter_for(SimpleNamespace(platform=platform, kind="sandbox"), settings) is sbx
    )  # cached per job's ask


def test_emulators_started_together_on_a_new_database_all_start(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`socialpub sandbox serve` for each network at once on a new data dir (docs/sandbox.md): every process
    migrates the new file; one at a time, so none dies on the migration table's UNIQUE constraint."""
    import subprocess
    import sys

    code = (
        "import sys; from backend.networks.sandbox.store import DatabaseLocation, open_database; "
        "open_database(DatabaseLocation.sqlite_in(sys.argv[1]))"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stderr=subprocess.PIPE, text=True)
        for _ in range(6)
    ]
    errors = [p.communicate(timeout=60)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, errors
