from datetime import date

import pytest

from backend.networks.sandbox.developer_app import NEW_APP, EmulatedApp, parse_apps


def test_the_default_app_is_a_new_one() -> None:
    assert NEW_APP == EmulatedApp() and not NEW_APP.audited and not NEW_APP.verified and not NEW_APP.products


def test_parse_apps_from_the_setting() -> None:
    apps = dict(
        parse_apps(
            '{"tiktok": {"audited": true, "kind": "desktop"}, "linkedin": {"products": ["share", "community"]},'
            ' "youtube": {"today": "2027-01-20"}}'
        )
    )
    assert apps["tiktok"].audited and apps["tiktok"].kind == "desktop"
    assert apps["linkedin"].holds("community") and not apps["linkedin"].holds("ads")
    assert apps["youtube"].today == date(2027, 1, 20)
    assert parse_apps(None) == () and parse_apps("") == ()


@pytest.mark.parametrize(
    "raw", ['["tiktok"]', '{"tiktok": {"audit": true}}', '{"linkedin": {"products": "share"}}']
)
def test_a_mistyped_setting_is_refused(raw: str) -> None:
    with pytest.raises(ValueError):
        parse_apps(raw)
