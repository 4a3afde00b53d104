"""A yes/no question before something that cannot be undone (cancelling a post, discarding a draft)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from socialpub_tui.look import inert


class ConfirmScreen(ModalScreen[bool]):
    """Dismissed with True (`y`, the first button) or False (`n`, `escape`, the second button)."""

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    #confirm-box { width: 64; max-width: 90%; height: auto; border: thick $warning; background: $surface;
                   padding: 1 2; }
    #confirm-question { width: 100%; margin: 0 0 1 0; }
    #confirm-buttons { width: 100%; height: auto; align-horizontal: right; }
    #confirm-buttons Button { margin: 0 0 0 1; }
    """

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, question: str, *, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.question = question
        self.yes = yes
        self.no = no

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(
                inert(self.question), id="confirm-question", markup=False
            )  # it may name a post's text
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self.yes} (y)", id="confirm-yes", variant="error")
                yield Button(f"{self.no} (n)", id="confirm-no", variant="default")

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
