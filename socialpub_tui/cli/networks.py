"""`socialpub networks`: the networks the backend publishes to (GET /v1/networks, a socialpub extension) — the
built-ins and any plugin network the server has — with their limits and options."""

from __future__ import annotations

from typing import Any

import click

from socialpub_tui.cli._common import Output, api_command, get_client


def _colour(value: str) -> Any:
    """A colour click can show: #rrggbb as (r, g, b), a name as is (None for another form)."""
    if value.startswith("#") and len(value) == 7:
        try:
            return tuple(int(value[i : i + 2], 16) for i in (1, 3, 5))
        except ValueError:
            return None
    return value if value.isalpha() else None


def _limits(n: Any) -> str:
    lim = n.limits
    unit = "" if lim.text_unit == "characters" else f" {lim.text_unit}"
    media = f"{lim.min_media}-{lim.max_media} media" if lim.min_media else f"≤{lim.max_media} media"
    extra = [w for w, on in (("video", lim.video_required), ("first media", lim.first_media_only)) if on]
    return f"{lim.max_text:,}{unit} · {media}" + (f" · {', '.join(extra)}" if extra else "")


@click.command("networks")
@api_command
def networks_cmd(out: Output) -> None:
    """List the networks the backend publishes to: name (a target of `posts create --to`), badge, the text's
    bound and how it is counted, media, and the keys of its `--option NETWORK.KEY=VALUE`.

    \b
    Examples:
      socialpub networks
      socialpub networks --json | jq -r '.items[].name'
    """
    networks = get_client(worker=False).networks()
    rows = [
        (
            n.name,
            out.style(n.badge, fg=_colour(n.colour), bold=True),
            n.label,
            _limits(n),
            ", ".join((n.options or {}).get("properties") or {}) or "-",
            "yes" if n.sandbox else "no",
        )
        for n in networks
    ]
    out.emit(
        {"items": [n.model_dump(mode="json", by_alias=True) for n in networks]},
        lambda: out.table(rows, ["NAME", "BADGE", "LABEL", "LIMITS", "OPTIONS", "SANDBOX"]),
    )
