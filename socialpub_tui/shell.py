"""What the TUI's screens and widgets ask of the app they run in (SocialpubApp), as one typed seam.

Textual types a widget's `app` as `App[object]`, which knows nothing of socialpub's client, clock, zone or
networks; `shell(widget)` gives the same app as a `Shell`. SocialpubApp is checked to be one (app.py `_is_a_shell`),
so a screen that asks for something the app does not offer fails the type check, not at run time."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    from textual.dom import DOMNode
    from textual.signal import Signal

    from backend.schemas.posts import PostOut
    from socialpub_tui.client.aio import AsyncClient
    from socialpub_tui.client.networks import Networks
    from socialpub_tui.messages import PostChanged
    from socialpub_tui.times import DisplayZone


class HoldsDraft(Protocol):
    """A screen that may hold work the user has not sent (the compose screen)."""

    def holds_unsent_draft(self) -> bool: ...

    def unsent_sentence(self) -> str:
        """What would be lost: `The post you are writing was not sent`, `Your changes to post_… were not saved`."""
        ...


class Shell(Protocol):
    """The app as its screens use it: the API client, the clock and display zone, the networks the server has,
    the post-changed signal, error reports, and the drafts the quit question asks about."""

    client: AsyncClient
    zone: DisplayZone
    networks: Networks
    post_changed: Signal[PostChanged]
    media_labels: dict[str, str]
    clock: Callable[[], datetime]

    def now(self) -> datetime: ...

    def report(self, exc: BaseException, action: str = "") -> None: ...

    def announce(self, post: PostOut, action: str) -> None: ...

    def register_draft(self, screen: HoldsDraft) -> None: ...

    def forget_draft(self, screen: HoldsDraft) -> None: ...

    def first_screen_drawn(self) -> None: ...


def shell(node: DOMNode) -> Shell:
    """The app `node` runs in, as a Shell (Textual types it App[object]; SocialpubApp is checked to be a Shell)."""
    return cast("Shell", node.app)
