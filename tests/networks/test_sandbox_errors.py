"""The emulators' error switches (backend/networks/sandbox/errors.py; docs/sandbox.md "Error switches"): one per
code of NETWORKS.md's tables, armed in Python or over the control endpoint, answering the next N matching calls
with the network's own body and status, then serving again. The product's handling of each code is in
tests/services/test_publishing_errors.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from backend.networks import registry
from backend.networks.sandbox import DatabaseLocation, Sandbox, SandboxConfig, errors, faults
from backend.networks.sandbox.core import register_account
from backend.services.adapters import sandbox_emulators

PUBLISH = {  # a call of each network's "publish" endpoint (its body does not matter: the switch answers first)
    "tiktok": ("POST", "/v2/post/publish/content/init/"),
    "instagram": ("POST", "/v26.0/17841400000000000/media"),
    "facebook": ("POST", "/v26.0/100000000000000/feed"),
    "linkedin": ("POST", "/rest/posts"),
    "youtube": ("POST", "/upload/youtube/v3/videos"),
    "threads": ("POST", "/v1.0/25555555555555555/threads"),
}
# each network's error switches: its emulator's FAULTS (its package's emulator_errors.py)
CATALOGUE = {n.name: n.emulator_class().FAULTS for n in registry.networks() if n.emulator}
CASES = [(platform, code) for platform, table in CATALOGUE.items() for code in table]


@pytest.fixture
def sb(tmp_path: Path) -> Sandbox:
    return Sandbox(
        SandboxConfig(
            DatabaseLocation.sqlite_in(tmp_path), emulators=sandbox_emulators(), delay_s=0, processing_s=0
        )
    ).activate()


def client(sb: Sandbox, platform: str) -> httpx.Client:
    return httpx.Client(transport=sb.transport(platform), base_url="https://emulator.sandbox.invalid")


def code_of(platform: str, resp: httpx.Response) -> str:
    """The error code in the network's own body shape."""
    body: Any = resp.json()
    if platform == "tiktok":
        assert set(body) == {"data", "error"} and body["error"]["log_id"]
        return str(body["error"]["code"])
    if platform in ("facebook", "instagram", "threads"):
        err = body["error"]
        assert err["type"] == "OAuthException" and err["message"] and err["fbtrace_id"]
        return f"{err['code']}/{err['error_subcode']}" if "error_subcode" in err else str(err["code"])
    if platform == "linkedin":
        assert body["status"] == resp.status_code and body["message"]
        return str(body["code"])
    err = body["error"]
    assert err["code"] == resp.status_code and err["message"]
    return str(err["errors"][0]["reason"])


@pytest.mark.parametrize(("platform", "code"), CASES, ids=[f"{p}:{c}" for p, c in CASES])
def test_each_code_answers_the_networks_body_and_status(sb: Sandbox, platform: str, code: str) -> None:
    c = client(sb, platform)
    method, path = PUBLISH[platform]
    served = c.request(method, path)  # what the emulator answers this (unauthenticated) call by itself
    r = c.post("/_sandbox/errors", json={"code": code})
    assert r.status_code == 200 and r.json()["armed"] == [{"code": code, "times": 1, "path": "publish"}]
    got = c.request(method, path)
    fault = CATALOGUE[platform][code]
    assert got.status_code == fault.status and code_of(platform, got) == code
    if fault.transient is not None:
        assert got.json()["error"]["is_transient"] is fault.transient
    assert c.get("/_sandbox/errors").json()["armed"] == []  # used up: the next call is served again
    again = c.request(method, path)
    assert (again.status_code, code_of(platform, again)) == (served.status_code, code_of(platform, served))


def test_times_path_and_reset(sb: Sandbox) -> None:
    ident = register_account("tiktok", "Switch", "ok")
    c = client(sb, "tiktok")
    auth = {"Authorization": f"Bearer {ident.access_token}"}
    errors.configure_errors("tiktok", "rate_limit_exceeded", times=2, path="creator_info")
    errors.configure_errors("tiktok", "internal_error", path=r"/status/fetch")
    info = "/v2/post/publish/creator_info/query/"
    assert (
        c.post("/v2/post/publish/content/init/", json={}, headers=auth).json()["error"]["code"]
        != "rate_limit_exceeded"
    )  # another endpoint: not matched
    assert [c.post(info, json={}, headers=auth).status_code for _ in range(3)] == [429, 429, 200]
    assert (
        c.post("/v2/post/publish/status/fetch/", json={}, headers=auth).json()["error"]["code"]
        == "internal_error"
    )
    assert errors.errors_settings("tiktok")["armed"] == []
    errors.configure_errors("tiktok", "internal_error", times=5)
    assert errors.configure_errors("tiktok", reset=True)["armed"] == []
    assert c.post(info, json={}, headers=auth).status_code == 200


def test_unknown_codes_and_bad_switches_are_refused_listing_the_known_ones(sb: Sandbox) -> None:
    c = client(sb, "youtube")
    r = c.post("/_sandbox/errors", json={"code": "quotaexceeded"})
    assert r.status_code == 400 and "quotaExceeded" in r.json()["error_description"]
    assert set(r.json()["codes"]) == set(CATALOGUE["youtube"])
    for bad in (
        {"code": "forbidden", "times": 0},
        {"code": "forbidden", "path": "("},
        {"times": 2},
        {"code": "forbidden", "when": "now"},
    ):
        assert c.post("/_sandbox/errors", json=bad).status_code == 400, bad
    listed = c.get("/_sandbox/errors").json()
    assert listed["armed"] == [] and listed["codes"]["quotaExceeded"]["action"] == "wait"
    assert "publish" in listed["endpoints"]
    with pytest.raises(ValueError, match="one of"):
        errors.configure_errors("facebook", "190/999")
    with pytest.raises(ValueError, match="unknown network"):
        errors.configure_errors("myspace", "1")


def test_every_code_has_an_action_of_networks_md() -> None:
    assert {f.action for t in CATALOGUE.values() for f in t.values()} == set(faults.ACTIONS)
    assert all(code == f.code for t in CATALOGUE.values() for code, f in t.items())
