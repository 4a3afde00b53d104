"""Mastodon publishing against its strict emulator (fidelity table: backend/networks/mastodon/docs.md): media v2
followed to ready, the status with its Idempotency-Key, visibility, content warning and language, what the
instance changed read back as warnings, reconciliation through the account's statuses, refusals by status."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import httpx

from backend import clock
from backend.networks.base import MediaRef, decode_ref
from backend.networks.mastodon.emulator import (
    SANDBOX_HOST,
    MastodonEmulator,
    configure_account,
    configure_instance,
)
from backend.networks.sandbox.store import SandboxItem
from backend.outbound import guard
from backend.services.adapters import make_adapter, sandbox
from tests.networks.conftest import publication

JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 200
MP4 = b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 200
IMG = MediaRef("https://media.test/m/a.jpg", "image", "image/jpeg", 100, 100, bytes=len(JPEG))
VID = MediaRef("https://media.test/m/v.mp4", "video", "video/mp4", 640, 360, bytes=len(MP4))


def load(media: MediaRef) -> bytes:
    return MP4 if media.kind == "video" else JPEG


def spied(settings):  # type: ignore[no-untyped-def]
    seen: list[httpx.Request] = []
    handler = sandbox(settings).handler("mastodon")

    def spy(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    return make_adapter("mastodon", settings, transport=httpx.MockTransport(spy), media_loader=load), seen


def run(ad, pub):  # type: ignore[no-untyped-def]
    out = ad.publish(pub)
    for _ in range(5):
        if out.state == "pending":
            out = ad.check_status(pub, str(out.tracking_ref))
        if out.state == "ready":
            out = ad.complete(pub, str(out.tracking_ref))
    return out


def statuses() -> list[SandboxItem]:
    return list(
        SandboxItem.select().where((SandboxItem.platform == "mastodon") & (SandboxItem.kind == "status"))
    )


def test_a_text_status_carries_the_targets_idempotency_key_and_its_options(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("mastodon")
    ad, seen = spied(settings)
    opts = {"mastodon": {"visibility": "unlisted", "spoilerText": "spoilers", "language": "de"}}
    out = run(ad, publication(ident, "mastodon", "hallo fediverse", [], opts))
    assert out.state == "published", out
    assert out.post_url and out.post_url.startswith(f"https://{SANDBOX_HOST}/@")
    post = next(r for r in seen if r.method == "POST" and r.url.path == "/api/v1/statuses")
    assert post.headers["Idempotency-Key"] == "socialpub-tgt_1"
    assert post.url.host == SANDBOX_HOST and post.headers["Authorization"] == f"Bearer {ident.access_token}"
    [row] = statuses()
    assert row.mode == "unlisted" and row.data["spoiler_text"] == "spoilers" and row.data["language"] == "de"
    assert row.data["sensitive"] is True  # a content warning marks the status sensitive
    assert not out.warnings


def test_a_retry_with_the_same_key_meets_the_first_status(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("mastodon")
    ad, _seen = spied(settings)
    pub = publication(ident, "mastodon", "only once", [])
    first = run(ad, pub)
    again = run(ad, pub)  # the outcome of the first was lost: the same target calls again
    assert first.state == again.state == "published"
    assert first.external_post_id == again.external_post_id
    assert len(statuses()) == 1
    other = run(ad, publication(ident, "mastodon", "only once", [], token="tgt_2"))
    assert other.external_post_id != first.external_post_id  # another target is another status


def test_the_key_is_forgotten_after_an_hour(settings, account, time_machine) -> None:  # type: ignore[no-untyped-def]
    time_machine.move_to(clock.now(), tick=False)
    ident = account("mastodon")
    ad, _seen = spied(settings)
    pub = publication(ident, "mastodon", "after the hour", [])
    first = run(ad, pub)
    time_machine.shift(timedelta(hours=1, seconds=1))
    assert run(ad, pub).external_post_id != first.external_post_id  # what reconciliation is for past the hour
    assert len(statuses()) == 2


def test_an_image_with_alt_text_is_ready_at_once(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("mastodon")
    ad, seen = spied(settings)
    out = run(ad, publication(ident, "mastodon", "a picture", [IMG], {"mastodon": {"alt": ["a red square"]}}))
    assert out.state == "published", out
    upload = next(r for r in seen if r.url.path == "/api/v2/media")
    assert b'name="description"' in upload.content and b"a red square" in upload.content
    [row] = statuses()
    media = SandboxItem.get_by_id(row.data["media_ids"][0])
    assert media.data["description"] == "a red square" and media.mode == "image"


def test_a_video_is_followed_to_ready_before_the_status(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_processing_s = 60
    ident = account("mastodon")
    ad, seen = spied(settings)
    pub = publication(ident, "mastodon", "a film", [VID])
    out = ad.publish(pub)
    assert out.state == "pending" and decode_ref(str(out.tracking_ref))["media"], out
    assert not [r for r in seen if r.url.path == "/api/v1/statuses"]
    assert ad.check_status(pub, str(out.tracking_ref)).state == "pending"
    # the instance refuses a status with media still processing: 422, followed again, never a failure
    assert ad.complete(pub, str(out.tracking_ref)).state == "pending"
    assert statuses() == []
    SandboxItem.update(processing_s=0).where(SandboxItem.kind == "media").execute()
    ready = ad.check_status(pub, str(out.tracking_ref))
    assert ready.state == "ready"
    done = ad.complete(pub, str(ready.tracking_ref))
    assert done.state == "published", done
    assert len(statuses()) == 1 and len([r for r in seen if r.url.path == "/api/v2/media"]) == 1


def test_a_resumed_attempt_reuses_the_uploaded_media(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("mastodon")
    ad, seen = spied(settings)
    saved: list[str] = []
    pub = publication(ident, "mastodon", "a picture", [IMG])
    from dataclasses import replace

    first = ad.publish(replace(pub, save_progress=saved.append))
    assert first.state == "published" and saved
    again = ad.publish(replace(pub, resume=saved[-1]))
    assert again.external_post_id == first.external_post_id
    assert len([r for r in seen if r.url.path == "/api/v2/media"]) == 1


def test_what_the_instance_changed_is_a_warning(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("mastodon")
    configure_account(ident.sandbox_account_id, silenced=True)
    ad, _seen = spied(settings)
    out = run(ad, publication(ident, "mastodon", "loud", [], {"mastodon": {"visibility": "public"}}))
    assert out.state == "published"
    assert [w.code for w in out.warnings] == ["mastodon_visibility_changed"]


def test_over_the_instances_limit_is_refused_with_its_words(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("mastodon")
    configure_instance(SANDBOX_HOST, max_characters=10, max_media_attachments=1)
    ad, seen = spied(settings)
    out = run(ad, publication(ident, "mastodon", "eleven chars", [IMG, IMG]))
    # the instance's limits, read before any upload
    assert out.state == "failed" and out.fail_type == "permanent"
    assert f"{SANDBOX_HOST} takes at most 10 characters" in str(out.fail_reason)
    assert f"{SANDBOX_HOST} takes at most 1 media" in str(out.fail_reason)
    assert not [r for r in seen if r.method == "POST"]
    # the instance itself refuses it in its words, had it been sent
    r = ad.client.post(
        f"https://{SANDBOX_HOST}/api/v1/statuses",
        json={"status": "eleven chars"},
        headers={"Authorization": f"Bearer {ident.access_token}"},
    )
    assert r.json() == {"error": "Validation failed: Text character limit of 10 exceeded"}


def test_a_larger_instance_takes_what_upstream_would_not(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("mastodon")
    configure_instance(SANDBOX_HOST, max_characters=5000)
    ad, _seen = spied(settings)
    assert run(ad, publication(ident, "mastodon", "x" * 4000, [])).state == "published"


def test_a_revoked_token_asks_for_a_reconnection(settings, account) -> None:  # type: ignore[no-untyped-def]
    from backend.networks.sandbox.oauth import revoke_account_token

    ident = account("mastodon")
    revoke_account_token(ident.sandbox_account_id)
    ad, _seen = spied(settings)
    out = run(ad, publication(ident, "mastodon", "hello", []))
    assert (
        out.state == "failed" and out.auth_refused and "The access token was revoked" in str(out.fail_reason)
    )


def test_a_rate_limit_waits_until_the_reset_time(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("mastodon", behaviour="rate-limited")
    ad, _seen = spied(settings)
    out = run(ad, publication(ident, "mastodon", "hello", []))
    assert out.state == "failed" and out.fail_type == "retriable" and out.wait
    assert out.retry_after_s is not None and 0 < out.retry_after_s <= 61


def test_a_server_error_on_the_status_is_ambiguous(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("mastodon", behaviour="fail-retriable")
    ad, _seen = spied(settings)
    out = run(ad, publication(ident, "mastodon", "hello", []))
    assert out.state == "failed" and out.fail_type == "retriable" and out.ambiguous


def test_find_existing_matches_source_text_app_and_window(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("mastodon")
    ad, _seen = spied(settings)
    now = clock.now()
    pub = publication(
        ident, "mastodon", "find me", [], {"mastodon": {"visibility": "direct"}}, attempted_at=now
    )
    assert ad.find_existing(pub) is None
    out = run(ad, pub)
    found = ad.find_existing(pub)
    assert found is not None and found.external_post_id == out.external_post_id  # a direct status too
    other_text = publication(ident, "mastodon", "find me not", [], attempted_at=now)
    assert ad.find_existing(other_text) is None
    later = publication(ident, "mastodon", "find me", [], attempted_at=now + timedelta(minutes=10))
    assert ad.find_existing(later) is None  # older than the attempt: not this target's


def test_find_existing_without_read_statuses_is_not_absent(settings, account) -> None:  # type: ignore[no-untyped-def]
    from backend.networks.sandbox.oauth import revoke_account_token

    ident = account("mastodon")
    ad, _seen = spied(settings)
    revoke_account_token(ident.sandbox_account_id)
    out = ad.find_existing(publication(ident, "mastodon", "x", [], attempted_at=clock.now()))
    assert out is not None and out.state == "failed" and out.ambiguous


def test_a_live_instance_off_the_public_internet_is_refused_at_every_call(
    settings, account, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """The instance's name was public when the account connected; it now resolves to a private address (DNS
    rebinding, or a takeover). The live adapter's calls pass the address rule (backend/outbound/guarded.py): the
    status is refused before anything is sent — a permanent failure that says why. No traffic: the
    resolver is stubbed."""
    settings.allow_private_urls = False
    monkeypatch.setattr(guard, "RESOLVER", lambda host, port: ["10.20.30.40"])
    ident = replace(account("mastodon"), external_account_id="109@social.rebound.example")
    out = make_adapter("mastodon", settings, live=True).publish(publication(ident, "mastodon", "hi", []))
    assert out.state == "failed" and out.fail_type == "permanent", out
    assert out.network_code == "address_refused" and "address rule" in (out.fail_reason or ""), out


def test_the_same_key_while_its_first_request_runs_is_a_503_and_never_a_second_status(  # type: ignore[no-untyped-def]
    settings, account, monkeypatch
) -> None:
    """Mastodon holds a lock on (account, Idempotency-Key) while it creates the status: a request with the key
    meanwhile is answered 503 "There was a temporary problem…" (RaceConditionError). The adapter reads that 503 as
    ambiguous (the first may have made it: reconcile before another try); the first request publishes, once."""
    ident = account("mastodon")
    ad, _seen = spied(settings)
    pub = publication(ident, "mastodon", "raced", [])
    during: list[Any] = []
    create = MastodonEmulator._create

    def create_while_a_second_arrives(self, request, acc, host):  # type: ignore[no-untyped-def]
        if not during:
            during.append(ad.publish(pub))  # the same target's second request, while the first holds the key
        return create(self, request, acc, host)

    monkeypatch.setattr(MastodonEmulator, "_create", create_while_a_second_arrives)
    first = run(ad, pub)
    [second] = during
    assert first.state == "published"
    assert second.state == "failed" and second.fail_type == "retriable" and second.ambiguous, second
    assert "temporary problem" in (second.fail_reason or "")
    assert len(statuses()) == 1
    again = run(ad, pub)  # the lock is gone with its request: a replay meets the first status
    assert again.external_post_id == first.external_post_id and len(statuses()) == 1
