"""`socialpub tui`: open the TUI on the embedded backend (default) or a profile's server."""

from __future__ import annotations

import importlib
import sys
import threading
from pathlib import Path

import click

from socialpub_tui.cli._common import display_zone, profile_name, time_options
from socialpub_tui.client import ConfigError, connect_async
from socialpub_tui.client.config import Profile, load_session, resolve_profile
from socialpub_tui.settings import TuiSettings, settings_path


class TerminalProbe:
    """textual-image asks the terminal which graphics protocol it speaks and how big a cell is when it is imported,
    and must before the app owns the terminal. A terminal that does not speak a protocol never answers: each such
    question waits out textual-image's 0.1 s timeout (one in tmux, two in some terminals). The import runs in a
    thread started before the client is built, so those waits pass while this thread builds it (the embedded
    backend's start: CPU work that the waits do not hold up). `wait()` joins it; if the import failed in the
    thread, it is made again here, where its error is seen."""

    def __init__(self, module: str = "textual_image.widget") -> None:
        self.module = module
        self.failed = False
        self.thread = threading.Thread(target=self.run, name="terminal-probe", daemon=True)
        self.thread.start()

    def run(self) -> None:
        try:
            importlib.import_module(self.module)
        except BaseException:  # noqa: BLE001 — made again in the main thread by wait(), which raises it there
            self.failed = True

    def wait(self) -> None:
        self.thread.join()
        if self.failed:
            importlib.import_module(self.module)


@click.command("tui")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Open the embedded backend on this data dir (default: the profile's, else $SOCIALPUB_DATA_DIR).",
)
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

    zone = display_zone(ctx)
    probe = TerminalProbe()
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
        probe.wait()
        click.echo(f"Error: {exc}", err=True)
        sys.exit(1)
    probe.wait()

    # deferred: socialpub_tui.app costs ~174 ms of start-up, paid only by the commands that use it
    from socialpub_tui.app import SocialpubApp

    label = (
        f"embedded · {profile.data_dir or 'default data dir'}"
        if profile.kind == "embedded"
        else f"{profile.name} · {profile.url}" + (" · owner session" if owner else "")
    )
    app = SocialpubApp(client, zone=zone, backend_label=label, settings=TuiSettings.load(settings_path()))
    app.run()
    if (
        app.return_code
    ):  # the app stopped on an error (Textual printed it): a script or `make run` must see it
        sys.exit(app.return_code)
