"""Typed messages between the TUI's widgets and screens, named in the past tense (what happened)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from backend.schemas.posts import PostOut


@dataclass
class PostChanged(Message):
    """A post was created, edited, cancelled or retried from this app: lists showing it refresh. Posted to
    the app (`app.post_message`) so every mode's screen hears it."""

    post: PostOut
    action: str  # created | edited | cancelled | retried | duplicated | moved
