"""Instagram's OAuth side in its emulator: Facebook Login (Facebook's package), where each page a user manages is
linked to an Instagram professional account — the sandbox account — shown in /me/accounts as the page's
`instagram_business_account`; and Instagram Login's `GET /refresh_access_token`."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx

from backend.networks.facebook.emulator_oauth import PAGE_TASKS, GraphOAuth
from backend.networks.sandbox.core import Request, digits, now, token_hash, write
from backend.networks.sandbox.oauth import alive, find_credential, grant_of
from backend.networks.sandbox.store import SandboxAccount, SandboxSetting, SandboxToken


class InstagramOAuth(GraphOAuth):
    def extra_routes(self) -> None:
        self.emu.route("GET", r"/refresh_access_token", self.ig_refresh)

    def _page_key(self, sandbox_account_id: str) -> str:
        return f"oauth:{self.platform}:page:{sandbox_account_id}"

    def account_made(self, sandbox_account_id: str, label: str) -> None:
        """The page linked to the new professional account: an id and a name of its own."""
        with write():
            SandboxSetting.create(
                key=self._page_key(sandbox_account_id),
                value={"id": digits(15, "1"), "name": f"{label} (Page)"},
            )

    def page_entry(self, acc: SandboxAccount, page_token: str) -> dict[str, Any]:
        info = SandboxSetting.get_or_none(SandboxSetting.key == self._page_key(acc.id))
        page = info.value if info else {"id": digits(15, "1"), "name": acc.name}
        return {
            "access_token": page_token,
            "category": "Brand",
            "name": page["name"],
            "id": page["id"],
            "tasks": PAGE_TASKS,
            "instagram_business_account": {"id": acc.external_id, "username": acc.username},
        }

    def ig_refresh(self, request: Request) -> httpx.Response:
        """Instagram Login: a long-lived token (at least 24 h old, not expired) -> a new one for 60 days."""
        if request.params.get("grant_type") != "ig_refresh_token":
            return self.error(400, 100, "grant_type must be ig_refresh_token")
        failure = self.switched_failure()
        if failure:
            return failure
        row = find_credential(request.params.get("access_token"), self.platform, "user")
        grant = grant_of(row) if row is not None else None
        if row is None or grant is None:
            return self.api_error("invalid")
        problem = alive(row, grant)
        if problem:
            return self.api_error(problem)
        if not (row.data or {}).get("long_lived") or now() - row.created_at < timedelta(days=1):
            return self.error(
                400, 190, "The access token must be long-lived and at least 24 hours old to be refreshed."
            )
        token, at = self.issue_access(grant, self.settings()["long_ttl_s"], "user")
        with write():
            SandboxToken.update(data={"long_lived": True}).where(
                SandboxToken.id == token_hash(token)
            ).execute()
        return self._answer(token, at)


# --- LinkedIn: www.linkedin.com/oauth/v2/{authorization,accessToken,revoke} ----------------------------------
