"""`socialpub accounts`: connected accounts (their ids are the `channelId` of post targets)."""

from __future__ import annotations

from typing import Any

import click

from socialpub_tui.cli._common import (
    Output,
    api_command,
    get_client,
    platform_choice,
    short_time,
    time_options,
)

BEHAVIOURS = ["ok", "fail-permanent", "fail-retriable", "rate-limited", "slow", "flaky"]


@click.group("accounts")
def accounts_group() -> None:
    """Connected network accounts. An id here is the `channelId` in `posts create --to NETWORK:ID`.

    \b
    Examples:
      socialpub accounts list
      socialpub accounts add-sandbox linkedin --name "Acme Corp page" --behaviour fail-retriable
    """


@accounts_group.command("list")
@click.option("--platform", type=platform_choice(), default=None, help="Only this network.")
@time_options
@api_command
def accounts_list(platform: str | None, out: Output) -> None:
    """List connected accounts, each network's default marked.

    \b
    Example:
      socialpub accounts list --json | jq -r '.items[] | select(.platform=="linkedin") | .id'
    """
    listing = get_client(worker=False).list_accounts()
    if platform:
        listing.items = [a for a in listing.items if a.platform == platform]

    def human() -> None:
        out.table([(a.id, a.platform, a.name, a.kind, out.status(a.status), "*" if a.is_default else "",
                    a.behaviour or "-", short_time(a.connected_at), token_cell(a, out)) for a in listing.items],
                  ["ID", "NETWORK", "NAME", "KIND", "STATUS", "DEFAULT", "BEHAVIOUR", "CONNECTED", "TOKEN"],
                  empty="(no connected account: `socialpub accounts add-sandbox NETWORK --name NAME`)")
        for a in listing.items:
            if a.token_warning:
                out.line(out.style(f"⚠ {a.id} ({a.platform}, {a.name}): {a.token_warning}", fg="yellow", bold=True))
        out.line(f"{listing.used} of {listing.limit} account slots used by the plan.")

    out.emit(listing, human)


def token_cell(account: Any, out: Output) -> str:
    """The TOKEN column: `⚠ reconnect` / `⚠ expires in 3 days` when the server warns (tokenWarning, its whole
    line is printed under the table), else when the token expires (`-`: never)."""
    if account.token_warning:
        head = "reconnect" if account.status == "needs_reauth" else account.token_warning.split(":")[0]
        return out.style(f"⚠ {head.removeprefix('token ')}", fg="yellow", bold=True)
    return short_time(account.token_expires_at) if account.token_expires_at else "-"


@accounts_group.command("add-sandbox")
@click.argument("network", type=platform_choice())
@click.option("--name", required=True, help="Display name of the account.")
@click.option("--behaviour", type=click.Choice(BEHAVIOURS), default="ok", show_default=True,
              help="How the emulated network answers.")
@api_command
def accounts_add_sandbox(network: str, name: str, behaviour: str, out: Output) -> None:
    """Connect a sandbox account: an emulated network, for trying things out and tests.

    \b
    Example:
      socialpub accounts add-sandbox tiktok --name "Acme TikTok" --behaviour rate-limited --json | jq -r .id
    """
    acc = get_client(worker=False).add_sandbox_account(network, name, behaviour)
    out.emit(acc, f"Connected sandbox {acc.platform} account {acc.id} ({acc.name}, behaviour {acc.behaviour})"
                  + (", the network's default." if acc.is_default else "."))


@accounts_group.command("remove")
@click.argument("account_id")
@api_command
def accounts_remove(account_id: str, out: Output) -> None:
    """Disconnect an account (frees a plan slot; posts keep its name).

    \b
    Example:
      socialpub accounts remove acc_01j9…
    """
    acc = get_client(worker=False).remove_account(account_id)
    out.emit(acc, f"Disconnected {acc.platform} account {acc.id} ({acc.name}).")
