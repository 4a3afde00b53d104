"""The network options of `posts create` and `posts edit`: `--option NETWORK.KEY=VALUE` for any network's option
(`options.NETWORK.KEY` of POST /v1/posts; GET /v1/networks gives each network's schema, plugins' included), and
the named flags the CLI had before networks were packages, kept as shorthands for the same options (docs/cli.md):
`--tiktok-mode`, `--tiktok-privacy`, `--youtube-privacy`, `--youtube-title`, `--youtube-tag`, `--synthetic`. The
server checks the values (400 `validation_error` naming the option)."""

from __future__ import annotations

import functools
import json
from typing import Any

import click

# named flag (its parameter) -> (network, option key, how the flag's value becomes the option's)
SHORTHANDS: dict[str, tuple[str, str, Any]] = {
    "tiktok_mode": ("tiktok", "postMode", lambda v: "MEDIA_UPLOAD" if v == "draft" else "DIRECT_POST"),
    "tiktok_privacy": ("tiktok", "privacyLevel", str),
    "youtube_privacy": ("youtube", "privacyStatus", str),
    "youtube_title": ("youtube", "title", str),
    "youtube_tags": ("youtube", "tags", list),
    "synthetic": ("youtube", "containsSyntheticMedia", bool),
}


def flag_for(network: str, key: str) -> str:
    """The flag that sets options.NETWORK.KEY: its named shorthand, else `--option NETWORK.KEY=VALUE`."""
    for param, (net, option, _convert) in SHORTHANDS.items():
        if (net, option) == (network, key):
            return "--" + param.replace("_", "-")
    return f"--option {network}.{key}=VALUE"


def parse_option(text: str) -> tuple[str, str, Any]:
    """`NETWORK.KEY=VALUE` -> (network, key, value): VALUE read as JSON when it is JSON, else as text."""
    name, sep, raw = text.partition("=")
    network, dot, key = name.strip().partition(".")
    if not sep or not dot or not network or not key:
        raise click.BadParameter(f"{text!r}: expected NETWORK.KEY=VALUE, e.g. tiktok.postMode=MEDIA_UPLOAD")
    try:
        value = json.loads(raw)
    except ValueError:
        value = raw
    return network.strip().lower(), key.strip(), value


def build_options(named: dict[str, Any], generic: tuple[str, ...]) -> dict[str, Any] | None:
    """`options` of the request: the named flags' (unset ones left out), then every `--option` (the last wins)."""
    options: dict[str, dict[str, Any]] = {}
    for param, value in named.items():
        if value is None or value == ():
            continue
        network, key, convert = SHORTHANDS[param]
        options.setdefault(network, {})[key] = convert(value)
    for text in generic:
        network, key, value = parse_option(text)
        options.setdefault(network, {})[key] = value
    return options or None


def option_flags(fn: Any) -> Any:
    """Add `--option` and the named flags to a command; it receives them as one `options` argument (None when
    none is given)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        named = {param: kwargs.pop(param) for param in SHORTHANDS}
        kwargs["options"] = build_options(named, kwargs.pop("option_values"))
        return fn(*args, **kwargs)

    for deco in reversed(
        [
            click.option(
                "--option",
                "option_values",
                multiple=True,
                metavar="NETWORK.KEY=VALUE",
                help="A network's option (repeat): options.NETWORK.KEY of POST /v1/posts, VALUE read as JSON when "
                'it is JSON (true, 3, ["a", "b"]), else as text; `socialpub networks` lists each network\'s.',
            ),
            click.option(
                "--tiktok-mode",
                type=click.Choice(["direct", "draft"]),
                default=None,
                help="TikTok: publish directly (default) or deliver a draft to the creator's inbox.",
            ),
            click.option(
                "--tiktok-privacy",
                default=None,
                type=click.Choice(
                    ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"]
                ),
                help="TikTok: who can see a direct post, one of the account's levels — required (TikTok makes "
                "the creator choose, nothing pre-selected), asked on a terminal among the account's options.",
            ),
            click.option(
                "--youtube-privacy",
                type=click.Choice(["public", "unlisted", "private"]),
                default=None,
                help="YouTube privacy status (default public).",
            ),
            click.option(
                "--youtube-title", default=None, help="YouTube title (default: the first line of the text)."
            ),
            click.option("--youtube-tag", "youtube_tags", multiple=True, help="A YouTube tag (repeat)."),
            click.option(
                "--synthetic/--no-synthetic",
                "synthetic",
                default=None,
                help="YouTube: declare realistic AI-generated content.",
            ),
        ]
    ):
        wrapper = deco(wrapper)
    return wrapper
