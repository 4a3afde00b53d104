"""`socialpub completion SHELL`: print the shell completion script (bash, zsh, fish)."""

from __future__ import annotations

import click

from socialpub_tui.cli.main import cli


@click.command("completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion_cmd(shell: str) -> None:
    """Print the completion script for SHELL; load it from your shell's startup file.

    \b
    Examples:
      socialpub completion bash > ~/.local/share/bash-completion/completions/socialpub
      socialpub completion zsh > "${fpath[1]}/_socialpub"
      socialpub completion fish > ~/.config/fish/completions/socialpub.fish
    """
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    assert cls is not None
    click.echo(cls(cli, {}, "socialpub", "_SOCIALPUB_COMPLETE").source())
