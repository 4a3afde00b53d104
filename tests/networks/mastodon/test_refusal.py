"""An instance's refusals read by status first (research B.1e M29, M32; B.3 F6; B.4 tests 16, 27, 29-31)."""

from __future__ import annotations

import httpx
import time_machine

from backend.networks.mastodon.refusal import refusal

HOST = "social.example"


def test_a_revoked_token_asks_for_a_reconnection() -> None:
    for sentence in ("The access token is invalid", "The access token was revoked"):
        err = refusal(httpx.Response(401, json={"error": sentence}), HOST)
        assert err.auth_refused and err.fail_type == "permanent"
        assert sentence in err.reason and "--instance social.example" in err.reason


def test_a_missing_scope_is_a_reconnection_and_an_account_state_is_said() -> None:
    scope = refusal(httpx.Response(403, json={"error": "This action is outside the authorized scopes"}), HOST)
    assert scope.auth_refused and scope.code == "scope_missing"
    unconfirmed = refusal(
        httpx.Response(403, json={"error": "Your login is missing a confirmed e-mail address"}), HOST
    )
    assert not unconfirmed.auth_refused and unconfirmed.fail_type == "permanent"
    assert unconfirmed.reason.startswith("confirm the account's e-mail address on social.example")


def test_media_still_processing_is_retriable_other_422s_are_not() -> None:
    not_ready = refusal(
        httpx.Response(
            422,
            json={"error": "Cannot attach files that have not finished processing. Try again in a moment!"},
        ),
        HOST,
    )
    assert not_ready.fail_type == "retriable" and not_ready.code == "media_not_ready"
    too_long = refusal(
        httpx.Response(422, json={"error": "Validation failed: Text character limit of 500 exceeded"}), HOST
    )
    assert too_long.fail_type == "permanent" and "character limit of 500" in too_long.reason


@time_machine.travel("2026-11-28T15:00:00+00:00", tick=False)
def test_a_429_waits_until_the_reset_time() -> None:
    err = refusal(
        httpx.Response(
            429,
            headers={"X-RateLimit-Reset": "2026-11-28T15:04:00.000000Z"},
            json={"error": "Too many requests"},
        ),
        HOST,
    )
    assert err.fail_type == "retriable" and err.wait
    assert err.retry_after_s == 240.0


def test_server_errors_are_retriable_and_not_found_is_permanent() -> None:
    assert refusal(httpx.Response(503, json={"error": "There was a temporary problem"}), HOST).fail_type == (
        "retriable"
    )
    assert refusal(httpx.Response(502, text="<html>bad gateway</html>"), HOST).fail_type == "retriable"
    gone = refusal(httpx.Response(404, json={"error": "Record not found"}), HOST)
    assert gone.fail_type == "permanent" and "Record not found" in gone.reason
