"""Dropdown: a Select whose open list stops at its ends.

Textual's Select list wraps around: `down` on the last option goes to the first, so "down down enter" from the
first of two options (a generation's Type: image, video) chose the first again (issue 33). Here `down` on the last
option and `up` on the first stay where they are; closed, `up` and `down` open the list as before, with an option
highlighted (the current one, else the first), so the first `down` moves."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import OptionList, Select


class Dropdown(Select):  # type: ignore[type-arg]  # a Select of any option value
    BINDINGS = [
        Binding("down", "step(1)", "Next option", show=False, priority=True),
        Binding("up", "step(-1)", "Previous option", show=False, priority=True),
    ]

    def action_step(self, by: int) -> None:
        if not self.expanded:
            self.action_show_overlay()
            return
        options = self.query_one(OptionList)
        current = options.highlighted
        if current is None:
            options.highlighted = 0 if options.option_count else None
            return
        target = current + by
        while 0 <= target < options.option_count and options.get_option_at_index(target).disabled:
            target += by
        if 0 <= target < options.option_count:
            options.highlighted = target
            options.scroll_to_highlight()
