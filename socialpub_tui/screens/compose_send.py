"""The compose screen's sending: the request body (POST for a new post, PATCH for an edit), the send itself
(the idempotency key made when the screen opened covers a second ctrl+s), and the API's per-target answers put
next to their targets."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.screen import Screen
from textual.widgets import Static, TextArea

from socialpub_tui import times
from socialpub_tui.checks import Problem
from socialpub_tui.client.errors import ApiError
from socialpub_tui.look import inert
from socialpub_tui.shell import shell


class Sending(Screen[Any]):
    """ComposeScreen's sending (a part of it: it runs on a ComposeScreen)."""

    # ---- sending ------------------------------------------------------------------------------------------
    def body(self) -> tuple[dict[str, Any] | None, str | None]:
        """The request body (POST for a new post, PATCH for an edit), or (None, why it cannot be sent yet)."""
        selected = self.selected_rows()
        if not selected:
            return None, "pick at least one target"
        if self.uploading:
            return None, "an upload is under way: wait for it to finish"
        schedule, schedule_error = self.schedule()
        if schedule_error:
            return None, schedule_error
        problems = self.target_problems()
        bad = [r for r in selected if problems.get(r.choice.key)]
        if bad:
            names = ", ".join(f"{r.choice.platform} · {inert(r.choice.name)}" for r in bad)
            return None, f"{names} would refuse this post: see ✗ next to the target"
        content = self.query_one("#compose-text", TextArea).text
        if self.source is not None and content == self.shown_text:
            content = self.source.content  # unchanged: the text as it was, control characters included
        options = self.options_wire({r.choice.platform for r in selected})
        if self.editing:
            patch: dict[str, Any] = {"content": content, "mediaUrls": [m.url for m in self.media]}
            if schedule is None:
                return None, "a scheduled post keeps a time: give a date and a time"
            patch["scheduledAt"] = times.iso_utc(schedule)
            if options or (self.source is not None and self.source.options):
                patch["options"] = options
            return patch, None
        body: dict[str, Any] = {
            "targets": [r.choice.wire() for r in selected],
            "content": content,
            "idempotencyKey": self.idempotency_key,
        }
        if self.media:
            body["mediaUrls"] = [m.url for m in self.media]
        if schedule is not None:
            body["scheduledAt"] = times.iso_utc(schedule)
        if options:
            body["options"] = options
        return body, None

    def action_send(self) -> None:
        if self.sending or self.sent is not None:
            return  # a second ctrl+s while the first is answered: nothing (the idempotency key covers the rest)
        body, why = self.body()
        if body is None:
            self.refresh_checks()
            self.query_one("#compose-status", Static).update(Text(f"Not sent: {why}", style="bold red"))
            self.notify(f"Not sent: {why}", severity="warning")
            return
        self.sending = True
        self.refresh_bindings()
        self._draw_status()
        self.send(body)

    @work(exclusive=True, group="compose-send")
    async def send(self, body: dict[str, Any]) -> None:
        client = shell(self).client
        try:
            if self.editing and self.source is not None:
                post = await client.edit_post(self.source.id, body)
            else:
                post = await client.create_post(body)
        except ApiError as exc:
            self.sending = False
            self.refresh_bindings()
            if not self._show_server_problems(exc):
                shell(self).report(exc, "sending the post")
            self.refresh_checks()
            self.query_one("#compose-status", Static).update(
                Text(f"Not sent — {inert(exc.code)}: {inert(exc.message)}", style="bold red")
            )
            return
        except Exception as exc:  # noqa: BLE001
            self.sending = False
            self.refresh_bindings()
            shell(self).report(exc, "sending the post")
            self._draw_status()
            return
        self.sent = post
        replayed = getattr(post, "_http_status", None) == 200 and not self.editing
        action = "edited" if self.editing else "duplicated" if self.duplicate else "created"
        if replayed:
            self.notify(
                f"{post.id} was already created by this screen: nothing new was sent.", title="Already sent"
            )
        else:
            when = (
                f"scheduled for {shell(self).zone.format(post.scheduled_at)}"
                if post.scheduled_at
                else "publishing now"
            )
            verb = "Saved" if self.editing else "Created"
            self.notify(f"{verb} {post.id}, {when}.", title=verb)
            shell(self).announce(post, action)
        self.dismiss(post)

    def _show_server_problems(self, exc: Any) -> bool:
        """Put the API's per-target details next to their targets. True when at least one found its target."""
        placed = False
        self.server_problems.clear()
        rows = self.selected_rows()
        for detail in exc.details or []:
            if not isinstance(detail, dict) or "platform" not in detail:
                continue
            code = str(detail.get("error", exc.code))
            problem = Problem(code, str(detail.get("message") or code))
            channel = detail.get("channelId") or detail.get("accountId")
            matching = [
                r
                for r in rows
                if (channel and r.choice.account_id == channel)
                or (not channel and r.choice.platform == detail["platform"])
            ]
            for row in matching:
                self.server_problems.setdefault(row.choice.key, []).append(problem)
                placed = True
        return placed
