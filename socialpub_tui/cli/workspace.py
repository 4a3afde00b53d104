"""`socialpub workspace`: show and edit the workspace (brand profile, plan, credits)."""

from __future__ import annotations

from typing import Any

import click

from socialpub_tui.cli._common import Output, api_command, get_client, short_time, time_options


@click.group("workspace")
def workspace_group() -> None:
    """The workspace: identity, brand profile, plan and credits.

    \b
    Examples:
      socialpub workspace show
      socialpub workspace edit --name "Acme" --tone friendly --topic coffee --topic cycling
    """


def _show(out: Output, ws: Any) -> None:
    out.fields(
        [
            ("id", ws.id),
            ("name", ws.name),
            ("description", ws.description or "-"),
            ("currency", ws.currency),
            ("logo", ws.logo_url or "-"),
            (
                "plan",
                f"{ws.plan.name} (subscribed {ws.plan.subscribed}, status {ws.plan.status or '-'}, "
                f"period end {short_time(ws.plan.period_end)})",
            ),
            (
                "credits",
                f"{ws.credits.balance} (monthly {ws.plan.monthly_credits}; image {ws.credits.cost.get('IMAGE')}, "
                f"video 5 s {ws.credits.cost.get('VIDEO')})",
            ),
            ("free posts left", ws.free_publications_left),
            ("audience", ws.brand.target_audience or "-"),
            ("value prop", ws.brand.unique_value_prop or "-"),
            ("voice tone", ws.brand.voice_tone or "-"),
            ("topics", ws.brand.content_topics or "-"),
            ("colors", ws.brand.colors or "-"),
            ("created", short_time(ws.created_at)),
        ]
    )


@workspace_group.command("show")
@time_options
@api_command
def workspace_show(out: Output) -> None:
    """Show the workspace, its plan and credit balance.

    \b
    Example:
      socialpub workspace show --json | jq .credits.balance
    """
    ws = get_client(worker=False).get_workspace()
    out.emit(ws, lambda: _show(out, ws))


@workspace_group.command("edit")
@click.option("--name", default=None, help="Workspace name.")
@click.option("--description", default=None, help="Description.")
@click.option("--currency", default=None, help="Currency code, e.g. EUR.")
@click.option("--logo-url", default=None, help="Logo URL.")
@click.option("--audience", default=None, help="Brand: target audience.")
@click.option("--value-prop", default=None, help="Brand: unique value proposition.")
@click.option("--tone", default=None, help="Brand: voice tone label.")
@click.option("--topic", "topics", multiple=True, help="Brand: a content topic (repeat; replaces the list).")
@click.option("--color", "colors", multiple=True, help="Brand: a colour (repeat; replaces the list).")
@time_options
@api_command
def workspace_edit(
    name: str | None,
    description: str | None,
    currency: str | None,
    logo_url: str | None,
    audience: str | None,
    value_prop: str | None,
    tone: str | None,
    topics: tuple[str, ...],
    colors: tuple[str, ...],
    out: Output,
) -> None:
    """Change workspace fields; only the options given are sent. Needs an owner session on a server.

    \b
    Example:
      socialpub workspace edit --description "Coffee for cyclists" --audience "urban cyclists" --color "#0a7"
    """
    changes: dict[str, Any] = {
        k: v
        for k, v in {
            "name": name,
            "description": description,
            "currency": currency,
            "logo_url": logo_url,
        }.items()
        if v is not None
    }
    brand = {
        k: v
        for k, v in {
            "target_audience": audience,
            "unique_value_prop": value_prop,
            "voice_tone": tone,
            "content_topics": list(topics) or None,
            "colors": list(colors) or None,
        }.items()
        if v is not None
    }
    if brand:
        changes["brand"] = brand
    if not changes:
        raise click.UsageError("nothing to change: give at least one option (see --help)")
    ws = get_client(worker=False).edit_workspace(changes)
    out.emit(ws, lambda: (out.line("Workspace updated."), _show(out, ws)))
