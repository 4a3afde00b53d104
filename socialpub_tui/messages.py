"""Typed messages between the TUI's widgets and screens, named in the past tense (what happened)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from backend.schemas.posts import PostOut


@dataclass
class PostChanged(Message):
    """A post was created, edited, cancelled, retried or moved from this app: lists showing it refresh.
    Published on the app's `post_changed` signal (`app.announce(post, action)`), so every screen hears it."""

    post: PostOut
    action: str  # created | edited | cancelled | retried | duplicated | moved
