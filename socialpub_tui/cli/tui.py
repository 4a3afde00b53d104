"""`socialpub tui`: open the TUI on the embedded backend (default) or a profile's server."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from socialpub_tui.cli._common import display_zone, profile_name, time_options


@click.command("tui")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Open the embedded backend on this data dir (default: the profile's, else $SOCIALPUB_DATA_DIR).")
@time_options
@click.pass_context
def tui_cmd(ctx: click.Context, data_dir: Path | None) -> None:
    """Open the TUI: posts, post detail, compose, calendar, accounts, activity. ctrl+q quits, f1 lists the keys.

    \b
    Examples:
      socialpub tui                      # the embedded backend, its worker running in this process
      socialpub --profile work tui       # a remote server
      socialpub tui --tz Europe/Paris    # times in this zone
    """
    from socialpub_tui.client import ConfigError, connect_async
    from socialpub_tui.client.config import Profile, load_session, resolve_profile

    zone = display_zone(ctx)
    try:
        if data_dir is not None:
            profile = Profile(name="embedded", kind="embedded", data_dir=data_dir, source="--data-dir")
        else:
            profile = resolve_profile(profile_name(ctx))
        # On a server, the owner's session (`socialpub login`) when there is one: the TUI refreshes and pages on
        # its own, and an API key's budget (30 requests a minute by default) is for integrations; the owner's
        # session is not counted against it. Without a session, the key, and the client waits out 429s.
        owner = profile.kind != "embedded" and load_session(profile) is not None
        client = connect_async(profile, **({"api_key": None} if owner else {}))
    except ConfigError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(1)
    # textual-image probes the terminal (graphics protocol, cell size) when imported: before the app owns it
    import textual_image.widget  # noqa: F401

    from socialpub_tui.app import SocialpubApp

    label = (f"embedded · {profile.data_dir or 'default data dir'}" if profile.kind == "embedded"
             else f"{profile.name} · {profile.url}" + (" · owner session" if owner else ""))
    SocialpubApp(client, zone=zone, backend_label=label).run()
