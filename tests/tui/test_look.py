"""socialpub_tui.look: the one function that makes user and network text inert on a terminal (issue 30 item 5)."""

from __future__ import annotations

import json

from rich.text import Text
from textual.content import Content

from socialpub_tui.look import inert, json_text

ATTACKS = (
    "\x1b[31mred",  # SGR: colours the terminal
    "\x07",  # BEL
    "\x1b]52;c;SGVsbG8=\x07",  # OSC 52: writes the clipboard
    "\x1b]0;title\x1b\\",  # OSC 0: the window title, ended by ST
    "\x9b31m",  # C1 CSI
    "\x9d0;t\x9c",  # C1 OSC … ST
    "\x7f",  # DEL
    "over\rwrite",  # CR: prints over the line
    "\x08\x08",  # BS
    "\u202etxt.exe",  # right-to-left override
)


def _controls(text: str) -> list[str]:
    return [
        c for c in text if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in "\u202a\u202b\u202c\u202d\u202e"
    ]


def test_every_control_character_is_shown_as_its_escape():
    for attack in ATTACKS:
        shown = inert(f"a{attack}b")
        assert _controls(shown) == [], repr(shown)
    assert inert("\x1b]52;c;SGVsbG8=\x07") == "\\x1b]52;c;SGVsbG8=\\x07"
    assert inert("a\rb\x7f\x9b\u202e") == "a\\rb\\x7f\\x9b\\u202e"
    assert inert("plain text, émoji 🎉, 日本語") == "plain text, émoji 🎉, 日本語"
    assert inert(None) == "None" and inert(42) == "42"


def test_line_breaks_and_tabs_are_kept_only_where_the_layout_takes_them():
    text = "one\ttwo\nthree\x1b[0m"
    assert inert(text) == "one\\ttwo\\nthree\\x1b[0m"
    assert inert(text, newlines=True, tabs=True) == "one\ttwo\nthree\\x1b[0m"
    assert inert(text, newlines=True) == "one\\ttwo\nthree\\x1b[0m"


def test_markup_is_escaped_for_widgets_that_read_it():
    for text in ("[bold]x[/]", "[@click=app.quit]q[/]", "[$accent]hi", "[link=https://a]x[/]", "a[1]b"):
        shown = inert(text, markup=True)
        assert (
            Content.from_markup(shown).plain == text
        )  # Textual's markup: shown as written, no style or action
        assert Text.from_markup(shown).plain == text  # Rich's (DataTable cells)
        assert Content.from_markup(shown).spans == [] and Text.from_markup(shown).spans == []


def test_json_output_is_exact_and_inert():
    """`--json`: JSON escapes C0 itself; DEL, C1 and the bidirectional controls, which json.dumps would write raw
    (ensure_ascii=False), are escaped too: the document parses back to exactly the same text."""
    data = {"content": "".join(ATTACKS) + " émoji 🎉", "n": 1}
    raw = json.dumps(data, ensure_ascii=False)
    assert "\x9b" in raw and "\x7f" in raw  # what json.dumps alone leaves raw
    text = json_text(data)
    assert _controls(text) == []
    assert json.loads(text) == data
    assert "🎉" in text  # non-ASCII text stays readable
