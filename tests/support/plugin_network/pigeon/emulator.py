"""The pigeon network's emulator: it imports the sandbox framework only."""

from typing import Any

import httpx

from backend.networks.sandbox.core import (
    Emulator,
    Request,
    account_for_token,
    digits,
    json_response,
    new_item,
)
from backend.networks.sandbox.store import SandboxItem


class PigeonEmulator(Emulator):
    platform = "pigeon"
    HOSTS = {"api": "https://api.pigeon.sandbox.invalid"}

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        self.route("POST", r"/v1/messages", self.send_message)
        self.route("GET", r"/v1/messages", self.messages)

    def send_message(self, request: Request) -> httpx.Response:
        acc = account_for_token(request.bearer())
        if acc is None or acc.platform != self.platform:
            return json_response(401, {"error": "who are you?"})
        body = request.json if isinstance(request.json, dict) else {}
        key = str(body.get("key") or "")
        done = SandboxItem.get_or_none((SandboxItem.platform == self.platform) & (SandboxItem.post_id == key))
        if done is None:
            msg_id = "msg_" + digits(12)
            done = new_item(
                self.platform,
                acc,
                "post",
                msg_id,
                text=str(body.get("text") or ""),
                post_id=key,
                url=f"https://pigeon.example/m/{msg_id}",
                data={"altitude": body.get("altitude")},
            )
        return json_response(201, {"id": done.id, "url": done.url})

    def messages(self, request: Request) -> httpx.Response:
        acc = account_for_token(request.bearer())
        if acc is None:
            return json_response(401, {"error": "who are you?"})
        q = SandboxItem.select().where(
            (SandboxItem.platform == self.platform) & (SandboxItem.account_id == acc.id)
        )
        items = [
            {"id": i.id, "url": i.url, "key": i.post_id} for i in q.order_by(SandboxItem.created_at.desc())
        ]
        return json_response(200, {"items": items})

    def describe(self, item: SandboxItem) -> dict[str, Any] | None:
        return {
            "external_id": item.id,
            "url": item.url,
            "status": "published",
            "kind": "text",
            "text": item.text,
            "title": None,
            "media": [],
        }
