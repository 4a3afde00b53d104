"""How statuses look, shared by the CLI's tables and the TUI: one colour per status word. A network's badge and
colour are the server's (GET /v1/networks: the client's `Networks`)."""

from __future__ import annotations

STATUS_COLOURS = {
    "completed": "green",
    "succeeded": "green",
    "active": "green",
    "inbox_delivered": "green",
    "partial": "yellow",
    "processing": "cyan",
    "publishing": "cyan",
    "pending": "cyan",
    "scheduled": "blue",
    "failed": "red",
    "cancelled": "bright_black",
    "revoked": "bright_black",
    "expired": "bright_black",
    "needs_reauth": "yellow",
    "disconnected": "bright_black",
    "draft": "magenta",
    "not sent": "bright_black",
}


def status_colour(status: str | None) -> str:
    """The colour a status word is shown in (`white` for one we do not know)."""
    return STATUS_COLOURS.get(status or "", "white")


def fail_colour(fail_type: str | None) -> str:
    """The colour a target's failType is shown in: red when retrying cannot help, yellow when it may."""
    return "red" if fail_type == "permanent" else "yellow"


def target_status(post_status: str, status: str) -> str:
    """The word a target's status is shown as. The API has no `cancelled` target state (spec 3.2): the targets of
    a cancelled post keep `pending`, which would read as work under way; they are shown as `not sent`, in the
    colour of a cancelled post."""
    return "not sent" if post_status == "cancelled" and status == "pending" else status
