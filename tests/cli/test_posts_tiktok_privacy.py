"""`socialpub posts create --to tiktok` and the creator's privacy choice (issue 29): TikTok makes the creator choose,
nothing pre-selected. On a terminal the CLI asks among the account's own options (the server's refusal names them,
read from creator_info); elsewhere a usage error names them and --tiktok-privacy. Nothing is created until chosen."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.networks.tiktok.adapter import CONSENT
from backend.networks.tiktok.options import CONSENT_BRANDED
from socialpub_tui.cli import posts as posts_cli
from tests.cli.conftest import invoke
from tests.media import corpus

# an audited app: the three levels of the account `init --sandbox` connects — a private one
pytestmark = pytest.mark.usefixtures("audited_tiktok")
PRIVATE = "FOLLOWER_OF_CREATOR, MUTUAL_FOLLOW_FRIENDS, SELF_ONLY"


@pytest.fixture
def clip(tmp_path: Path) -> str:
    path = tmp_path / "clip.mp4"
    path.write_bytes(corpus.video("mp4"))
    return str(path)


def test_off_a_terminal_the_choice_is_required_naming_the_accounts_options(embedded, clip) -> None:  # type: ignore[no-untyped-def]
    r = invoke("posts", "create", "Hello", "--to", "tiktok", "--media", clip, "--json")
    assert r.code == 2, r.out
    assert "--tiktok-privacy" in r.err and PRIVATE in r.err
    assert "PUBLIC_TO_EVERYONE" not in r.err  # not this (private) account's
    assert invoke("posts", "list", "--json").json() == []


def test_on_a_terminal_the_creator_chooses_among_the_accounts_options(embedded, clip, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(posts_cli, "on_terminal", lambda: True)
    r = invoke("posts", "create", "Hello", "--to", "tiktok", "--media", clip, "--json", input="SELF_ONLY\n")
    assert r.code == 0, r.err
    assert "FOLLOWER_OF_CREATOR" in r.err and "PUBLIC_TO_EVERYONE" not in r.err  # the account's own levels
    (only,) = invoke("posts", "list", "--json").json()
    assert only["options"]["tiktok"]["privacyLevel"] == "SELF_ONLY"


def test_the_flag_is_the_choice(embedded, clip) -> None:  # type: ignore[no-untyped-def]
    r = invoke(
        "posts",
        "create",
        "Hello",
        "--to",
        "tiktok",
        "--media",
        clip,
        "--tiktok-privacy",
        "MUTUAL_FOLLOW_FRIENDS",
        "--json",
    )
    assert r.code == 0, r.err
    assert r.json()["options"]["tiktok"]["privacyLevel"] == "MUTUAL_FOLLOW_FRIENDS"


def test_the_question_names_the_creator_and_shows_the_consent_sentence(embedded, clip, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """TikTok's UX rules: the creator's nickname shown, and "By posting, you agree to TikTok's Music Usage
    Confirmation." before posting (GET /v1/accounts/{id}/choices)."""
    monkeypatch.setattr(posts_cli, "on_terminal", lambda: True)
    r = invoke("posts", "create", "Hello", "--to", "tiktok", "--media", clip, "--json", input="SELF_ONLY\n")
    assert r.code == 0, r.err
    assert "Posting to tiktok as Sandbox TikTok" in r.err and CONSENT in r.err
    assert r.err.index(CONSENT) < r.err.index("tiktok privacyLevel")  # said before the question


def test_branded_content_shows_its_label_and_consent_before_the_question(embedded, clip, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(posts_cli, "on_terminal", lambda: True)
    r = invoke(
        "posts",
        "create",
        "Our partner's beans",
        "--to",
        "tiktok",
        "--media",
        clip,
        "--option",
        "tiktok.brandContentToggle=true",
        "--json",
        input="MUTUAL_FOLLOW_FRIENDS\n",
    )
    assert r.code == 0, r.err
    assert "'Paid partnership'" in r.err and CONSENT_BRANDED in r.err and CONSENT not in r.err
    assert "SELF_ONLY" not in r.err.split("tiktok privacyLevel")[-1]  # branded content: never Only me
    assert r.json()["options"]["tiktok"]["brandContentToggle"] is True
