"""Profiles: resolution order, saved sessions (0600), key masking."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
import yaml

from socialpub_tui.client.config import (
    Profile,
    load_session,
    mask_key,
    resolve_profile,
    save_session,
    sessions_path,
)
from socialpub_tui.client.errors import ConfigError


def write(path: Path, data: dict) -> Path:  # type: ignore[type-arg]
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture
def cfg(tmp_path: Path) -> Path:
    return write(
        tmp_path / "config.yaml",
        {
            "default": "local",
            "profiles": {
                "local": {"data_dir": str(tmp_path / "data")},
                "work": {"url": "https://pub.example.com/", "api_key_env": "WORK_KEY"},
                "inline": {"url": "http://h:1", "api_key": "spk_live_v1-abcdefgh"},
            },
        },
    )


def test_explicit_profile_wins(cfg: Path) -> None:
    env = {
        "SOCIALPUB_CONFIG": str(cfg),
        "WORK_KEY": "spk_live_v1-work",
        "SOCIALPUB_PROFILE": "inline",
        "SOCIALPUB_API_URL": "http://elsewhere",
    }
    p = resolve_profile("work", env)
    assert (p.kind, p.url, p.api_key) == ("remote", "https://pub.example.com", "spk_live_v1-work")


def test_env_profile_then_api_url_then_default_then_embedded(cfg: Path, tmp_path: Path) -> None:
    env = {
        "SOCIALPUB_CONFIG": str(cfg),
        "SOCIALPUB_PROFILE": "inline",
        "SOCIALPUB_API_URL": "http://elsewhere",
    }
    assert resolve_profile(None, env).name == "inline"
    env.pop("SOCIALPUB_PROFILE")
    env["SOCIALPUB_API_KEY"] = "spk_live_v1-env"
    p = resolve_profile(None, env)
    assert (p.kind, p.url, p.api_key) == ("remote", "http://elsewhere", "spk_live_v1-env")
    env.pop("SOCIALPUB_API_URL")
    p = resolve_profile(None, env)
    assert (p.name, p.kind, p.data_dir) == ("local", "embedded", tmp_path / "data")
    empty = {"SOCIALPUB_CONFIG": str(tmp_path / "none.yaml"), "SOCIALPUB_DATA_DIR": str(tmp_path / "dd")}
    p = resolve_profile(None, empty)
    assert (p.kind, p.data_dir) == ("embedded", tmp_path / "dd")


def test_unknown_profile_is_a_config_error(cfg: Path) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_profile("nope", {"SOCIALPUB_CONFIG": str(cfg)})
    assert info.value.code == "unknown_profile" and "work" in info.value.message


def test_broken_config_is_reported(tmp_path: Path) -> None:
    bad = tmp_path / "config.yaml"
    bad.write_text("profiles: [unclosed")
    with pytest.raises(ConfigError):
        resolve_profile("x", {"SOCIALPUB_CONFIG": str(bad)})


def test_describe_never_shows_the_key() -> None:
    p = Profile("x", "remote", url="http://h", api_key="spk_live_v1-abcdefghijklmnop")
    text = str(p.describe()) + repr(p)
    assert "abcdefghijklmnop" not in text and "spk_live_v1-abcd…" in text
    assert mask_key("spk_live_v1-abcdefgh") == "spk_live_v1-abcd…"


def test_session_saved_private_and_per_server(tmp_path: Path) -> None:
    env = {"SOCIALPUB_CONFIG": str(tmp_path / "c" / "config.yaml")}
    a = Profile("a", "remote", url="http://one")
    b = Profile("b", "remote", url="http://two")
    save_session(a, {"token": "T1", "expiresAt": "2999-01-01T00:00:00Z"}, env)
    path = sessions_path(env)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_session(a, env)["token"] == "T1"  # type: ignore[index]
    assert load_session(b, env) is None
    save_session(b, {"token": "T2", "expiresAt": "2000-01-01T00:00:00Z"}, env)
    assert load_session(b, env) is None  # expired sessions are not used
