"""An instance's limits read from its /api/v2/instance (research B.1b M14; B.4 test 11, 32)."""

from __future__ import annotations

from typing import Any

import pytest

from backend.networks.mastodon.instance import InstanceLimits, NotAnInstance, parse_instance


def _instance(**statuses: Any) -> dict[str, Any]:
    return {
        "domain": "social.example",
        "version": "4.3.2",
        "api_versions": {"mastodon": 2},
        "configuration": {
            "statuses": {"max_characters": 500, "max_media_attachments": 4, "characters_reserved_per_url": 23}
            | statuses,
            "media_attachments": {
                "supported_mime_types": ["image/jpeg", "image/png", "video/mp4"],
                "image_size_limit": 16777216,
                "image_matrix_limit": 33177600,
                "video_size_limit": 103809024,
                "video_frame_rate_limit": 120,
                "video_matrix_limit": 8294400,
            },
        },
    }


def test_the_instance_says_its_own_limits() -> None:
    limits = parse_instance(_instance(max_characters=1000, max_media_attachments=6))
    assert limits.max_characters == 1000
    assert limits.max_media_attachments == 6
    assert limits.characters_reserved_per_url == 23
    assert "video/mp4" in limits.supported_mime_types
    assert limits.description_limit == 1500  # not reported before 4.4: MediaAttachment's 1,500
    assert limits.api_version == 2


def test_unreported_fields_take_upstream_values_and_the_cache_round_trips() -> None:
    body = _instance()
    del body["configuration"]["statuses"]["max_characters"]
    del body["api_versions"]
    limits = parse_instance(body)
    assert limits.max_characters == 500
    assert limits.api_version is None
    assert InstanceLimits.from_cache(limits.to_dict()) == limits


@pytest.mark.parametrize(
    "body",
    [
        None,
        {"error": "Record not found"},
        {"domain": "old.example", "version": "3.5.3"},  # v1 only: no configuration in v2's shape
        _instance(max_characters=0),
        _instance(max_characters="500"),
    ],
)
def test_what_is_not_a_mastodon_4_instance_is_refused_with_a_reason(body: Any) -> None:
    with pytest.raises(NotAnInstance) as refused:
        parse_instance(body)
    assert str(refused.value)
