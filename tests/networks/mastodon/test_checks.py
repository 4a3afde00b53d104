"""Mastodon's check_account: the scopes publishing and reconciliation need (research B.1a M13)."""

from __future__ import annotations

from backend.networks.mastodon.checks import check_account


def test_the_granular_scopes_or_their_parents_suffice() -> None:
    assert check_account(["write:statuses", "write:media", "read:statuses", "profile"]) == []
    assert check_account(["read", "write"]) == []
    assert check_account([]) == []  # not said: nothing judged


def test_a_missing_scope_is_an_error_naming_it_and_the_fix() -> None:
    (finding,) = check_account(["write:statuses", "write:media", "profile"])
    assert finding.severity == "error" and "read:statuses" in finding.message
    assert "cannot verify" in finding.message and "--instance" in finding.fix
    (no_media,) = check_account(["write:statuses", "read"])
    assert "write:media" in no_media.message and "cannot publish" in no_media.message
