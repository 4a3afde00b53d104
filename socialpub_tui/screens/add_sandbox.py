"""`a` on the accounts screen: connect a sandbox account — an emulated network answering the way you pick
(`ok`, `fail-retriable`, `fail-permanent`, `rate-limited`, `slow`, `flaky`), to see how a post behaves when a
network fails without touching a real one."""

from __future__ import annotations

from typing import get_args

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select

from backend.schemas.accounts import SandboxBehaviour
from socialpub_tui.shell import shell

BEHAVIOURS: tuple[str, ...] = get_args(SandboxBehaviour)


class AddSandboxScreen(ModalScreen[tuple[str, str, str] | None]):
    """Dismissed with (platform, name, behaviour), or None (`escape`)."""

    CSS_PATH = "add_sandbox.tcss"
    BINDINGS = [
        Binding("escape", "dismiss_none", "Cancel", id="add_sandbox.cancel"),
        Binding("ctrl+s", "submit", "Connect", id="add_sandbox.connect", priority=True),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="add-sandbox-box"):
            yield Label("Connect a sandbox account", id="add-sandbox-title")
            networks = shell(self).networks  # the server's (plugins too)
            yield Select(
                [
                    (Text.assemble((n.badge, f"bold {n.colour}"), f" {n.name}"), n.name)
                    for n in networks
                    if n.sandbox
                ],
                prompt="network",
                id="add-sandbox-network",
            )
            yield Input(placeholder="display name, e.g. Flaky Corp", id="add-sandbox-name", max_length=200)
            yield Select(
                [(f"answers: {b}", b) for b in BEHAVIOURS],
                value="ok",
                allow_blank=False,
                id="add-sandbox-behaviour",
            )
            yield Label("", id="add-sandbox-problem")
            with Horizontal(id="add-sandbox-buttons"):
                yield Button("Connect (ctrl+s)", id="add-sandbox-ok", variant="primary")
                yield Button("Cancel (esc)", id="add-sandbox-cancel")

    def on_mount(self) -> None:
        self.query_one("#add-sandbox-network", Select).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "add-sandbox-ok":
            self.action_submit()
        else:
            self.dismiss(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_submit()

    def action_dismiss_none(self) -> None:
        self.dismiss(None)

    def action_submit(self) -> None:
        network = self.query_one("#add-sandbox-network", Select).value
        name = self.query_one("#add-sandbox-name", Input).value.strip()
        behaviour = self.query_one("#add-sandbox-behaviour", Select).value
        problem = self.query_one("#add-sandbox-problem", Label)
        if network is Select.NULL:
            problem.update("pick a network")
            return
        if not name:
            problem.update("give the account a name")
            return
        self.dismiss((str(network), name, str(behaviour)))
