"""The media loader (LinkedIn/YouTube uploads) reads our host from storage and fetches nothing else
without the SSRF guard."""

from __future__ import annotations

import pytest

from backend.networks.base import MediaRef, NetworkError
from backend.services.adapters import default_loader


def test_remote_media_go_through_the_ssrf_guard(settings):
    settings.allow_private_urls = False
    load = default_loader(settings)
    with pytest.raises(NetworkError) as info:
        load(MediaRef(url="http://127.0.0.1:9/secret.jpg", kind="image"))
    assert (
        "loopback" in str(info.value).lower()
        or "private" in str(info.value).lower()
        or "address" in str(info.value).lower()
    )


def test_missing_host_file_is_permanent(settings):
    load = default_loader(settings)
    with pytest.raises(NetworkError) as info:
        load(MediaRef(url=settings.public_media_url + "med_nothing.jpg", kind="image"))
    assert info.value.fail_type == "permanent"
