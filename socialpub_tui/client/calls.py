"""Every /v1 endpoint as a Call: path, method, body, auth and the response model from backend.schemas
(the wire format is defined once, there). The sync and async clients run these."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from backend.schemas.auth import LoginRequest, SessionOut
from backend.schemas.keys import KeyCreate, KeyCreated, KeyDeleted, KeyList
from backend.schemas.workspace import WorkspaceOut, WorkspacePatch
from socialpub_tui.client._core import Call, clean, dump


def _id(value: str) -> str:
    return quote(value, safe="")


def health() -> Call[dict[str, Any]]:
    return Call("GET", "/v1/health", dict, auth="none")


def login(email: str, password: str) -> Call[SessionOut]:
    return Call("POST", "/v1/auth/login", SessionOut, json=dump(LoginRequest(email=email, password=password)),
                auth="none", optional_extension="POST /v1/auth/login")


# ---- API keys (session) -----------------------------------------------------------------------------------

def create_key(name: str = "API key", expires_in_days: int | None = 90,
               scopes: list[str] | None = None) -> Call[KeyCreated]:
    body = KeyCreate.model_validate(clean({"name": name, "scopes": scopes}) | {"expires_in_days": expires_in_days})
    return Call("POST", "/v1/api-keys", KeyCreated, json=body.model_dump(mode="json", by_alias=True,
                                                                          exclude_none=False), auth="session")


def list_keys() -> Call[KeyList]:
    return Call("GET", "/v1/api-keys", KeyList, auth="session")


def revoke_key(key_id: str) -> Call[KeyDeleted]:
    return Call("DELETE", f"/v1/api-keys/{_id(key_id)}", KeyDeleted, auth="session")


def purge_key(key_id: str) -> Call[KeyDeleted]:
    return Call("DELETE", f"/v1/api-keys/{_id(key_id)}", KeyDeleted, params={"purge": "true"}, auth="session")


# ---- workspace ---------------------------------------------------------------------------------------------

def get_workspace() -> Call[WorkspaceOut]:
    return Call("GET", "/v1/workspace", WorkspaceOut)


def edit_workspace(changes: WorkspacePatch | dict[str, Any]) -> Call[WorkspaceOut]:
    patch = changes if isinstance(changes, WorkspacePatch) else WorkspacePatch.model_validate(changes)
    return Call("PATCH", "/v1/workspace", WorkspaceOut, json=dump(patch), auth="session",
                optional_extension="PATCH /v1/workspace")
