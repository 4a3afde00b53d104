"""`socialpub posts create --to bluesky --media clip.mp4` on an account whose PDS takes smaller files
(SOCIALPUB_BLUESKY_SANDBOX_BLOB_LIMIT: the emulated PDS's describeServer.blobUploadLimit): refused at creation with
the server's limit and the refusal's code, nothing created."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import invoke
from tests.media import corpus


@pytest.fixture
def clip(tmp_path: Path) -> str:
    path = tmp_path / "clip.mp4"
    path.write_bytes(corpus.video("mp4"))
    return str(path)


def _init(monkeypatch: pytest.MonkeyPatch, limit: int | None) -> None:
    from backend.config import get_settings

    if limit is not None:
        monkeypatch.setenv("SOCIALPUB_BLUESKY_SANDBOX_BLOB_LIMIT", str(limit))
    get_settings.cache_clear()
    r = invoke("init", "--sandbox", "--json", "--password", "s3cret-pass")
    assert r.code == 0, r.err


def test_a_video_over_the_pds_limit_is_refused_at_creation(cli_env, clip, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _init(monkeypatch, 1000)
    r = invoke("posts", "create", "a clip", "--to", "bluesky", "--media", clip, "--json")
    assert r.code != 0, r.out
    assert "video_out_of_range_for_target" in r.err and "takes files up to 1,000 bytes" in r.err
    assert invoke("posts", "list", "--json").json() == []


def test_within_the_pds_limit_it_is_created(cli_env, clip, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _init(monkeypatch, None)
    r = invoke("posts", "create", "a clip", "--to", "bluesky", "--media", clip, "--json")
    assert r.code == 0, r.err
    assert r.json()["targets"][0]["platform"] == "bluesky"
