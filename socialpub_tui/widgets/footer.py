"""The footer every screen shows: Textual's, rebuilt only when what it shows changes.

Textual's Footer rebuilds all its keys (one widget each, styled anew) every time the screen's bindings may have
changed — the focus moved, a screen was pushed or resumed, `refresh_bindings()` — whether or not the keys it shows
did. While the posts screen comes up that is four rebuilds of 13 keys: ~95 ms of the launch, most of it for
nothing. This one compares what it would show (each shown binding: key, action, description, enabled, tooltip,
group; the command palette's) with what it shows, and rebuilds only on a difference.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import Footer as TextualFooter


class Footer(TextualFooter):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._shown: tuple[Any, ...] | None = None

    def _what_it_shows(self) -> tuple[Any, ...]:
        shown = tuple((binding.key, binding.action, binding.description, enabled, tooltip,
                       binding.group.description if binding.group is not None else None)
                      for (_, binding, enabled, tooltip) in self.screen.active_bindings.values() if binding.show)
        palette = self.app.COMMAND_PALETTE_BINDING if self.show_command_palette else None
        return shown, palette, self.app.ENABLE_COMMAND_PALETTE, self.combine_groups

    async def recompose(self) -> None:
        # Textual's Footer recomposes only from bindings_changed, once the bindings are ready: the first call
        # always builds (nothing shown yet), the next ones only when the keys shown differ.
        if not self.is_attached:  # (its screen went meanwhile: Textual's does nothing then either)
            return
        shown = self._what_it_shows()
        if shown == self._shown:
            return
        self._shown = shown
        await super().recompose()
