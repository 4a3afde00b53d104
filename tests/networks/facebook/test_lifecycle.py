"""Graph API versions are lifecycle data (issue 29 item 4): one lifecycle for Facebook and Instagram, sourced from
Meta's changelog; every Graph URL carries SOCIALPUB_GRAPH_API_VERSION; the emulator serves only the versions active
on its day and refuses the others in Graph's envelope (Meta itself would fall forward silently)."""

from __future__ import annotations

import dataclasses
from datetime import date

import httpx
import pytest
from pydantic import ValidationError

from backend.networks import registry
from backend.networks.doctor import version_findings
from backend.networks.facebook.lifecycle import DEFAULT, LIFECYCLE, SETTING
from backend.networks.facebook.settings import FacebookSettings
from backend.networks.instagram.settings import InstagramSettings
from backend.services.adapters import make_adapter, sandbox
from tests.networks.conftest import publication


def test_both_networks_name_the_one_graph_lifecycle() -> None:
    assert registry.get("facebook").api_lifecycle() is LIFECYCLE
    assert registry.get("instagram").api_lifecycle() is LIFECYCLE
    assert LIFECYCLE.setting == SETTING == "SOCIALPUB_GRAPH_API_VERSION"
    assert all(v.source.startswith("https://developers.facebook.com/") for v in LIFECYCLE.versions)


@pytest.mark.parametrize(
    ("version", "today", "status", "days"),
    [
        ("v21.0", date(2026, 11, 28), "active", 54),
        ("v21.0", date(2026, 12, 22), "ending", 30),  # the doctor's warning starts here
        ("v21.0", date(2027, 1, 21), "ending", 0),
        ("v21.0", date(2027, 1, 22), "sunset", -1),
        ("v20.0", date(2026, 11, 28), "sunset", None),
        ("v26.0", date(2030, 1, 1), "active", None),  # no end announced yet
        ("v99.0", date(2026, 11, 28), "unknown", None),
    ],
)
def test_graph_versions_per_the_changelog(version: str, today: date, status: str, days: int | None) -> None:
    st = LIFECYCLE.state(version, today)
    assert st.status == status and st.newest == DEFAULT
    if days is not None:
        assert st.days_left == days


def test_doctor_warns_30_days_before_v21_ends_and_says_what_to_set() -> None:
    assert version_findings("Graph", LIFECYCLE, "v21.0", date(2026, 12, 21)) == []
    [ending] = version_findings("Graph", LIFECYCLE, "v21.0", date(2026, 12, 22))
    assert ending.severity == "warning" and "2027-01-21" in ending.message
    assert SETTING in ending.fix and DEFAULT in ending.fix
    [gone] = version_findings("Graph", LIFECYCLE, "v20.0", date(2026, 11, 28))
    assert gone.severity == "error" and gone.code == "api_version_sunset"


def test_the_version_is_one_setting_and_bases_carry_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SETTING, "v25.0")
    assert FacebookSettings().graph_version == InstagramSettings().graph_version == "v25.0"
    monkeypatch.delenv(SETTING)
    assert FacebookSettings().graph_version == DEFAULT
    with pytest.raises(ValidationError, match=SETTING):
        FacebookSettings(api_base="http://127.0.0.1:8/v21.0")  # the old way: the version in the base
    with pytest.raises(ValidationError, match="Graph API version"):
        InstagramSettings(graph_version="21")


@pytest.mark.parametrize("platform", ["facebook", "instagram"])
def test_adapters_call_the_configured_version(settings, account, platform) -> None:  # type: ignore[no-untyped-def]
    from backend.networks.base import encode_ref
    from tests.support.networks import own

    own(settings, platform).graph_version = "v25.0"
    seen: list[httpx.Request] = []
    handler = sandbox(settings).handler(platform)

    def spy(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    ad = make_adapter(platform, settings, transport=httpx.MockTransport(spy))
    ident = account(platform)
    pub = publication(ident, platform, "x", [])
    if (
        platform == "instagram"
    ):  # asked about a saved container (one Instagram no longer knows: then its listing)
        pub = dataclasses.replace(pub, resume=encode_ref(container="17999999999999999"))
    ad.find_existing(pub)
    assert seen and all(r.url.path.startswith("/v25.0/") for r in seen)
    assert seen[0].url.path.startswith("/v25.0/")


@pytest.mark.parametrize("platform", ["facebook", "instagram"])
def test_emulator_serves_active_versions_only_in_graphs_envelope(settings, account, platform) -> None:  # type: ignore[no-untyped-def]
    ident = account(platform)
    handler = sandbox(settings).handler(platform)
    edge = "published_posts" if platform == "facebook" else "media"

    def get(version: str) -> httpx.Response:
        url = f"https://graph.facebook.sandbox.invalid/{version}/{ident.external_account_id}/{edge}"
        return handler(httpx.Request("GET", url, params={"access_token": ident.access_token}))

    ok = get(DEFAULT)
    assert ok.status_code == 200 and ok.headers["facebook-api-version"] == DEFAULT
    for version in ("v20.0", "v99.0"):  # ended 2026-09-24; never released
        refused = get(version)
        err = refused.json()["error"]
        assert refused.status_code == 400 and err["code"] == 100 and err["type"] == "OAuthException"
        assert version in err["message"] and "fbtrace_id" in err


def test_emulator_judges_versions_on_the_apps_day(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_apps = {"facebook": {"today": "2027-01-22"}}  # the day after v21.0's end
    ident = account("facebook")
    handler = sandbox(settings).handler("facebook")
    url = f"https://graph.facebook.sandbox.invalid/v21.0/{ident.external_account_id}/published_posts"
    r = handler(httpx.Request("GET", url, params={"access_token": ident.access_token}))
    assert r.status_code == 400 and "2027-01-21" in r.json()["error"]["message"]
