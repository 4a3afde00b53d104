"""Text from users and networks is inert in the terminal (issue 30 item 5): a post whose text holds ESC [31m, BEL,
OSC 52 (clipboard write), OSC 0 (window title), C1 controls, DEL or CR, and an account named so, are printed by
`posts list` and `posts show` with those characters escaped — on a terminal (a pty, colours on) and in a pipe —
while `--json` stays exact JSON (parsed back to the very text) without a raw control character."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import invoke

PAYLOAD = (
    "Launch \x1b[31mred\x1b[0m \x07bell \x1b]52;c;SGVsbG8=\x07 \x1b]0;pwned title\x1b\\ "
    "\x9b2J \x9d0;c1 title\x9c del\x7f over\rwrite \u202eevil"
)
NAME = "Acme \x1b]0;name title\x07\x1b[5m"
# what must never reach the terminal raw: each attack's first bytes
RAW = [
    b"\x1b[31mred",
    b"\x1b]",
    b"\x07",
    b"\xc2\x9b",
    b"\xc2\x9d",
    b"\x7f",
    b"over\rwrite",
    b"\xe2\x80\xae",
    b"\x1b[5m",
]
SHOWN = [
    b"\\x1b[31mred",
    b"\\x07bell",
    b"\\x1b]52;c;SGVsbG8=\\x07",
    b"\\x9b2J",
    b"over\\rwrite",
    b"\\u202eevil",
]


@pytest.fixture
def hostile_post(embedded) -> str:  # type: ignore[no-untyped-def]
    assert invoke("admin", "plan", "GROWTH").code == 0  # room for one more account
    added = invoke("accounts", "add-sandbox", "linkedin", "--name", NAME, "--json")
    assert added.code == 0, added.err
    account = added.json()["id"]
    created = invoke(
        "posts",
        "create",
        PAYLOAD + "\nsecond line",
        "--to",
        f"linkedin:{account}",
        "--at",
        "2099-01-01 09:00",
        "--json",
    )
    assert created.code == 0, created.err
    return created.json()["id"]  # type: ignore[no-any-return]


def _command(*args: str) -> list[str]:
    return [str(Path(sys.executable).with_name("socialpub")), *args]


def _piped(*args: str) -> bytes:
    done = subprocess.run(_command(*args), capture_output=True, timeout=120, env=os.environ.copy())
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    return done.stdout + done.stderr


def _on_a_pty(*args: str) -> bytes:
    """What a terminal receives: stdout and stderr on a pty (so colours and tables are on)."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | {"TERM": "xterm-256color"}
    proc = subprocess.Popen(_command(*args), stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the other side is closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(120) == 0, b"".join(chunks).decode(errors="replace")[-2000:]
    return b"".join(chunks)


def _assert_inert(out: bytes, *, shown: list[bytes]) -> None:
    for raw in RAW:
        assert raw not in out, (raw, out[:3000])
    for visible in shown:
        assert visible in out, (visible, out[:3000])


@pytest.mark.parametrize("run", [_piped, _on_a_pty], ids=["piped", "pty"])
def test_posts_list_and_show_print_the_controls_escaped(hostile_post, run):
    listed = run("posts", "list")
    _assert_inert(listed, shown=[b"\\x1b[31mred"])  # the table's text column: the first 40 characters
    shown = run("posts", "show", hostile_post)
    _assert_inert(shown, shown=[*SHOWN[:3], b"\\x1b]0;name title\\x07"])  # text (first 100) and account name
    accounts = run("accounts", "list")
    _assert_inert(accounts, shown=[b"Acme \\x1b]0;name title\\x07"])


def test_on_a_pty_our_own_colours_stay(hostile_post):
    out = _on_a_pty("posts", "show", hostile_post)
    assert b"\x1b[34mscheduled" in out or b"\x1b[34m" in out  # the status in its colour: ours, not escaped


def test_json_output_is_exact_json_with_no_raw_control_character(hostile_post):
    out = _piped("posts", "show", hostile_post, "--json")
    for raw in RAW:
        assert raw not in out
    assert json.loads(out)["content"] == PAYLOAD + "\nsecond line"
    listed = json.loads(_piped("posts", "list", "--json"))
    assert listed[0]["content"] == PAYLOAD + "\nsecond line"


def test_an_error_echoing_what_was_sent_is_inert(capsys):
    from socialpub_tui.cli._common import Output
    from socialpub_tui.client.errors import ApiError

    err = ApiError(
        400, "invalid_targets", f"channelId {NAME} is unknown", [{"channelId": NAME, "error": "x\x9b2J"}]
    )
    with pytest.raises(SystemExit):
        Output(False).fail(err)
    printed = capsys.readouterr().err
    assert "\x1b" not in printed and "\x07" not in printed and "\x9b" not in printed
    assert "\\x1b]0;name title\\x07" in printed and "x\\x9b2J" in printed
    with pytest.raises(SystemExit):
        Output(True).fail(err)
    printed = capsys.readouterr().err
    assert "\x9b" not in printed and json.loads(printed)["details"][0]["error"] == "x\x9b2J"
