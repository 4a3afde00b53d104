"""`socialpub keys`: create, list, revoke, purge API keys (owner session: `socialpub login`; embedded: none)."""

from __future__ import annotations

import click

from socialpub_tui.cli._common import Output, api_command, get_client, short_time, time_options
from socialpub_tui.look import inert

SCOPES = [
    "media:write",
    "publish:posts",
    "publish:tiktok",
    "accounts:read",
    "workspace:read",
    "generations:write",
    "videos:read",
    "webhooks:read",
    "webhooks:write",
]


@click.group("keys")
def keys_group() -> None:
    """API keys of the workspace. Needs an owner session (`socialpub login`) on a server; none embedded.

    \b
    Examples:
      socialpub keys create --name ci --expires 30 --scope publish:posts --scope media:write
      socialpub keys list
      socialpub keys revoke key_01h…  &&  socialpub keys purge key_01h…
    """


def _display_prefix(prefix: str) -> str:
    return prefix + "…"


@keys_group.command("create")
@click.option("--name", default="API key", show_default=True, help="Label of the key.")
@click.option(
    "--expires",
    "expires",
    type=click.Choice(["30", "90", "365", "never"]),
    default="90",
    show_default=True,
    help="Lifetime in days, or never.",
)
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    type=click.Choice(SCOPES),
    help="A scope to grant (repeat); all scopes when omitted.",
)
@time_options
@api_command
def keys_create(name: str, expires: str, scopes: tuple[str, ...], out: Output) -> None:
    """Create an API key. The full key is printed once, here: store it now.

    \b
    Example:
      export SOCIALPUB_API_KEY=$(socialpub keys create --name cron --json | jq -r .key)
    """
    client = get_client(worker=False)
    created = client.create_key(name, None if expires == "never" else int(expires), list(scopes) or None)

    def human() -> None:
        out.line(f"Created API key {created.id} ({inert(created.name)})")
        out.line(f"  key      {created.key}")
        out.line("           shown once: store it now; it cannot be displayed again")
        out.line(f"  scopes   {', '.join(created.scopes)}")
        out.line(f"  expires  {short_time(created.expires_at) if created.expires_at else 'never'}")

    out.emit(created, human)


@keys_group.command("list")
@click.option("--all", "show_all", is_flag=True, help="Include revoked and expired keys.")
@time_options
@api_command
def keys_list(show_all: bool, out: Output) -> None:
    """List API keys (prefix only: the full key is never shown again).

    \b
    Example:
      socialpub keys list --json | jq -r '.[] | select(.state=="active") | .id'
    """
    keys = get_client(worker=False).list_keys()
    shown = keys if show_all or out.json else [k for k in keys if k.state == "active"]
    out.emit(
        shown,
        lambda: out.table(
            [
                (
                    k.id,
                    k.name,
                    _display_prefix(k.key_prefix),
                    out.status(k.state),
                    short_time(k.expires_at),
                    short_time(k.last_used_at),
                    len(k.scopes),
                )
                for k in shown
            ],
            ["ID", "NAME", "KEY", "STATE", "EXPIRES", "LAST USED", "SCOPES"],
            empty="(no active key)",
        ),
    )


@keys_group.command("revoke")
@click.argument("key_id")
@api_command
def keys_revoke(key_id: str, out: Output) -> None:
    """Revoke a key at once (irreversible); it stays listed until purged.

    \b
    Example:
      socialpub keys revoke key_01j9x7…
    """
    res = get_client(worker=False).revoke_key(key_id)
    out.emit(res, f"Revoked {res.id}: requests with it now get 401 api_key_revoked.")


@keys_group.command("purge")
@click.argument("key_id")
@api_command
def keys_purge(key_id: str, out: Output) -> None:
    """Erase a key that can no longer serve (revoke it first).

    \b
    Example:
      socialpub keys revoke key_01j9x7… && socialpub keys purge key_01j9x7…
    """
    res = get_client(worker=False).purge_key(key_id)
    out.emit(res, f"Purged {res.id}.")
