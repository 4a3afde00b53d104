"""How the accounts screen looks (canned data): sandbox and live accounts, one token that cannot be refreshed
expiring within the week (the server's tokenWarning: highlighted, with its warning line), one needing
re-authorisation (its reconnect line), one refreshed by the worker (no warning), and what the selected sandbox
account's emulated network received; at 100x30 and 80x24. `accounts doctor`'s findings: a marker on the rows of
the accounts with one, the error of a live account's network app under the table, and an account's findings with
their fixes in its panel. Also: from a service without tokenWarning, the screen warns about any token within a
week of its expiry."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.tui.canned import canned_app, ts


def account(
    aid: str,
    platform: str,
    name: str,
    username: str,
    *,
    kind: str = "sandbox",
    status: str = "active",
    default: bool = True,
    expires: str | None = None,
    behaviour: str | None = "ok",
    warning: str | None = None,
) -> dict[str, Any]:
    return {
        "id": aid,
        "platform": platform,
        "name": name,
        "username": username,
        "kind": kind,
        "status": status,
        "isDefault": default,
        "behaviour": behaviour if kind == "sandbox" else None,
        "connectedAt": ts(2026, 12, 1, 9),
        "tokenExpiresAt": expires,
        "tokenWarning": warning,
    }


ACCOUNTS = {
    "items": [
        account("acc_fb", "facebook", "Sandbox Facebook Page", "sandbox-facebook-page-1a2b"),
        account("acc_ig", "instagram", "Sandbox Instagram", "sandbox-instagram-3c4d"),
        account(
            "acc_li",
            "linkedin",
            "Brand LinkedIn",
            "brand-co",
            kind="live",
            expires=ts(2027, 1, 18, 9),
            warning="token expires in 3 days: reconnect with socialpub accounts connect linkedin",
        ),
        account(
            "acc_li2",
            "linkedin",
            "LinkedIn broken",
            "linkedin-broken-9f9f",
            default=False,
            behaviour="fail-permanent",
        ),
        account(
            "acc_tt",
            "tiktok",
            "Creator TikTok",
            "creator",
            kind="live",
            status="needs_reauth",
            expires=ts(2027, 1, 14, 7),
            warning="the network no longer accepts its authorisation: reconnect with socialpub accounts connect tiktok",
        ),
        account(
            "acc_yt", "youtube", "Brand YouTube", "brand-yt", kind="live", expires=ts(2027, 1, 15, 8, 40)
        ),
    ],
    "limit": 10,
    "used": 6,
}

PUBLISHED = {
    "items": [
        {
            "platform": "facebook",
            "accountId": "acc_fb",
            "accountName": "Sandbox Facebook Page",
            "externalId": "1234567890_111",
            "url": "https://facebook.sandbox.invalid/1234567890_111",
            "status": "published",
            "kind": "photo",
            "text": "Launch day: the new collection is live",
            "title": None,
            "media": ["pic-1.jpg"],
            "createdAt": ts(2027, 1, 15, 7, 58),
        },
        {
            "platform": "facebook",
            "accountId": "acc_fb",
            "accountName": "Sandbox Facebook Page",
            "externalId": "1234567890_110",
            "url": "https://facebook.sandbox.invalid/1234567890_110",
            "status": "published",
            "kind": "feed",
            "text": "Hello from socialpub",
            "title": None,
            "media": [],
            "createdAt": ts(2027, 1, 14, 16, 2),
        },
    ]
}


def finding(code: str, severity: str, message: str, fix: str) -> dict[str, str]:
    return {"code": code, "severity": severity, "message": message, "fix": fix}


DOCTOR = {
    "ok": False,
    "networks": [
        {"platform": "facebook", "findings": []},
        {"platform": "instagram", "findings": []},
        {
            "platform": "linkedin",
            "findings": [
                finding(
                    "api_version_sunset",
                    "error",
                    "LinkedIn API version 202506 ended on 2026-06-15: LinkedIn refuses every call made with it",
                    "unset SOCIALPUB_LINKEDIN_VERSION to use 202601, or set it to an active version",
                )
            ],
        },
        {"platform": "tiktok", "findings": []},
        {"platform": "youtube", "findings": []},
    ],
    "accounts": [
        {"id": "acc_fb", "platform": "facebook", "name": "Sandbox Facebook Page", "findings": []},
        {"id": "acc_ig", "platform": "instagram", "name": "Sandbox Instagram", "findings": []},
        {
            "id": "acc_li",
            "platform": "linkedin",
            "name": "Brand LinkedIn",
            "findings": [
                finding(
                    "token_expiring",
                    "warning",
                    "token expires in 3 days",
                    "reconnect with socialpub accounts connect linkedin",
                )
            ],
        },
        {"id": "acc_li2", "platform": "linkedin", "name": "LinkedIn broken", "findings": []},
        {
            "id": "acc_tt",
            "platform": "tiktok",
            "name": "Creator TikTok",
            "findings": [
                finding(
                    "needs_reauth",
                    "error",
                    "the network no longer accepts its authorisation",
                    "reconnect with socialpub accounts connect tiktok",
                )
            ],
        },
        {"id": "acc_yt", "platform": "youtube", "name": "Brand YouTube", "findings": []},
    ],
}


def published(request: httpx.Request) -> httpx.Response:
    mine = [p for p in PUBLISHED["items"] if p["accountId"] == request.url.params.get("accountId")]
    return httpx.Response(200, json={"items": mine})


def app() -> Any:
    return canned_app(
        {
            ("GET", "/v1/accounts"): ACCOUNTS,
            ("GET", "/v1/sandbox/published"): published,
            ("GET", "/v1/accounts/doctor"): DOCTOR,
        }
    )


async def to_accounts(pilot: Any) -> None:
    await pilot.press("f4")
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


@pytest.mark.parametrize("size", [pytest.param((100, 30), id="100x30"), pytest.param((80, 24), id="80x24")])
def test_accounts(snap_compare, size):
    assert snap_compare(app(), terminal_size=size, run_before=to_accounts)


async def to_a_live_account(pilot: Any) -> None:
    """The cursor on Brand LinkedIn: its token's warning and its network app's error, each with its fix."""
    await to_accounts(pilot)
    await pilot.press("down", "down")
    for _ in range(2):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def test_an_accounts_doctor_findings_in_its_panel(snap_compare):
    assert snap_compare(app(), terminal_size=(100, 30), run_before=to_a_live_account)


async def to_add_dialog(pilot: Any) -> None:
    await to_accounts(pilot)
    await pilot.press("a")
    await pilot.pause()
    await pilot.press("ctrl+s")  # nothing picked yet: the dialog says what is missing
    await pilot.pause()


def test_add_sandbox_account_dialog(snap_compare):
    assert snap_compare(app(), terminal_size=(80, 24), run_before=to_add_dialog)


def test_without_the_server_warning_any_token_near_expiry_is_warned_about():
    from datetime import UTC, datetime

    from backend.schemas.accounts import AccountOut
    from socialpub_tui.screens.accounts import expiry

    now = datetime(2027, 1, 15, 8, 0, tzinfo=UTC)
    old = dict(ACCOUNTS["items"][2])
    old.pop("tokenWarning")  # another service: no tokenWarning at all
    assert expiry(AccountOut.model_validate(old), now)[0] == "soon"
    yt = AccountOut.model_validate(ACCOUNTS["items"][5])  # ours: refreshed by the worker, no warning
    assert expiry(yt, now) == ("ok", None)
    tt = AccountOut.model_validate(ACCOUNTS["items"][4])
    assert expiry(tt, now)[0] == "reauth" and "socialpub accounts connect tiktok" in (
        expiry(tt, now)[1] or ""
    )
