"""Accounts (scaffold: replaced by the real screen)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Header, Static


class AccountsScreen(Screen[None]):
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Accounts", id="accounts-body")
        yield Footer()
