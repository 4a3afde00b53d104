"""Profiles: which backend the client talks to.

The config file is `config.yaml` in the platform config dir (`~/.config/socialpub/config.yaml` on Linux),
or the file named by `SOCIALPUB_CONFIG`::

    default: work                 # used when no profile is chosen
    timezone: Europe/Paris        # optional: the zone the CLI shows times in (default: the system's)
    profiles:
      local:
        data_dir: ~/socialpub     # embedded: the backend runs in-process on this data dir
      work:
        url: https://pub.example.com
        api_key_env: WORK_SOCIALPUB_KEY   # name of an environment variable holding the key (preferred)
        timezone: America/New_York        # optional, per profile: wins over the top-level one
      hosted:
        url: https://api.example.com
        api_key: "sp_live_v1-…"   # or the key itself (keep the file private)

Resolution, first match wins: `--profile NAME` / `SOCIALPUB_PROFILE`; `SOCIALPUB_API_URL` (+ `SOCIALPUB_API_KEY`)
for a remote backend without a profile; the `default` profile; else embedded on `SOCIALPUB_DATA_DIR` (or the
platform data dir). `SOCIALPUB_BASE_URL` is the server's own public address (used by `serve`), not this.

Owner sessions saved by `socialpub login` live in `sessions.json` next to the config file (mode 0600); the
webhook signing secrets kept by `socialpub webhooks add` / `rotate` in `webhook-secrets.json` beside it (0600).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from socialpub_tui.client.errors import ConfigError


def config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("SOCIALPUB_CONFIG"):
        return Path(env["SOCIALPUB_CONFIG"]).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("socialpub", appauthor=False)) / "config.yaml"


@dataclass
class Profile:
    """Where the backend is. `kind` is `embedded` (data_dir; None = the default data dir) or `remote`."""

    name: str
    kind: Literal["embedded", "remote"]
    data_dir: Path | None = None
    url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    api_key_env: str | None = None
    source: str = "default"

    @property
    def session_key(self) -> str:
        """The key sessions are stored under: one login per remote server."""
        return (self.url or "").rstrip("/") if self.kind == "remote" else f"embedded:{self.data_dir or ''}"

    def describe(self) -> dict[str, Any]:
        """A printable description (never the key itself)."""
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "source": self.source}
        if self.kind == "embedded":
            out["dataDir"] = str(self.data_dir) if self.data_dir else None
        else:
            out["url"] = self.url
            out["apiKey"] = mask_key(self.api_key) if self.api_key else None
            if self.api_key_env:
                out["apiKeyEnv"] = self.api_key_env
        return out


def mask_key(key: str) -> str:
    """A key as it may be displayed: its prefix up to and including `v1-` plus 4 characters, then an ellipsis."""
    cut = key.find("v1-")
    keep = cut + 3 + 4 if cut >= 0 else min(8, len(key) // 3)
    return key[:keep] + "…"


def load_config(path: Path | None = None) -> dict[str, Any]:
    path = path or config_path()
    if not path.exists():
        return {}
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping with `profiles:`")
    return data


def save_config(data: dict[str, Any], path: Path | None = None) -> Path:
    import yaml

    path = path or config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_private(path, yaml.safe_dump(data, sort_keys=False))
    return path


def profile_from(name: str, raw: Any, env: Mapping[str, str], source: str) -> Profile:
    if not isinstance(raw, dict):
        raise ConfigError(f"profile {name!r}: expected a mapping (data_dir, or url + api_key/api_key_env)")
    url = raw.get("url")
    if url:
        key_env = raw.get("api_key_env")
        key = raw.get("api_key")
        if key_env:
            key = env.get(str(key_env)) or key
        return Profile(
            name, "remote", url=str(url).rstrip("/"), api_key=key, api_key_env=key_env, source=source
        )
    data_dir = raw.get("data_dir")
    return Profile(
        name, "embedded", data_dir=Path(str(data_dir)).expanduser() if data_dir else None, source=source
    )


def resolve_profile(
    name: str | None = None, env: Mapping[str, str] | None = None, path: Path | None = None
) -> Profile:
    """Pick the backend, by the rules in this module's docstring."""
    env = os.environ if env is None else env
    path = path or config_path(env)
    chosen = name or env.get("SOCIALPUB_PROFILE") or None
    if chosen:
        profiles = load_config(path).get("profiles") or {}
        if chosen not in profiles:
            known = ", ".join(sorted(profiles)) or "none"
            raise ConfigError(f"no profile {chosen!r} in {path} (profiles: {known})", code="unknown_profile")
        return profile_from(chosen, profiles[chosen], env, f"profile {chosen!r} in {path}")
    if env.get("SOCIALPUB_API_URL"):
        return Profile(
            "env",
            "remote",
            url=env["SOCIALPUB_API_URL"].rstrip("/"),
            api_key=env.get("SOCIALPUB_API_KEY"),
            api_key_env="SOCIALPUB_API_KEY",
            source="SOCIALPUB_API_URL",
        )
    data = load_config(path)
    default = data.get("default")
    if default:
        profiles = data.get("profiles") or {}
        if default not in profiles:
            raise ConfigError(f"{path}: default profile {default!r} is not defined", code="unknown_profile")
        return profile_from(str(default), profiles[default], env, f"default profile in {path}")
    data_dir = env.get("SOCIALPUB_DATA_DIR")
    return Profile(
        "embedded",
        "embedded",
        data_dir=Path(data_dir).expanduser() if data_dir else None,
        source="SOCIALPUB_DATA_DIR" if data_dir else "default data dir",
    )


