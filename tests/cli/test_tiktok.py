"""`socialpub tiktok` against the embedded backend (issue 7 'done when'): a 5-image draft carousel and a direct
video followed to their terminal statuses with --wait, a clear error for media off the media host, status
reads, failures and usage errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import invoke
from tests.media import corpus

pytestmark = pytest.mark.usefixtures("audited_tiktok")  # TikTok's audit is not what these test


@pytest.fixture
def files(tmp_path: Path) -> dict[str, list[str]]:
    images = []
    for i in range(5):
        p = tmp_path / f"slide{i}.jpg"
        p.write_bytes(corpus.jpeg(120 + i, 90))
        images.append(str(p))
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(corpus.video("mp4"))
    return {"images": images, "video": [str(clip)]}


@pytest.fixture
def slow_sandbox(cli_env, monkeypatch):  # type: ignore[no-untyped-def]
    """TikTok takes about a second to pull the media, so --wait sees processing statuses first."""
    from backend.config import get_settings

    monkeypatch.setenv("SOCIALPUB_SANDBOX_PROCESSING_S", "1")
    get_settings.cache_clear()


def tiktok_account(platform: str = "tiktok") -> dict:  # type: ignore[type-arg]
    return next(a for a in invoke("accounts", "list", "--json").json()["items"] if a["platform"] == platform)


def test_draft_carousel_and_direct_video_followed_to_terminal(slow_sandbox, embedded, files) -> None:  # type: ignore[no-untyped-def]
    acc = tiktok_account()
    r = invoke(
        "tiktok",
        "photo",
        *files["images"],
        "--title",
        "Five",
        "--description",
        "Swipe",
        "--mode",
        "draft",
        "--wait",
        "--json",
    )
    assert r.code == 0, r.err + r.out
    photo = r.json()
    assert (
        photo["success"] is True and photo["postMode"] == "MEDIA_UPLOAD" and photo["channelId"] == acc["id"]
    )
    assert photo["title"] == "Five" and photo["description"] == "Swipe"
    assert photo["finalStatus"]["status"] == "SEND_TO_USER_INBOX"
    assert "PROCESSING_DOWNLOAD" in r.err and "SEND_TO_USER_INBOX" in r.err  # progress on stderr with --json
    # the sandbox pulls nothing, so it claims no download (it said "9,642,224 bytes" for three 33 KB photos)
    assert "bytes" not in r.err and photo["finalStatus"].get("downloadedBytes") is None, r.err

    r = invoke(
        "tiktok",
        "video",
        files["video"][0],
        "--title",
        "Hello #launch",
        "--mode",
        "direct",
        "--privacy",
        "FOLLOWER_OF_CREATOR",  # `init --sandbox`'s TikTok account is a private one
        "--wait",
        "--json",
    )
    assert r.code == 0, r.err + r.out
    video = r.json()
    assert video["status"] == "PROCESSING_UPLOAD" and video["title"] == "Hello #launch"
    # published, for the creator's followers: TikTok names a public post only (get-video-status)
    assert video["finalStatus"]["status"] == "PUBLISH_COMPLETE" and not video["finalStatus"].get(
        "publicPostIds"
    )

    # what the sandbox network holds: the draft and the published video
    items = invoke("sandbox", "published", "--platform", "tiktok", "--json").json()["items"]
    assert {i["status"] for i in items} == {"inbox", "published"}
    draft = next(i for i in items if i["status"] == "inbox")
    assert len(draft["media"]) == 5 and draft["title"] == "Five"

    r = invoke("tiktok", "status", photo["publishId"], "--json")
    assert r.code == 0 and r.json()["status"] == "SEND_TO_USER_INBOX"
    human = invoke("tiktok", "status", video["publishId"], "--channel", acc["id"])
    assert human.code == 0 and "PUBLISH_COMPLETE" in human.out and "published on the profile" in human.out


def test_media_url_off_the_media_host_is_a_clear_error(embedded) -> None:  # type: ignore[no-untyped-def]
    r = invoke("tiktok", "photo", "https://cdn.example.com/a.jpg", "--json")
    assert r.code == 1
    err = r.err_json()
    assert (
        err["error"] == "media_not_on_media_host"
        and err["status"] == 400
        and "POST /v1/media" in err["message"]
    )
    human = invoke("tiktok", "video", "https://cdn.example.com/v.mp4")
    assert human.code == 1 and "media_not_on_media_host" in human.err and "POST /v1/media" in human.err
    assert "https://cdn.example.com/v.mp4" in human.err


def test_human_output_without_wait_says_how_to_follow(embedded, files) -> None:  # type: ignore[no-untyped-def]
    r = invoke("tiktok", "photo", files["images"][0], "--title", "One")
    assert r.code == 0, r.err
    assert "publishId" in r.out and "socialpub tiktok status" in r.out and "--wait" in r.out


def test_direct_mode_without_privacy_is_a_usage_error_off_a_terminal(embedded, files) -> None:  # type: ignore[no-untyped-def]
    r = invoke("tiktok", "video", files["video"][0], "--mode", "direct", "--json")
    assert r.code == 2 and "--privacy" in r.err and "SELF_ONLY" in r.err


def test_failed_publication_exits_1_with_the_reason(embedded, files) -> None:  # type: ignore[no-untyped-def]
    fb = tiktok_account("facebook")
    assert (
        invoke("accounts", "remove", fb["id"], "--json").code == 0
    )  # FREE plan: make room for a 6th account
    r = invoke(
        "accounts", "add-sandbox", "tiktok", "--name", "Broken", "--behaviour", "fail-permanent", "--json"
    )
    assert r.code == 0, r.err
    broken = r.json()["id"]
    r = invoke(
        "tiktok",
        "video",
        files["video"][0],
        "--mode",
        "direct",
        "--privacy",
        "PUBLIC_TO_EVERYONE",
        "--channel",
        broken,
        "--wait",
        "--json",
    )
    assert r.code == 1
    assert r.json()["finalStatus"] == {
        **r.json()["finalStatus"],
        "status": "FAILED",
        "failReason": "file_format_check_failed",
    }
    pid = r.json()["publishId"]
    # read with the default (other) account: refused like TikTok refuses it
    r = invoke("tiktok", "status", pid, "--json")
    assert r.code == 1 and r.err_json()["error"] == "token_not_authorized_for_specified_publish_id"
    assert r.err_json()["status"] == 403
    r = invoke("tiktok", "status", pid, "--channel", broken)
    assert r.code == 0 and "file_format_check_failed" in r.out


def test_wait_gives_up_after_the_timeout(cli_env, embedded, files, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from backend.config import get_settings

    monkeypatch.setenv("SOCIALPUB_SANDBOX_PROCESSING_S", "600")
    get_settings.cache_clear()
    r = invoke("tiktok", "photo", files["images"][0], "--wait", "--timeout", "1", "--json")
    assert r.code == 1
    assert r.err_json()["error"] == "wait_timeout"
    assert r.json()["status"] == "PROCESSING_DOWNLOAD"  # the last status read, on stdout


def test_usage_errors_exit_2(embedded, files) -> None:  # type: ignore[no-untyped-def]
    for args in (
        ["photo", files["images"][0], "--privacy", "SELF_ONLY"],  # direct-only flag in draft mode
        ["video", files["video"][0], "--no-duet"],
        ["photo", files["images"][0], "--music", "--mode", "draft"],
        ["photo", *([files["images"][0]] * 36)],
        ["photo"],
    ):
        r = invoke("tiktok", *args)
        assert r.code == 2, (args, r.out, r.err)


def test_unknown_publish_id(embedded) -> None:  # type: ignore[no-untyped-def]
    r = invoke("tiktok", "status", "p_inbox_url~v2.1", "--json")
    assert r.code == 1 and r.err_json()["error"] == "invalid_publish_id"
