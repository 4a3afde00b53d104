"""`posts create` says when an idempotency key returned an existing post instead of creating one."""

from __future__ import annotations

import json

from click.testing import CliRunner

from socialpub_tui.cli.main import cli


def test_replay_is_reported(embedded):  # type: ignore[no-untyped-def]
    runner = CliRunner()
    first = runner.invoke(
        cli, ["posts", "create", "hello", "--to", "facebook", "--idempotency-key", "k-1", "--json"]
    )
    assert first.exit_code == 0, first.output
    again = runner.invoke(
        cli, ["posts", "create", "hello", "--to", "facebook", "--idempotency-key", "k-1", "--json"]
    )
    assert again.exit_code == 0
    assert json.loads(again.stdout)["id"] == json.loads(first.stdout)["id"]
    assert "was used already" in again.stderr
    assert "was used already" not in first.stderr
