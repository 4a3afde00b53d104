"""`socialpub profile`: the backends the CLI can talk to (config.yaml, see socialpub_tui.client.config)."""

from __future__ import annotations

from pathlib import Path

import click

from socialpub_tui.cli._common import Output, api_command, profile_name
from socialpub_tui.client.config import config_path, load_config, profile_from, resolve_profile, save_config


@click.group("profile")
def profile_group() -> None:
    """Profiles in config.yaml ($SOCIALPUB_CONFIG, else the platform config dir): embedded data dirs or servers.

    \b
    Examples:
      socialpub profile add work --url https://pub.example.com --api-key-env WORK_SOCIALPUB_KEY --default
      socialpub profile add local --data-dir ~/socialpub
      socialpub --profile work posts list
    """


@profile_group.command("list")
@api_command
def profile_list(out: Output) -> None:
    """List the configured profiles and the one in use.

    \b
    Example:
      socialpub profile list --json | jq -r '.profiles[].name'
    """
    import os

    data = load_config()
    profiles = [
        profile_from(n, raw, os.environ, "config").describe()
        for n, raw in (data.get("profiles") or {}).items()
    ]
    current = resolve_profile(profile_name()).describe()
    out.emit(
        {
            "config": str(config_path()),
            "default": data.get("default"),
            "current": current,
            "profiles": profiles,
        },
        lambda: (
            out.table(
                [
                    (
                        ("* " if p["name"] == current["name"] else "  ") + p["name"],
                        p["kind"],
                        p.get("url") or p.get("dataDir") or "(default data dir)",
                        p.get("apiKeyEnv") or p.get("apiKey") or "-",
                    )
                    for p in profiles
                ],
                ["NAME", "KIND", "WHERE", "KEY"],
                empty=f"(no profile in {config_path()})",
            ),
            out.line(f"in use: {current['name']} ({current['kind']}, {current['source']})"),
        ),
    )


@profile_group.command("show")
@api_command
def profile_show(out: Output) -> None:
    """Show which backend this invocation would use, and why (never the key itself).

    \b
    Example:
      SOCIALPUB_PROFILE=work socialpub profile show
    """

    desc = resolve_profile(profile_name()).describe()
    out.emit(desc, lambda: out.fields((k, v) for k, v in desc.items()))


@profile_group.command("add")
@click.argument("name")
@click.option("--url", default=None, help="Base URL of a socialpub server (or any service implementing /v1).")
@click.option("--api-key-env", default=None, help="Name of the environment variable holding the API key.")
@click.option("--api-key", default=None, help="The API key itself, stored in config.yaml (mode 0600).")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Embedded backend on this data dir.",
)
@click.option("--default", "make_default", is_flag=True, help="Use this profile when none is chosen.")
@api_command
def profile_add(
    name: str,
    url: str | None,
    api_key_env: str | None,
    api_key: str | None,
    data_dir: Path | None,
    make_default: bool,
    out: Output,
) -> None:
    """Add or replace a profile.

    \b
    Example:
      socialpub profile add staging --url http://10.0.0.5:8000 --api-key-env STAGING_KEY
    """

    if bool(url) == bool(data_dir):
        raise click.UsageError("give either --url (a server) or --data-dir (embedded)")
    if data_dir and (api_key or api_key_env):
        raise click.UsageError("an embedded profile needs no API key")
    entry: dict[str, str] = {"url": url.rstrip("/")} if url else {"data_dir": str(data_dir)}
    if api_key_env:
        entry["api_key_env"] = api_key_env
    if api_key:
        entry["api_key"] = api_key
    data = load_config()
    data.setdefault("profiles", {})[name] = entry
    if make_default:
        data["default"] = name
    path = save_config(data)
    out.emit(
        {"ok": True, "name": name, "config": str(path), "default": data.get("default")},
        f"Saved profile {name} in {path}" + (" (default)" if make_default else "") + ".",
    )


@profile_group.command("use")
@click.argument("name", required=False)
@click.option("--none", "clear", is_flag=True, help="No default profile (embedded on the default data dir).")
@api_command
def profile_use(name: str | None, clear: bool, out: Output) -> None:
    """Make NAME the default profile.

    \b
    Example:
      socialpub profile use work
    """

    if bool(name) == clear:
        raise click.UsageError("give a profile NAME or --none")
    data = load_config()
    if name and name not in (data.get("profiles") or {}):
        raise click.UsageError(f"no profile {name!r}: add it with `socialpub profile add`")
    if clear:
        data.pop("default", None)
    else:
        data["default"] = name
    save_config(data)
    out.emit(
        {"ok": True, "default": data.get("default")}, f"Default profile: {data.get('default') or '(none)'}."
    )
