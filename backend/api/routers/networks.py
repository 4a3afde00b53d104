"""GET /v1/networks (extension): the networks this server publishes to — built-ins and plugins of the
`socialpub.networks` entry points — with what the front end shows and checks before sending (badge, colour,
limits) and the JSON Schema of each one's `options`. Public, like /v1/health: it says nothing of a workspace."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response
from pydantic_core import to_json

from backend.schemas.networks import NetworkList
from backend.services import networks as svc

router = APIRouter(tags=["networks"])


@router.get("/networks", operation_id="listNetworks", response_model=NetworkList)
def list_networks() -> Response:
    """Built-in networks first, then plugins, each in name order. Unauthenticated; the CLI and the TUI read it once
    per client."""
    return Response(to_json({"items": svc.catalogue()}), media_type="application/json")
