"""Owner login (extension)."""

from __future__ import annotations

from pydantic import Field

from backend.schemas.common import CamelModel, CamelOut, Timestamp


class LoginRequest(CamelModel):
    email: str = Field(min_length=3, max_length=320)
    password: str = Field(min_length=1, max_length=1000)


class SessionOut(CamelOut):
    session_token: str
    expires_at: Timestamp
    workspace_id: str
