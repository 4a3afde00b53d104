"""Media followed to ready and what the instance changed read back (research B.1c M22-M25; B.3 F5, F7; B.4 15-17, 24-25)."""

from __future__ import annotations

import pytest

from backend.networks.base import NetworkError
from backend.networks.mastodon.media import media_state, read_back_warnings


def test_an_image_is_ready_at_once_a_video_after_processing() -> None:
    assert media_state(200, {"id": "1", "url": "https://files.example/1.png"}) == "ready"
    assert media_state(202, {"id": "2", "url": None}) == "processing"
    assert media_state(206, {"id": "2", "url": None}) == "processing"
    assert media_state(200, {"id": "2", "url": None}) == "processing"  # url null: not processed yet
    assert media_state(200, {"id": "2", "url": "https://files.example/2.mp4"}) == "ready"


def test_a_media_the_instance_could_not_process_fails_with_its_reason() -> None:
    with pytest.raises(NetworkError) as failed:
        media_state(422, {"error": "Validation failed: File could not be processed"}, "social.example")
    assert failed.value.fail_type == "permanent" and "could not be processed" in failed.value.reason
    with pytest.raises(NetworkError) as gone:
        media_state(404, {"error": "Record not found"})
    assert gone.value.fail_type == "permanent"
    with pytest.raises(NetworkError) as busy:
        media_state(503, None)
    assert busy.value.fail_type == "retriable"


def test_a_downgraded_visibility_or_language_is_a_warning() -> None:
    asked = {"visibility": "public", "language": "xx"}
    got = {"visibility": "unlisted", "language": "en"}
    assert [w["code"] for w in read_back_warnings(asked, got)] == ["visibility_changed", "language_changed"]
    assert (
        read_back_warnings(
            {"visibility": "public", "language": "en"}, {"visibility": "public", "language": "en"}
        )
        == []
    )
    assert read_back_warnings({}, got) == []  # nothing asked: the instance's defaults are no surprise
