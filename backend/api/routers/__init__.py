"""Router registry. Each module exposes `router` (mounted under /v1) — add new resources here.

Each module is listed with the path its routes live under (the first segment after /v1: every route of
`backend.api.routers.posts` is `/v1/posts…`). The app imports a router on the first request under its path
(backend/api/app.py); tests/api/test_routers.py checks that every route lies under its module's path and that no
two modules share one.
"""

# Order matters for speed only: routes are matched in the order their routers were first used, and this order
# when several are included at once (no two routers share a path).
ROUTERS: dict[str, str] = {
    "backend.api.routers.posts": "/v1/posts",
    "backend.api.routers.auth": "/v1/auth",
    "backend.api.routers.keys": "/v1/api-keys",
    "backend.api.routers.workspace": "/v1/workspace",
    "backend.api.routers.media": "/v1/media",
    "backend.api.routers.accounts": "/v1/accounts",
    "backend.api.routers.sandbox": "/v1/sandbox",
    "backend.api.routers.tiktok": "/v1/publish",
    "backend.api.routers.activity": "/v1/activity",
    "backend.api.routers.generations": "/v1/generations",
    "backend.api.routers.credits": "/v1/credits",
    "backend.api.routers.webhooks": "/v1/webhooks",
    "backend.api.routers.events": "/v1/events",
    "backend.api.routers.networks": "/v1/networks",
}

# Routers mounted at the root (not under /v1), e.g. the media host. Each module exposes `host_router`.
HOST_ROUTERS: dict[str, str] = {
    "backend.api.routers.media_host": "/media",
}
