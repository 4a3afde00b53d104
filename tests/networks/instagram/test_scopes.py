"""Instagram with Facebook Login asks business_management (issue 29): the IG User Media reference requires it (or
ads_management) to list media — find_existing's call — when the person's role on the Page comes through a
Business Manager, and the older copies of the page require it to publish too."""

from __future__ import annotations

from backend.networks.instagram.app import APP


def test_connect_asks_business_management() -> None:
    scopes = APP.endpoints.scopes
    assert "business_management" in scopes
    for needed in (
        "instagram_basic",
        "instagram_content_publish",
        "pages_show_list",
        "pages_read_engagement",
    ):
        assert needed in scopes
