"""The footer every screen shows: Textual's, rebuilt only when what it shows changes.

Textual's Footer rebuilds all its keys (one widget each, styled anew) every time the screen's bindings may have
changed — the focus moved, a screen was pushed or resumed, `refresh_bindings()` — whether or not the keys it shows
did. While the posts screen comes up that is four rebuilds of 13 keys: ~95 ms of the launch, most of it for
nothing. This one compares what it would show (each shown binding: key, action, description, enabled, tooltip,
group; the command palette's) with what it shows, and rebuilds only on a difference.

A screen whose keys change as soon as its first data comes (the posts screen: `Open` turns on with the first
post) builds it with `wait_s`: no keys until it calls `show_keys()` (or `wait_s` has passed: a slow server), so
that the footer is built once, with the keys as they stand (~50-70 ms a build of 13 keys).
"""

from __future__ import annotations

from typing import Any

from textual.widgets import Footer as TextualFooter


class Footer(TextualFooter):
    def __init__(self, *, wait_s: float | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._shown: tuple[Any, ...] | None = None
        self._wait_s = wait_s
        self._waiting = wait_s is not None

    @property
    def waiting(self) -> bool:
        """True until the keys are shown (`show_keys`, or `wait_s` passed)."""
        return self._waiting

    def on_mount(self) -> None:
        if self._wait_s is not None:
            self.set_timer(self._wait_s, self.show_keys)

    def show_keys(self) -> None:
        """Stop waiting (see `wait_s`): the keys are built now (once; later calls do nothing)."""
        if self._waiting:
            self._waiting = False
            self.call_later(self.recompose)

    def _what_it_shows(self) -> tuple[Any, ...]:
        shown = tuple(
            (
                binding.key,
                binding.action,
                binding.description,
                enabled,
                tooltip,
                binding.group.description if binding.group is not None else None,
            )
            for (_, binding, enabled, tooltip) in self.screen.active_bindings.values()
            if binding.show
        )
        palette = self.app.COMMAND_PALETTE_BINDING if self.show_command_palette else None
        return shown, palette, self.app.ENABLE_COMMAND_PALETTE, self.combine_groups

    def _fits(self) -> bool:
        """Whether the keys shown fit the terminal's width in the roomy style (a key and its description take
        their lengths and 3 cells; the palette's key 12): if not, the compact style (a cell less each)."""
        app = self.app
        need = sum(
            len(app.get_key_display(binding)) + len(binding.description) + 3
            for (_, binding, _enabled, _tooltip) in self.screen.active_bindings.values()
            if binding.show
        )
        return need + 12 <= app.size.width

    async def recompose(self) -> None:
        # Textual's Footer recomposes only from bindings_changed, once the bindings are ready: the first call
        # always builds (nothing shown yet), the next ones only when the keys shown differ.
        if not self.is_attached or self._waiting:  # (its screen went: Textual's does nothing then either)
            return
        shown = self._what_it_shows()
        if shown == self._shown:
            return
        self._shown = shown
        self.compact = not self._fits()
        await super().recompose()

    def on_resize(self) -> None:
        self.compact = not self._fits()
