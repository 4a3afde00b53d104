"""`?` / `f1`: the keys of the screen underneath and of the app, with what each does.

Only socialpub's own keys are listed — the bindings with an id, as the footer and the palette know them — and
where each works: "this screen", "the list" (the focused list's own keys, with the arrows that choose a row), or
"everywhere". Textual's own (focus next, copy the selection, a table's sideways keys) are not socialpub's to
explain. A key a screen binds itself shows what it does there (`n` on Generations makes a generation), not the
app's meaning of the same key."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from socialpub_tui.widgets.tables import RowTable


class HelpScreen(ModalScreen[None]):
    """The keys, as the footer and the palette know them. `escape` closes it."""

    BINDINGS = [Binding("escape,q,f1,question_mark", "dismiss", "Close help", id="help.close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static(
                "Keys — ctrl+p opens the command palette, ctrl+q quits from anywhere", id="help-title"
            )
            yield RowTable(id="help-keys", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("key", "what it does", "where")
        for key, description, where in keys_of(
            self.app, self.app.screen_stack[-2] if len(self.app.screen_stack) > 1 else self.app.screen
        ):
            table.add_row(key, description, where)
        table.focus()


def keys_of(app: object, below: object) -> list[tuple[str, str, str]]:
    """(key, what it does, where) for the screen `below`: its own keys, then the focused list's, then the app's."""
    rows: list[tuple[int, str, str, str]] = []
    seen: set[str] = set()
    focused = getattr(below, "focused", None)
    if isinstance(focused, DataTable):
        rows.append((1, "↑ ↓", "Choose a row", "the list"))
        rows.append((1, "pgup pgdn", "A page up or down", "the list"))
    for key, active in below.active_bindings.items():  # type: ignore[attr-defined]  # below: the screen under the help (a Screen, typed as the stack's entry)
        binding = active.binding
        if not binding.description or binding.id is None or binding.description in seen:
            continue  # (a key that says why its action is not available now: the same description, once)
        seen.add(binding.description)
        if active.node is app:
            rank, where = 2, "everywhere"
        elif active.node is below:
            rank, where = 0, "this screen"
        else:
            rank, where = 1, "the list" if isinstance(active.node, DataTable) else "the focused field"
        shown = app.get_key_display(binding) or key  # type: ignore[attr-defined]  # app: Textual's App, typed here as the DOM node's
        rows.append((rank, shown, binding.description, where))
    return [(shown, description, where) for _, shown, description, where in sorted(rows, key=lambda r: r[0])]
