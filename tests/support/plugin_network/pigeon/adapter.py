"""The pigeon API: POST /v1/messages (idempotent by `key`), GET /v1/messages (newest first)."""

from typing import Any

from backend.networks.base import NetworkError, Publication, PublishOutcome, never_ready
from backend.networks.factory import AdapterContext
from backend.networks.http import json_or_none, send


class PigeonAdapter:
    platform = "pigeon"

    def __init__(self, client: Any, base: str) -> None:
        self.client = client
        self.base = base.rstrip("/")

    def _auth(self, pub: Publication) -> dict[str, str]:
        return {"Authorization": f"Bearer {pub.account.access_token}"}

    def publish(self, pub: Publication) -> PublishOutcome:
        try:
            r = send(
                self.client,
                "POST",
                f"{self.base}/v1/messages",
                network="pigeon",
                write=True,
                json={"text": pub.payload.text, "key": pub.idempotency_token, **pub.payload.options},
                headers=self._auth(pub),
            )
        except NetworkError as exc:
            return exc.outcome()
        body = json_or_none(r) or {}
        if r.status_code != 201:
            return PublishOutcome.failed(
                "permanent", f"pigeon refused: {body}", auth_refused=r.status_code == 401
            )
        return PublishOutcome.published(body["id"], body["url"])

    def check_status(self, pub: Publication, ref: str) -> PublishOutcome:
        return PublishOutcome.published(ref, None)

    def complete(self, pub: Publication, ref: str) -> PublishOutcome:
        return never_ready("pigeon")

    def find_existing(self, pub: Publication) -> PublishOutcome | None:
        r = send(self.client, "GET", f"{self.base}/v1/messages", network="pigeon", headers=self._auth(pub))
        for item in (json_or_none(r) or {}).get("items") or []:
            if item.get("key") == pub.idempotency_token:
                return PublishOutcome.published(item["id"], item["url"])
        return None


def make_adapter(ctx: AdapterContext) -> PigeonAdapter:
    return PigeonAdapter(ctx.client, ctx.host("api"))
