"""How statuses look, shared by the CLI's tables and the TUI: one colour per status word (a network's badge and
colour are the server's: GET /v1/networks, the client's `Networks`); and how text from users and networks is
shown: inert (`inert`)."""

from __future__ import annotations

import json
import re

from backend.schemas.statuses import PostStatus, TargetStatus

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
    return "not sent" if post_status == PostStatus.CANCELLED and status == TargetStatus.PENDING else status


# ---- text from users and networks ---------------------------------------------------------------------------------

# What a terminal would act on instead of showing: C0 controls (ESC starts CSI/OSC sequences — colours, the window
# title, OSC 52 clipboard writes —, BEL, BS, CR moves back over what was printed), DEL, C1 controls (U+0080-U+009F:
# U+009B is a one-character CSI, U+009D an OSC on some terminals), and the bidirectional overrides and isolates,
# which reorder what is shown (U+200E, U+200F, U+202A-U+202E, U+2066-U+2069).
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
_MARKUP = re.compile(r"(\\*)\[")


def _visible(match: re.Match[str]) -> str:
    ch = match.group(0)
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: object, *, newlines: bool = False, tabs: bool = False, markup: bool = False) -> str:
    """`text` (any value: str() of it) made safe to print: every control character is shown as its escape, in
    backslash form (ESC as `\\x1b`, BEL `\\x07`, CR `\\r`, DEL `\\x7f`, U+009B `\\x9b`, U+202E `\\u202e`),
    never sent to the terminal to act on. `newlines` / `tabs` keep `\\n` / `\\t` as they are, where the layout
    takes them (a post's whole text); otherwise they are shown escaped too (a table cell, one line). `markup`: also
    escape `[` as Rich and Textual markup read it, for text given to a widget that parses markup (everything else
    in the TUI takes `rich.text.Text`, which is never parsed).

    The one function for it: the CLI (tables, fields, lines, errors that echo what was sent) and the TUI (lists,
    details, notifications) show user and network text through it; `--json` output needs none (JSON escapes
    every control character)."""
    value = text if isinstance(text, str) else str(text)
    keep = ("\n" if newlines else "") + ("\t" if tabs else "")
    if keep:
        out = _UNSAFE.sub(lambda m: m.group(0) if m.group(0) in keep else _visible(m), value)
    else:
        out = _UNSAFE.sub(_visible, value)
    if markup:
        out = _MARKUP.sub(lambda m: m.group(1) * 2 + "\\[", out)
    return out


_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def json_text(data: object) -> str:
    """`data` as one JSON document (`--json` output), non-ASCII text kept readable: JSON escapes the C0 controls
    itself; DEL, the C1 controls and the bidirectional controls, which it may carry raw, are written as `\\uXXXX`
    too, so the document is inert on a terminal and parses to exactly the same values."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", json.dumps(data, ensure_ascii=False))
