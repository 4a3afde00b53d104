"""The `socialpub` command. Subcommands are imported only when run, so `socialpub --help` stays fast.

Two kinds of subcommand: the front end's own (socialpub_tui.cli.*, each speaking /v1 through the client), and
the operator commands, which own the store and belong to the backend: they are the commands of the click group
`backend.operator.cli.operator_cli`, mounted here at the top level under their own names.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from typing import Any

import click

from socialpub_tui import startup_done
from socialpub_tui.client.config import resolve_profile
from socialpub_tui.client.errors import ConfigError

OPERATOR_GROUP = (
    "backend.operator.cli",
    "operator_cli",
)  # the backend's group whose commands are mounted here

# name -> (module, attribute, one-line help). Help text is here so listing commands imports nothing.
# An entry whose module is OPERATOR_GROUP's is looked up in that group by name (attribute: for the record).
COMMANDS: dict[str, tuple[str, str, str]] = {
    "init": ("backend.operator.cli", "init_cmd", "Create the store, workspace, owner login and an API key."),
    "serve": ("backend.operator.cli", "serve_cmd", "Run the API, the media host and the worker."),
    "worker": (
        "backend.operator.cli",
        "worker_cmd",
        "Run the job worker alone (any number of them on PostgreSQL).",
    ),
    "tick": (
        "backend.operator.cli",
        "tick_cmd",
        "Run every due job once, wait briefly for confirmations, exit (cron).",
    ),
    "admin": (
        "backend.operator.cli",
        "admin_group",
        "Operator tools acting on the data dir: session, plan, credits.",
    ),
    "login": (
        "socialpub_tui.cli.login",
        "login_cmd",
        "Log in as the owner on a server (for `keys`); saved 0600.",
    ),
    "logout": ("socialpub_tui.cli.login", "logout_cmd", "Forget the saved owner session."),
    "keys": ("socialpub_tui.cli.keys", "keys_group", "API keys: create, list, revoke, purge."),
    "workspace": (
        "socialpub_tui.cli.workspace",
        "workspace_group",
        "The workspace: show, edit (brand, plan, credits).",
    ),
    "media": (
        "socialpub_tui.cli.media",
        "media_group",
        "Upload images and videos (files or URLs); list the library.",
    ),
    "posts": (
        "socialpub_tui.cli.posts",
        "posts_group",
        "Posts: create (now or scheduled), list, show, edit, cancel, retry.",
    ),
    "gen": (
        "socialpub_tui.cli.gen",
        "gen_group",
        "Generations: images and 5-15 s videos from a prompt; cost preview, list, download.",
    ),
    "tiktok": (
        "socialpub_tui.cli.tiktok",
        "tiktok_group",
        "TikTok carousels and videos (draft or direct), status --wait.",
    ),
    "accounts": (
        "socialpub_tui.cli.accounts",
        "accounts_group",
        "Connected accounts: list, connect (OAuth or a token), check, remove, add-sandbox.",
    ),
    "webhooks": (
        "socialpub_tui.cli.webhooks",
        "webhooks_group",
        "Webhook endpoints: add, list, rotate, test, deliveries, listen.",
    ),
    "events": ("socialpub_tui.cli.webhooks", "events_group", "Webhook events: show one, redeliver it."),
    "networks": (
        "socialpub_tui.cli.networks",
        "networks_cmd",
        "The networks the backend publishes to: limits, options (plugins' too).",
    ),
    "sandbox": (
        "socialpub_tui.cli.sandbox",
        "sandbox_group",
        "The sandbox networks: what they published; serve one over HTTP.",
    ),
    "profile": ("socialpub_tui.cli.profile", "profile_group", "Backends to talk to: list, add, use, show."),
    "recipes": (
        "socialpub_tui.cli.recipes",
        "recipes_group",
        "Recipes: YAML + media that schedule posts — validate, plan, apply, watch.",
    ),
    "tui": (
        "socialpub_tui.cli.tui",
        "tui_cmd",
        "Open the TUI (the embedded backend by default; --profile for a server).",
    ),
    "completion": (
        "socialpub_tui.cli.completion",
        "completion_cmd",
        "Print shell completion for bash, zsh or fish.",
    ),
}


def operator_data_dir(ctx: click.Context) -> None:
    """The operator commands act on the data dir the client commands use: the backend reads it from
    SOCIALPUB_DATA_DIR, so an embedded profile's `data_dir` (chosen by --profile, SOCIALPUB_PROFILE or the
    default profile) is passed on there. Without it, `socialpub init` initialised the environment's data dir
    while `posts`, `accounts`… on the profile said it was not initialised. A remote profile changes nothing."""

    try:
        profile = resolve_profile(ctx.params.get("profile") or None)
    except ConfigError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(1)
    if profile.kind == "embedded" and profile.data_dir is not None:
        os.environ["SOCIALPUB_DATA_DIR"] = str(profile.data_dir)


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in COMMANDS:
            module, attr, _ = COMMANDS[name]
            if module == OPERATOR_GROUP[0]:
                startup_done()  # the backend's commands (serve, worker: long-running) with the default collector
                operator_data_dir(ctx)
                group: click.Group = getattr(importlib.import_module(module), OPERATOR_GROUP[1])
                return group.get_command(ctx, name)
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """With `--json` anywhere on the line, a usage error (bad option, bad value) is also JSON on stderr,
        `{"error": "usage_error", "message", "details": [], "status": 0}`, exit 2, as scripts expect."""
        argv = list(sys.argv[1:] if args is None else args)
        if not standalone_mode or "--json" not in argv:
            return super().main(argv, prog_name, complete_var, standalone_mode, **extra)
        try:
            rv = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as exc:
            body = {
                "error": "usage_error" if exc.exit_code == 2 else "error",
                "message": exc.format_message(),
                "details": [],
                "status": 0,
            }
            click.echo(json.dumps(body), err=True)
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo(
                json.dumps({"error": "aborted", "message": "aborted", "details": [], "status": 0}), err=True
            )
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in sorted(COMMANDS)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option("0.1.0", prog_name="socialpub")
@click.option(
    "--profile",
    metavar="NAME",
    default=None,
    help="Backend profile from config.yaml (default: $SOCIALPUB_PROFILE, $SOCIALPUB_API_URL, "
    "the default profile, else embedded).",
)
def cli(profile: str | None) -> None:
    """socialpub: publish one post to facebook, instagram, linkedin, tiktok and youtube, now or later.

    \b
    Examples:
      socialpub init --sandbox          # a workspace, an API key, sandbox accounts
      socialpub serve --port 8000       # the /v1 API, media host and worker
      socialpub posts create "Hello" --to instagram --to linkedin --media photo.jpg --wait
      socialpub --profile work posts list --status failed --json | jq -r '.[].id'
    """


def main() -> None:
    try:
        cli(prog_name="socialpub")
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
