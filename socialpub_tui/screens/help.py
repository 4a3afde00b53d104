"""`?` / `f1`: the keys of the screen underneath and of the app, with what each does."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static


class HelpScreen(ModalScreen[None]):
    """The keys, as the footer and the palette know them. `escape` closes it."""

    BINDINGS = [Binding("escape,q,f1,question_mark", "dismiss", "Close help", id="help.close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static(
                "Keys — ctrl+p opens the command palette, ctrl+q quits from anywhere", id="help-title"
            )
            yield DataTable(id="help-keys", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("key", "what it does", "where")
        # The screen below is the one the user asked help for: its bindings, then the app's.
        below = self.app.screen_stack[-2] if len(self.app.screen_stack) > 1 else self.app.screen
        seen: set[tuple[str, str]] = set()
        rows: list[tuple[int, str, str, str]] = []
        for key, active in below.active_bindings.items():
            binding = active.binding
            if not binding.description:
                continue
            where = (
                "everywhere" if active.node is self.app else type(active.node).__name__.removesuffix("Screen")
            )
            shown = self.app.get_key_display(binding) or key
            if (binding.description, where) in seen:
                continue
            seen.add((binding.description, where))
            # The screen's own actions first, then the app's, then the focused widget's (cursor keys and such).
            rank = 0 if active.node is below else 1 if active.node is self.app else 2
            rows.append((rank, shown, binding.description, where))
        for _, shown, description, where in sorted(rows, key=lambda row: row[0]):
            table.add_row(shown, description, where)
        table.focus()
