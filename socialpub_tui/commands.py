"""The command palette (ctrl+p): every binding of the screen it was opened from, and of the app, by its
description — so every action a key does is also a command, and the palette never drifts from the footer."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode


class SocialpubCommands(Provider):
    """Commands from the active bindings: `Posts`, `New post`, `Cancel post`, … with their keys."""

    def _commands(self) -> Iterator[tuple[str, str, str, DOMNode]]:
        """(description, key, action, the node whose binding it is) for each binding with a description, the
        screen's before the app's."""
        seen: set[str] = set()
        for key, active in self.screen.active_bindings.items():
            binding = active.binding
            if not binding.description or not binding.show and binding.id is None:
                continue
            if binding.description in seen or not active.enabled:
                continue
            seen.add(binding.description)
            yield binding.description, self.app.get_key_display(binding) or key, binding.action, active.node

    @staticmethod
    async def _run(action: str, node: DOMNode) -> None:
        # in the binding's own namespace, as its key does: an app binding's action (`show_mode('calendar')`,
        # `quit`) is the app's, not the screen's
        await node.run_action(action)

    def _help(self, key: str, node: DOMNode) -> str:
        """The line beneath a command: its key (spelt out when the terminal's symbol may puzzle) and where it
        works — `key ⏎ (enter) · this screen`, `key f6 · everywhere`."""
        named = {"⏎": "enter", "^": "ctrl+", "del": "delete", "esc": "escape", "⇥": "tab"}
        words = key
        for symbol, name in named.items():
            words = words.replace(symbol, name)
        where = "everywhere" if node is self.app else "this screen"
        return f"key {key}" + (f" ({words})" if words != key else "") + f" · {where}"

    async def discover(self) -> Hits:
        for description, key, action, node in self._commands():
            yield DiscoveryHit(description, partial(self._run, action, node), help=self._help(key, node))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for description, key, action, node in self._commands():
            score = matcher.match(description)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(description),
                    partial(self._run, action, node),
                    text=description,
                    help=self._help(key, node),
                )
