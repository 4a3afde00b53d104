"""Router registry. Each module exposes `router` (mounted under /v1) — add new resources here."""

# Order matters for speed only: routes are matched in this order, so the busiest resource comes first
# (no two routers share a path).
ROUTERS: list[str] = [
    "backend.api.routers.posts",
    "backend.api.routers.auth",
    "backend.api.routers.keys",
    "backend.api.routers.workspace",
    "backend.api.routers.media",
    "backend.api.routers.accounts",
    "backend.api.routers.sandbox",
    "backend.api.routers.tiktok",
    "backend.api.routers.activity",
    "backend.api.routers.generations",
    "backend.api.routers.credits",
]

# Routers mounted at the root (not under /v1), e.g. the media host. Each module exposes `host_router`.
HOST_ROUTERS: list[str] = [
    "backend.api.routers.media_host",
]
