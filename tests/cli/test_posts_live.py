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


LOCK = {"code": "youtube_private_lock", "message": "YouTube locked the video private: pass the audit"}


def test_a_warning_shows_once_beside_the_targets_success(capsys: pytest.CaptureFixture[str]) -> None:
    view = LiveView(Output(as_json=False))
    done = target("youtube", "succeeded") | {"postUrl": "https://youtu.be/v1", "warnings": [LOCK]}
    assert lines_of(view, post_json(targets=[done]), capsys) == [
        "post_1 youtube youtube page: succeeded https://youtu.be/v1",
        "post_1 youtube youtube page: warning youtube_private_lock: YouTube locked the video private: pass the audit",
    ]
    assert lines_of(view, post_json(targets=[done]), capsys) == []  # said once


def test_show_prints_each_warning_in_full_and_marks_the_row(capsys: pytest.CaptureFixture[str]) -> None:
    from backend.schemas.posts import PostOut
    from socialpub_tui.cli.posts import show_post

    done = target("youtube", "succeeded") | {"postUrl": "https://youtu.be/v1", "warnings": [LOCK]}
    show_post(Output(as_json=False), PostOut.model_validate(post_json(targets=[done, target("facebook")])))
    out = capsys.readouterr().out
    assert "[warning: youtube_private_lock]" in out
    assert (
        "youtube (youtube page) warning youtube_private_lock: YouTube locked the video private: pass the audit"
        in out
    )
    assert out.count("warning") == 2  # the facebook target has none
