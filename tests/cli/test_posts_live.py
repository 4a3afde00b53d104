"""`posts create/edit --wait` off a terminal: one line per target change."""

from __future__ import annotations

from typing import Any

import pytest

from socialpub_tui.cli._common import Output
from socialpub_tui.cli.posts import LiveView
from tests.client.test_mock import post_json, target


def lines_of(view: LiveView, post: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> list[str]:
    from backend.schemas.posts import PostOut

    view(PostOut.model_validate(post))
    return capsys.readouterr().out.splitlines()


def test_a_waiting_target_shows_why_without_a_type_it_does_not_have(
    capsys: pytest.CaptureFixture[str],
) -> None:
    view = LiveView(Output(as_json=False))
    waiting = target("linkedin") | {"failReason": "LinkedIn is temporarily unavailable; it will be retried"}
    (line,) = lines_of(view, post_json(targets=[waiting]), capsys)
    assert (
        line
        == "post_1 linkedin linkedin page: pending (LinkedIn is temporarily unavailable; it will be retried)"
    )
    failed = target("linkedin", "failed", fail_type="permanent")
    (line,) = lines_of(view, post_json(targets=[failed]), capsys)
    assert line.endswith(": failed (permanent: boom)") and "None" not in line
