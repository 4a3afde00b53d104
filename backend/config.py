"""Settings: one pydantic-settings object, every field from the environment with prefix SOCIALPUB_."""

from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, TypeVar

from platformdirs import user_data_dir
from pydantic import Field, PrivateAttr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

log = logging.getLogger("socialpub.config")

S = TypeVar("S", bound=BaseSettings)


def default_data_dir() -> Path:
    return Path(user_data_dir("socialpub", appauthor=False))


class Settings(BaseSettings):
    """Every knob of the service. Documented in docs/configuration.md. Each network's own settings
    (its API base, OAuth app, …: SOCIALPUB_<NETWORK>_…) are a model of its package, reached through
    `network_settings`."""

    model_config = SettingsConfigDict(env_prefix="SOCIALPUB_", extra="ignore", populate_by_name=True)
    _networks: dict[type[BaseSettings], BaseSettings] = PrivateAttr(default_factory=dict)

    data_dir: Path = Field(default_factory=default_data_dir)
    database_url: str | None = Field(default=None, repr=False)  # may hold the database password
    base_url: str = "http://127.0.0.1:8000"
    media_url: str | None = None
    secret_key: str | None = Field(default=None, repr=False)
    # the key(s) that encrypt network tokens and webhook secrets at rest (comma-separated Fernet keys, the first
    # encrypts); unset: <data_dir>/secrets.key, made at init (0600). Servers sharing a database must share it.
    secrets_key: str | None = Field(default=None, repr=False)

    rate_limit_per_minute: int = 30
    session_ttl_s: int = 12 * 3600
    max_body_bytes: int = 1 * 1024 * 1024
    max_media_body_bytes: int = 30 * 1024 * 1024
    # issue 30 item 6: `socialpub serve` bounds its clients (backend/operator/httpserver.py)
    server_header_timeout_s: float = 10.0
    server_body_timeout_s: float = 30.0
    server_max_header_bytes: int = 64 * 1024
    server_max_connections: int = 1024
    server_max_connections_per_client: int = 64
    server_keep_alive_s: int = 5

    # SOCIALPUB_ALLOW_PRIVATE_URLS: unset (None), the data dir's own setting decides (`socialpub admin private-urls`,
    # backend/store/instance.py); 1 or 0 overrides it in this process only
    allow_private_urls: bool | None = None
    fetch_connect_timeout_s: float = 5.0
    fetch_total_timeout_s: float = 60.0
    fetch_min_rate_bytes_s: int = 16 * 1024
    # media (issue 3): the slow-drip window (a body slower than fetch_min_rate_bytes_s over this many
    # seconds, or silent for this long, is cut off), the decompression-bomb guard, the orphan sweep.
    fetch_rate_window_s: float = 10.0
    max_image_pixels: int = 50_000_000
    media_orphan_grace_s: float = 24 * 3600
    # issue 30: a video is probed (opened, walked, its first and last key frames decoded) within this time
    video_probe_timeout_s: float = 30.0

    storage: Literal["local", "s3"] = "local"
    s3_endpoint_url: str | None = None
    s3_bucket: str | None = None
    s3_region: str = "us-east-1"
    s3_access_key_id: str | None = Field(default=None, repr=False)
    s3_secret_access_key: str | None = Field(default=None, repr=False)
    s3_public_url: str | None = None

    retry_base_s: float = 30.0
    retry_max_attempts: int = 5
    # The longest a target waits for a network's window (a cap, a Retry-After, a rate limit, a listing delay: waits
    # never count against retry_max_attempts), from its first attempt: past it the target fails, saying so.
    max_wait_s: float = Field(default=7 * 86400.0, gt=0)
    # The worker (backend/jobs/worker.py explains each figure): a fixed pool of threads, each running one job at
    # a time; a network ("lane") may hold at most worker_lane_share of them; a claimed job's lease is renewed
    # every job_lease_s / 3 while it runs, so a dead worker's jobs are taken over within ~job_lease_s.
    worker_concurrency: int = Field(default=512, ge=1, le=4096)
    worker_lane_share: float = Field(default=0.25, gt=0, le=1)
    job_lease_s: float = Field(default=10.0, ge=1)
    worker_poll_s: float = 1.0
    # count this process's store statements, transactions, network requests and the connections they opened
    # (SOCIALPUB_COUNT_STEPS; the worker logs the counts when it starts and stops): what bench/burst.py reports per
    # target. Off: nothing counted.
    count_steps: bool = False
    # `socialpub serve`'s worker: in a process of its own (default), so that a busy API never starves publishing
    # of the interpreter, or in a thread of the server's process ("thread", as --worker-in-process)
    serve_worker: Literal["process", "thread"] = "process"
    max_lateness_s: float | None = None  # fail a post due longer ago than this instead of sending it late
    track_poll_s: float = 10.0  # how often asynchronous network processing is polled (live accounts)
    # sandbox networks: the latency of every emulated call (slept before the emulator answers), per-network
    # overrides of it (JSON, e.g. {"youtube": 5}), and their asynchronous processing time (TikTok publishes,
    # Instagram containers, LinkedIn assets, YouTube videos), like the real ones. Tests set both to 0.
    sandbox_delay_s: float = 0.2
    sandbox_network_delay_s: dict[str, float] = Field(default_factory=dict)
    sandbox_processing_s: float = 3.0
    # sandbox networks enforce the real networks' rate limits and daily caps (turn off for benchmarks)
    sandbox_limits: bool = True
    # the emulated developer app of each network (SOCIALPUB_SANDBOX_APPS, JSON: {"tiktok": {"audited": true}});
    # a network not named is a NEW app: self-serve products only, not audited, not verified (sandbox/developer_app.py)
    sandbox_apps: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # sandbox networks' own settings (a daily cap…) are the network's (its package's settings model), like the
    # live networks' API bases and OAuth apps (SOCIALPUB_<NETWORK>_…: backend/networks/settings.py)

    network_timeout_s: float = 30.0
    # token life (issue 17 item 3, docs/tokens.md): the worker refreshes a live account's token
    # this many seconds before it expires (a publish refreshes it first when it is that close), and warns this
    # many days before a token that cannot be refreshed expires (an `account.token_expiring` event, `tokenWarning`)
    token_refresh_margin_s: float = Field(default=900.0, ge=0, le=7 * 86400)
    token_warning_days: float = Field(default=7.0, ge=0, le=365)
    # per-network overrides (JSON, e.g. {"tiktok": 1800}) of how long after a live network accepted a
    # publication its listing may still miss it: after an interrupted call, "absent" counts only that long after
    # the call was over (defaults: each network's registry entry, listing_delay_s; sandbox accounts: the emulator's)
    listing_delay_s: dict[str, float] = Field(default_factory=dict)
    # networks (comma-separated names) that pull a post's media from its public URL instead of receiving the
    # bytes, among those whose registry entry allows it (media_by_url; checked when the service starts:
    # backend.services.networks.check_settings); docs/networks.md. Default: upload the bytes wherever possible.
    media_by_url: str = ""

    # generation (issue 15): the provider's name among the entry points of `socialpub.generation_providers`
    # (backend/generation/registry.py); each provider reads its own SOCIALPUB_GENERATION_<NAME>_… settings.
    generation_provider: str = "local"

    # generations (issue 15): the content guard checked before production (backend/generation/guard.py: the
    # built-in terms, extra comma-separated terms, a file of terms), how many times a provider that is
    # temporarily unavailable is tried before the creation fails (refunded), and how many productions one worker
    # process runs at once (rendering is CPU- and memory-bound; the others wait their turn).
    generation_guard_defaults: bool = True
    generation_guard_terms: str = ""
    generation_guard_file: Path | None = None
    generation_max_attempts: int = Field(default=3, ge=1, le=20)
    generation_concurrency: int = Field(default=2, ge=1, le=64)

    # webhooks (issue 16, docs/webhooks.md): the wait in seconds before each attempt of a delivery (the first
    # usually 0; its length is the number of attempts), stretched by up to 10 % of jitter; the time bound of one
    # request to a receiver.
    webhook_retry_schedule: str = "0,5,300,1800,7200,18000,36000,50400,72000,86400"
    webhook_timeout_s: float = Field(default=15.0, gt=0, le=60)

    log_level: str = "INFO"

    @field_validator("data_dir", mode="before")
    @classmethod
    def _expand(cls, v: object) -> object:
        if isinstance(v, str):
            return Path(v).expanduser()
        return v

    @field_validator("webhook_retry_schedule")
    @classmethod
    def _schedule(cls, v: str) -> str:
        parts = [p.strip() for p in v.split(",") if p.strip()]
        try:
            delays = [float(p) for p in parts]
        except ValueError:
            raise ValueError("SOCIALPUB_WEBHOOK_RETRY_SCHEDULE: comma-separated delays in seconds") from None
        if not delays or len(delays) > 50 or any(d < 0 or d != d or d > 7 * 86400 for d in delays):
            raise ValueError("SOCIALPUB_WEBHOOK_RETRY_SCHEDULE: 1 to 50 delays, each 0 to 604800 seconds")
        return ",".join(parts)

    @field_validator("media_by_url")
    @classmethod
    def _media_by_url(cls, v: str) -> str:
        return ",".join(p.strip().lower() for p in v.split(",") if p.strip())

    @property
    def media_by_url_networks(self) -> frozenset[str]:
        """The networks configured to pull media from their URL (SOCIALPUB_MEDIA_BY_URL)."""
        return frozenset(p for p in self.media_by_url.split(",") if p)

    def network_settings(self, model: type[S]) -> S:
        """A network's own settings (`model`, a pydantic-settings model of its package), read from the environment
        once for this Settings object: what a test changes on it is what this object's users see."""
        found = self._networks.get(model)
        if found is None:
            found = self._networks.setdefault(model, model())
        return found  # type: ignore[return-value]  # the cache maps each model to its own instance: found is an S

    @property
    def webhook_retry_delays(self) -> tuple[float, ...]:
        """The wait before each attempt (attempt 1 first)."""
        return tuple(float(p) for p in self.webhook_retry_schedule.split(","))

    @property
    def public_media_url(self) -> str:
        url = self.media_url or (self.base_url.rstrip("/") + "/media/")
        return url if url.endswith("/") else url + "/"

    @property
    def is_postgres(self) -> bool:
        return (self.database_url or "").startswith(("postgres://", "postgresql://"))

    @property
    def sqlite_path(self) -> Path:
        return self.data_dir / "socialpub.db"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
