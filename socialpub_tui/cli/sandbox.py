"""`socialpub sandbox`: what the sandbox networks published (the embedded default's emulated networks)."""

from __future__ import annotations

import click

from backend.operator.sandbox_serve import sandbox_serve_cmd
from socialpub_tui.cli._common import (
    Output,
    api_command,
    clip,
    get_client,
    platform_choice,
    short_time,
    time_options,
)


@click.group("sandbox")
def sandbox_group() -> None:
    """The sandbox networks: see what they "published"; serve one over HTTP.

    \b
    Example:
      socialpub sandbox published --platform instagram
      socialpub sandbox serve tiktok --port 8401
    """


sandbox_group.add_command(sandbox_serve_cmd)  # the operator's code (backend.operator), mounted here


@sandbox_group.command("published")
@click.option("--platform", type=platform_choice(), default=None, help="Only this network.")
@click.option("--account", "account_id", default=None, help="Only this account id.")
@click.option(
    "--limit", type=click.IntRange(1, 1000), default=50, show_default=True, help="At most this many."
)
@time_options
@api_command
def sandbox_published(platform: str | None, account_id: str | None, limit: int, out: Output) -> None:
    """List what the sandbox networks published, newest first.

    \b
    Example:
      socialpub sandbox published --json | jq -r '.items[] | [.platform, .postUrl] | @tsv'
    """
    listing = get_client(worker=False).sandbox_published(
        platform=platform, account_id=account_id, limit=limit
    )
    items = listing.items

    def human() -> None:
        out.table(
            [
                (
                    i.platform,
                    i.account_name or i.account_id,
                    i.kind,
                    i.status,
                    short_time(i.created_at),
                    clip(i.title or i.text or "", 40),
                    i.url or "",
                )
                for i in items
            ],
            ["NETWORK", "ACCOUNT", "KIND", "STATUS", "WHEN", "TEXT", "URL"],
            empty="(nothing published)",
        )

    out.emit(listing, human)
