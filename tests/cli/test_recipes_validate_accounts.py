"""`socialpub recipes validate --accounts` (issue 29): option values checked against what the target account's
network lets its creator choose now (GET /v1/accounts/{id}/choices) — TikTok's privacy among the account's own
levels — and said plainly when they could not be checked."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import invoke

RECIPE = (
    "timezone: Europe/Paris\nposts:\n"
    "  - id: clip\n    content: hi\n    targets: [tiktok]\n    media: clip.mp4\n"
    "    options:\n      tiktok: {{privacy: {privacy}}}\n    at: '2027-01-15 09:00'\n"
)


def folder(tmp_path: Path, privacy: str) -> Path:
    path = tmp_path / "set"
    path.mkdir(exist_ok=True)
    (path / "clip.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42")
    (path / "a.yaml").write_text(RECIPE.format(privacy=privacy), encoding="utf-8")
    return path


def test_a_level_the_account_does_not_offer_is_an_error(audited_tiktok_env, embedded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = invoke("recipes", "validate", str(folder(tmp_path, "PUBLIC_TO_EVERYONE")), "--accounts", "--json")
    assert r.code == 1, r.out
    (err,) = r.json()["errors"]
    assert err["code"] == "option_not_allowed" and (err["file"], err["line"]) == ("a.yaml", 3)
    assert "options.tiktok.privacyLevel: PUBLIC_TO_EVERYONE" in err["message"]
    # the levels of `init --sandbox`'s TikTok account, a private one
    assert "FOLLOWER_OF_CREATOR, MUTUAL_FOLLOW_FRIENDS, SELF_ONLY" in err["message"]
    assert r.json()["unchecked"] == []
    ok = invoke("recipes", "validate", str(folder(tmp_path, "FOLLOWER_OF_CREATOR")), "--accounts")
    assert ok.code == 0, ok.out
    assert "valid" in ok.out.splitlines()[-1]


def test_an_unaudited_app_allows_only_self_only(embedded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = invoke("recipes", "validate", str(folder(tmp_path, "FOLLOWER_OF_CREATOR")), "--accounts")
    assert r.code == 1
    line = "a.yaml:3:0: post 'clip': options.tiktok.privacyLevel: FOLLOWER_OF_CREATOR is not among what the account"
    assert line in r.out and "allows now: SELF_ONLY (the TikTok app is not audited" in r.out
    assert invoke("recipes", "validate", str(folder(tmp_path, "SELF_ONLY")), "--accounts").code == 0


def test_without_a_server_it_says_what_was_not_checked(cli_env, tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = invoke("recipes", "validate", str(folder(tmp_path, "SELF_ONLY")), "--accounts", "--json")
    assert r.code == 0, r.out  # the files are valid; the accounts could not be asked
    (note,) = r.json()["unchecked"]
    assert note["platform"] == "tiktok" and "checks them when the recipe is applied" in note["reason"]
    human = invoke("recipes", "validate", str(folder(tmp_path, "SELF_ONLY")), "--accounts")
    assert "tiktok: not checked against the accounts:" in human.out
