"""An embedded profile on a data dir of its own (`socialpub profile add local --data-dir …` made the default)
while $SOCIALPUB_DATA_DIR points elsewhere: every command acts on the profile's data dir.

Before: `init` (an operator command: the backend reads SOCIALPUB_DATA_DIR) initialised the environment's data dir
while the client commands on the profile said "not initialised"; and a sandbox account connected on the profile
was registered in the environment's data dir's sandbox (the services fell back to the process's settings), so
its first post failed with "the Facebook access token is expired or revoked" and the account turned
needs_reauth."""

from __future__ import annotations

import pytest
import yaml

from backend.networks import registry
from tests.cli.conftest import invoke


@pytest.fixture
def profile_dir(cli_env, monkeypatch):  # type: ignore[no-untyped-def]
    from backend.config import get_settings

    mine = cli_env / "mine"
    cfg = cli_env / "cfg" / "config.yaml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(yaml.safe_dump({"default": "mine", "profiles": {"mine": {"data_dir": str(mine)}}}))
    monkeypatch.setenv("SOCIALPUB_DATA_DIR", str(cli_env / "elsewhere"))
    get_settings.cache_clear()
    return mine


def test_init_acts_on_the_default_profile_data_dir(profile_dir, cli_env) -> None:  # type: ignore[no-untyped-def]
    r = invoke("init", "--sandbox", "--password", "s3cret-pass", "--json")
    assert r.code == 0, r.err
    assert r.json()["dataDir"] == str(profile_dir)
    listed = invoke("accounts", "list", "--json")
    assert listed.code == 0, listed.err
    assert len(listed.json()["items"]) == sum(
        1 for n in registry.networks() if n.builtin and n.emulator
    )  # one sandbox account per network
    assert not (cli_env / "elsewhere").exists()


def test_an_unknown_profile_stops_an_operator_command(profile_dir) -> None:  # type: ignore[no-untyped-def]
    r = invoke("--profile", "nope", "init", "--password", "s3cret-pass")
    assert r.code == 1 and "no profile 'nope'" in r.err


def test_a_sandbox_account_added_through_the_profile_publishes_in_its_data_dir(
    profile_dir, cli_env, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from backend.config import get_settings

    assert invoke("init", "--password", "s3cret-pass").code == 0
    # `init` passed the profile's data dir on in this process's environment: point it elsewhere again, as in a
    # new shell command
    monkeypatch.setenv("SOCIALPUB_DATA_DIR", str(cli_env / "elsewhere"))
    get_settings.cache_clear()
    added = invoke("accounts", "add-sandbox", "facebook", "--name", "My Page", "--json")
    assert added.code == 0, added.err
    r = invoke(
        "posts", "create", "Hello from a profile", "--to", "facebook", "--wait", "--timeout", "60", "--json"
    )
    assert r.code == 0, r.err + r.out
    post = r.json()
    assert post["status"] == "completed", post["targets"]
    assert [a["status"] for a in invoke("accounts", "list", "--json").json()["items"]] == ["active"]
    assert not (cli_env / "elsewhere").exists()  # nothing was written to the environment's data dir
