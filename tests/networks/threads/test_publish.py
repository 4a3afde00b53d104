"""Threads publishing against its strict emulator (a new app): containers, status followed, threads_publish, the
publishing limit as a wait, never publishing twice (fidelity table: backend/networks/threads/docs.md)."""

from __future__ import annotations

from dataclasses import replace

import httpx

from backend.networks.base import MediaRef, decode_ref
from backend.services.adapters import make_adapter, sandbox
from tests.networks.conftest import IMG, VID, publication
from tests.networks.test_networks import own

BASE = "https://graph.threads.sandbox.invalid/v1.0"


def spied(settings):  # type: ignore[no-untyped-def]
    seen: list[httpx.Request] = []
    handler = sandbox(settings).handler("threads")

    def spy(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    return make_adapter("threads", settings, transport=httpx.MockTransport(spy)), seen


def form(r: httpx.Request) -> dict[str, str]:
    return dict(httpx.QueryParams(r.content.decode()))


def run(ad, pub):  # type: ignore[no-untyped-def]
    out = ad.publish(pub)
    for _ in range(5):
        if out.state == "pending":
            out = ad.check_status(pub, str(out.tracking_ref))
        if out.state == "ready":
            out = ad.complete(pub, str(out.tracking_ref))
    return out


def test_a_text_post_is_a_text_container_then_threads_publish(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("threads")
    ad, seen = spied(settings)
    out = run(ad, publication(ident, "threads", "hello threads", []))
    assert out.state == "published", out
    assert out.post_url and out.post_url.startswith("https://www.threads.net/@")
    create = next(r for r in seen if r.method == "POST" and r.url.path.endswith("/threads"))
    assert form(create) == {"media_type": "TEXT", "text": "hello threads", "access_token": ident.access_token}
    assert create.url.path == f"/v1.0/{ident.external_account_id}/threads"
    publish = next(r for r in seen if r.url.path.endswith("/threads_publish"))
    assert form(publish)["creation_id"]
    limit = [r for r in seen if r.url.path.endswith("/threads_publishing_limit")]
    assert limit and limit[0].url.params["fields"] == "quota_usage,config"


def test_an_image_and_a_video_go_by_their_public_url(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("threads")
    ad, seen = spied(settings)
    assert run(ad, publication(ident, "threads", "a picture", [IMG[0]])).state == "published"
    assert run(ad, publication(ident, "threads", "a film", [VID], token="tgt_2")).state == "published"
    forms = [form(r) for r in seen if r.method == "POST" and r.url.path.endswith("/threads")]
    assert forms[0]["media_type"] == "IMAGE" and forms[0]["image_url"] == IMG[0].url
    assert forms[1]["media_type"] == "VIDEO" and forms[1]["video_url"] == VID.url


def test_a_video_is_followed_until_finished_and_never_published_early(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_processing_s = 60  # the container stays IN_PROGRESS
    ident = account("threads")
    ad, seen = spied(settings)
    pub = publication(ident, "threads", "a film", [VID])
    out = ad.publish(pub)
    assert out.state == "pending" and out.network_status == "IN_PROGRESS", out
    assert not [r for r in seen if r.url.path.endswith("/threads_publish")]
    assert ad.check_status(pub, str(out.tracking_ref)).state == "pending"
    # threads_publish called too early is refused 24/4279009 by Threads: pending again, never a failure
    assert ad.complete(pub, str(out.tracking_ref)).state == "pending"


def test_a_carousel_of_mixed_items_is_published_once(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("threads")
    ad, seen = spied(settings)
    media = [*IMG[:3], VID]
    out = run(ad, publication(ident, "threads", "four", media))
    assert out.state == "published", out
    forms = [form(r) for r in seen if r.method == "POST" and r.url.path.endswith("/threads")]
    items = [f for f in forms if f.get("is_carousel_item") == "true"]
    assert len(items) == 4 and "text" not in items[0]
    [parent] = [f for f in forms if f["media_type"] == "CAROUSEL"]
    assert len(parent["children"].split(",")) == 4 and parent["text"] == "four"
    assert len([r for r in seen if r.url.path.endswith("/threads_publish")]) == 1


def test_the_emulator_refuses_carousels_of_1_or_21_and_texts_over_500(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_processing_s = 0
    ident = account("threads")
    handler = sandbox(settings).handler("threads")
    url = f"{BASE}/{ident.external_account_id}/threads"

    def post(**data: str) -> httpx.Response:
        return handler(httpx.Request("POST", url, data={**data, "access_token": ident.access_token}))

    items = [
        post(media_type="IMAGE", image_url=f"https://media.test/{i}.jpg", is_carousel_item="true").json()[
            "id"
        ]
        for i in range(21)
    ]
    for n in (1, 21):
        r = post(media_type="CAROUSEL", children=",".join(items[:n]))
        assert r.status_code == 400 and r.json()["error"]["code"] == 100, n
    assert post(media_type="CAROUSEL", children=",".join(items[:2])).status_code == 200
    assert post(media_type="CAROUSEL", children=",".join(items[:20])).status_code == 200
    assert post(media_type="TEXT", text="a" * 500).status_code == 200
    too_long = post(media_type="TEXT", text="a" * 497 + "😀")  # 497 + 4 bytes: 501
    assert too_long.status_code == 400 and too_long.json()["error"]["type"] == "THApiException"


def test_a_failed_container_is_an_http_200_error_status_and_fails_the_target(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("threads", "fail-permanent")
    ad, _seen = spied(settings)
    out = run(ad, publication(ident, "threads", "a film", [VID]))
    assert out.state == "failed" and out.fail_type == "permanent", out
    assert "FAILED_PROCESSING_VIDEO" in str(out.fail_reason)


def test_the_publishing_limit_is_read_and_is_a_wait_not_a_failure(settings, account) -> None:  # type: ignore[no-untyped-def]
    own(settings, "threads").sandbox_daily_posts = 1
    ident = account("threads")
    ad, seen = spied(settings)
    assert run(ad, publication(ident, "threads", "one", [])).state == "published"
    out = run(ad, publication(ident, "threads", "two", [], token="tgt_2"))
    assert out.state == "failed" and out.wait and out.fail_type == "retriable", out
    assert "1/1" in str(out.fail_reason)
    assert len([r for r in seen if r.url.path.endswith("/threads_publish")]) == 1


def test_an_interrupted_attempt_whose_container_was_published_is_found_not_republished(
    settings, account
) -> None:  # type: ignore[no-untyped-def]
    ident = account("threads")
    ad, seen = spied(settings)
    first = publication(ident, "threads", "only once", [])
    assert run(ad, first).state == "published"
    ref = next(r for r in seen if r.url.path.endswith("/threads_publish"))
    container = form(ref)["creation_id"]
    # the successor of an attempt killed after threads_publish, before its outcome was recorded
    again = replace(first, resume=_ref(container))
    out = ad.publish(again)
    assert out.state == "published", out
    assert len([r for r in seen if r.url.path.endswith("/threads_publish")]) == 1
    found = ad.find_existing(again)  # asked about the container the attempt saved, as the engine asks
    assert found is not None and found.external_post_id == out.external_post_id


def _ref(container: str) -> str:
    from backend.networks.base import encode_ref

    ref = encode_ref(container=container)
    assert decode_ref(ref)["container"] == container
    return ref


def test_loopback_media_refused_at_creation_with_the_reason(settings) -> None:  # type: ignore[no-untyped-def]
    from backend.services.posts.checks import media_url_refusals

    loop = MediaRef("http://127.0.0.1:8000/m/0.jpg", "image", "image/jpeg", 1080, 1080)
    # the live network (its real API host) cannot reach a loopback media host
    refusals = media_url_refusals("threads", [loop], settings)
    assert refusals and "Threads downloads every image and video from its URL" in refusals[0][1]


def test_another_version_is_refused(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("threads")
    handler = sandbox(settings).handler("threads")
    url = f"https://graph.threads.sandbox.invalid/v2.0/{ident.external_account_id}/threads"
    r = handler(
        httpx.Request(
            "POST", url, data={"media_type": "TEXT", "text": "x", "access_token": ident.access_token}
        )
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == 100
    assert "v1.0" in r.json()["error"]["message"]


def test_media_threads_cannot_download_fails_the_container(settings, account) -> None:  # type: ignore[no-untyped-def]
    """TH-R13: Threads downloads the media from the public internet. The emulator as `socialpub sandbox serve` runs it
    (not the in-process sandbox, which reads its accounts' media from this machine) fails a container whose media is
    on this machine: status ERROR (HTTP 200), FAILED_DOWNLOADING_VIDEO for a video (T6). Only classified, never
    fetched."""
    from backend.networks.sandbox import Sandbox
    from backend.services.adapters import sandbox_config

    settings.sandbox_processing_s = 0
    ident = account("threads")
    handler = Sandbox(sandbox_config(settings, served=True)).activate().handler("threads")

    def container(**data: str) -> dict[str, str]:
        url = f"{BASE}/{ident.external_account_id}/threads"
        made = handler(httpx.Request("POST", url, data={**data, "access_token": ident.access_token}))
        assert made.status_code == 200, made.text
        query = {"fields": "status,error_message", "access_token": ident.access_token}
        return handler(httpx.Request("GET", f"{BASE}/{made.json()['id']}", params=query)).json()

    video = container(media_type="VIDEO", video_url="http://127.0.0.1:8000/m/v.mp4")
    assert (video["status"], video["error_message"]) == ("ERROR", "FAILED_DOWNLOADING_VIDEO")
    assert container(media_type="IMAGE", image_url="http://10.1.2.3/m/a.jpg")["status"] == "ERROR"
    assert container(media_type="IMAGE", image_url="https://media.test/m/a.jpg")["status"] == "FINISHED"