# ---- saved sessions -------------------------------------------------------------------------------------


def sessions_path(env: Mapping[str, str] | None = None) -> Path:
    return config_path(env).parent / "sessions.json"


def _write_private(path: Path, text: str) -> None:
    """Write a file readable by its owner only (0600), atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def _read_sessions(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load_session(profile: Profile, env: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The saved session for this profile's server: {token, expiresAt, email, workspaceId}, or None."""
    entry = _read_sessions(sessions_path(env)).get(profile.session_key)
    if not isinstance(entry, dict) or not entry.get("token"):
        return None
    expires = entry.get("expiresAt")
    if expires:
        from datetime import UTC, datetime

        try:
            if datetime.fromisoformat(str(expires).replace("Z", "+00:00")) <= datetime.now(UTC):
                return None
        except ValueError:
            pass
    return entry


def save_session(profile: Profile, entry: dict[str, Any], env: Mapping[str, str] | None = None) -> Path:
    path = sessions_path(env)
    data = _read_sessions(path)
    data[profile.session_key] = entry
    _write_private(path, json.dumps(data, indent=2))
    return path


def forget_session(profile: Profile, env: Mapping[str, str] | None = None) -> bool:
    path = sessions_path(env)
    data = _read_sessions(path)
    if data.pop(profile.session_key, None) is None:
        return False
    _write_private(path, json.dumps(data, indent=2))
    return True


# ---- webhook signing secrets (for `socialpub webhooks listen`) -----------------------------------------


def webhook_secrets_path(env: Mapping[str, str] | None = None) -> Path:
    """`webhook-secrets.json` next to `sessions.json` (mode 0600): profile.session_key -> endpoint id ->
    {url, secret, previousSecret?}, written by `webhooks add` and `rotate`, read by `webhooks listen`."""
    return sessions_path(env).parent / "webhook-secrets.json"


def load_webhook_secrets(env: Mapping[str, str] | None = None) -> dict[str, dict[str, dict[str, str]]]:
    """Every stored endpoint secret, by profile then endpoint id (unreadable or malformed parts are skipped)."""
    data = _read_sessions(webhook_secrets_path(env))
    return {
        key: {
            eid: entry
            for eid, entry in endpoints.items()
            if isinstance(entry, dict) and isinstance(entry.get("secret"), str)
        }
        for key, endpoints in data.items()
        if isinstance(endpoints, dict)
    }


def save_webhook_secret(
    profile: Profile, endpoint_id: str, url: str, secret: str, env: Mapping[str, str] | None = None
) -> Path:
    """Keep an endpoint's secret; a different secret already stored for it (a rotation) becomes `previousSecret`,
    which the server keeps signing with beside the new one for 24 h."""
    path = webhook_secrets_path(env)
    data = load_webhook_secrets(env)
    endpoints = data.setdefault(profile.session_key, {})
    entry: dict[str, str] = {"url": url, "secret": secret}
    old = endpoints.get(endpoint_id, {}).get("secret")
    if old and old != secret:
        entry["previousSecret"] = old
    endpoints[endpoint_id] = entry
    _write_private(path, json.dumps(data, indent=2))
    return path


def forget_webhook_secret(profile: Profile, endpoint_id: str, env: Mapping[str, str] | None = None) -> bool:
    path = webhook_secrets_path(env)
    data = load_webhook_secrets(env)
    endpoints = data.get(profile.session_key, {})
    if endpoints.pop(endpoint_id, None) is None:
        return False
    if not endpoints:
        data.pop(profile.session_key, None)
    _write_private(path, json.dumps(data, indent=2))
    return True
