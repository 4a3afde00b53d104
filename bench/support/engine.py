"""Shared setup of the engine benchmarks (bench/scheduler.py, bench/pipeline.py).

A workspace with one sandbox account per network, a media file on our own media host (ingested through the
real media store), and posts queued in bulk: one post is accepted through the real service (validation,
media checks, options, what the networks will receive), then copied with fresh ids into as many Post,
PostTarget and Job rows as asked, with insert_many through the peewee models. The engine cannot tell the
copies from posts accepted one by one: same columns, same publish job (`post.publish`, dedupe `post:<id>`).
"""

from __future__ import annotations

import os
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("SOCIALPUB_LOG_LEVEL", "WARNING")
# The engine benchmarks publish to reviewed apps (inherited by the processes a benchmark starts): an audited TikTok
# app (socialpub's SOCIALPUB_TIKTOK_AUDITED and the emulated app's `audited`; a new app may post only SELF_ONLY to a
# private account) and a LinkedIn partner app that may read its member's posts back (a new app cannot, so a kill
# during its POST /rest/posts ends "may have been published: check the account"). What a new app does is the
# networks' tests' subject, not the engine's. Posts carry the TikTok creator's privacy.
os.environ.setdefault("SOCIALPUB_TIKTOK_AUDITED", "true")
os.environ.setdefault(
    "SOCIALPUB_SANDBOX_APPS",
    '{"tiktok": {"audited": true}, "linkedin": {"products": ["openid", "share", "partner"]}}',
)
TIKTOK_PRIVACY = {"tiktok": {"privacyLevel": "PUBLIC_TO_EVERYONE"}}

PLATFORMS = ("facebook", "instagram", "linkedin", "tiktok", "youtube")


def bench_settings(data_dir: Path, database_url: str | None = None, **over: Any) -> Any:
    """Settings of a benchmark run: zero sandbox latency and processing time, sandbox caps off, no API rate
    limit."""
    from backend.config import Settings

    values: dict[str, Any] = {
        "data_dir": data_dir,
        "database_url": database_url,
        "base_url": "http://bench.local",
        "sandbox_delay_s": 0.0,
        "sandbox_processing_s": 0.0,
        "sandbox_limits": False,
        "rate_limit_per_minute": 10_000_000,
    }
    values.update(over)
    return Settings(**values)


def settings_kwargs(settings: Any) -> dict[str, Any]:
    """What a worker process needs to rebuild the same Settings (picklable)."""
    keys = [
        "data_dir",
        "database_url",
        "base_url",
        "sandbox_delay_s",
        "sandbox_processing_s",
        "sandbox_limits",
        "rate_limit_per_minute",
        "worker_poll_s",
    ]
    return {k: getattr(settings, k) for k in keys}


def tiny_video() -> bytes:
    """A real H.264 MP4 (360x640, 24 fps, 3 s), accepted by all five networks' rules: the test corpus's."""
    from tests.media.corpus import video

    return video("mp4")


@dataclass
class Workspace:
    id: str
    media_url: str | None


def prepare_workspace(settings: Any, *, with_video: bool, sandbox_accounts: bool = True) -> Workspace:
    """Store initialised, a workspace on a paid plan, the five default sandbox accounts (unless
    `sandbox_accounts` is false: the caller connects live accounts), a video on our host."""
    from backend.services import accounts, bootstrap, security, workspace
    from backend.services import media as media_service
    from backend.store.db import init_database

    init_database(settings)
    security.ensure_secret(settings)
    created = bootstrap.create_workspace(settings, "Bench", "bench@bench.local", "bench password 123")
    workspace.set_plan(created.workspace_id, "GROWTH", "active", None)
    if sandbox_accounts:
        # public accounts (TikTok's sandbox default is private): the bench's audited TikTok app posts publicly,
        # and TikTok's video list, which reconciles an interrupted post, shows only public videos
        accounts.connect_sandbox_defaults(settings, created.workspace_id, public=True)
    url = None
    if with_video:
        row = media_service.ingest_bytes(settings, created.workspace_id, tiny_video())
        url = media_service.url_for(settings, row.key)
    return Workspace(created.workspace_id, url)


def queue_posts(
    settings: Any,
    ws: Workspace,
    run_ats: Sequence[datetime | None],
    *,
    platforms: Sequence[str],
    content: str = "Benchmark post\nfrom the socialpub engine bench",
    contents: Sequence[str] | None = None,
    chunk: int = 2000,
    progress: Callable[[int], None] | None = None,
) -> list[str]:
    """len(run_ats) posts to `platforms` (run_at None: immediate, `processing`; else `scheduled` at run_at).
    `contents`: each post's own text (same length and shape as `content`, which is the one validated), e.g. to
    tell the posts apart at the networks. Returns the post ids."""
    from backend import clock
    from backend.ids import new_id
    from backend.services.posts import accept
    from backend.store.db import tx
    from backend.store.models import Job, MediaHold, Post, PostTarget
    from backend.store.models.posts import folded

    body: dict[str, Any] = {"targets": list(platforms), "content": contents[0] if contents else content}
    if ws.media_url:
        body["media_urls"] = [ws.media_url]
    if "tiktok" in platforms:
        body["options"] = TIKTOK_PRIVACY
    template, _ = accept.create(settings, ws.id, body)  # the real acceptance path, once
    tmpl_targets = list(
        PostTarget.select().where(PostTarget.post == template.id).order_by(PostTarget.position)
    )
    tmpl = Post.get_by_id(template.id)
    tmpl_holds = list(MediaHold.select().where(MediaHold.ref == f"post:{template.id}"))
    with tx():  # the template itself is not part of the run
        MediaHold.delete().where(MediaHold.ref == f"post:{template.id}").execute()
        Job.delete().where(Job.dedupe_key == accept.job_key(template.id)).execute()
        PostTarget.delete().where(PostTarget.post == template.id).execute()
        Post.delete().where(Post.id == template.id).execute()

    ids: list[str] = []
    now = clock.now()
    for start in range(0, len(run_ats), chunk):
        post_rows: list[dict[str, Any]] = []
        target_rows: list[dict[str, Any]] = []
        job_rows: list[dict[str, Any]] = []
        hold_rows: list[dict[str, Any]] = []
        for n, run_at in enumerate(run_ats[start : start + chunk], start):
            pid = new_id("post")
            ids.append(pid)
            text = contents[n] if contents is not None else tmpl.content
            post_rows.append(
                {
                    "id": pid,
                    "workspace": ws.id,
                    "status": "processing" if run_at is None else "scheduled",
                    "content": text,
                    "content_folded": folded(text),
                    "media_urls": tmpl.media_urls,
                    "media": tmpl.media,
                    "options": tmpl.options,
                    "scheduled_at": run_at,
                    "idempotency_key": None,
                    "free_publication": False,
                    "version": 1,
                    "created_at": now,
                    "updated_at": now,
                }
            )
            for t in tmpl_targets:
                target_rows.append(
                    {
                        "id": new_id("tgt"),
                        "post": pid,
                        "position": t.position,
                        "platform": t.platform,
                        "account": t.account_id,
                        "account_name": t.account_name,
                        "status": "pending",
                        "idempotency_token": new_id("pub"),
                        "updated_at": now,
                    }
                )
            hold_rows += [
                {"media": h.media_id, "ref": f"post:{pid}", "until": None, "created_at": now}
                for h in tmpl_holds
            ]  # the media kept until the post is sent, as on acceptance
            job_rows.append(
                {
                    "id": new_id("job"),
                    "kind": accept.PUBLISH_JOB,
                    "payload": {"post_id": pid},
                    "status": "queued",
                    "run_at": run_at or now,
                    "attempts": 0,
                    "max_attempts": 5,
                    "dedupe_key": accept.job_key(pid),
                    "workspace_id": ws.id,
                    "created_at": now,
                    "updated_at": now,
                }
            )
        with tx():
            for model, rows in (
                (Post, post_rows),
                (PostTarget, target_rows),
                (Job, job_rows),
                (MediaHold, hold_rows),
            ):
                for i in range(0, len(rows), 500):
                    model.insert_many(rows[i : i + 500]).execute()
        if progress:
            progress(len(ids))
    return ids


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, int(round(q / 100 * len(ordered) + 0.5)) - 1))
    return ordered[k]


def summary(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {}
    return {
        "n": len(values),
        "min": min(values),
        "p50": percentile(values, 50),
        "p90": percentile(values, 90),
        "p99": percentile(values, 99),
        "max": max(values),
        "mean": statistics.fmean(values),
    }


def machine() -> dict[str, Any]:
    """The machine a result was measured on, with its reference loop time (issue 34): `sum(range(10**7))`, the
    best of 3, so that figures from machines of different speed (or one machine on a busier day) compare."""
    import platform
    import time

    loops = []
    for _ in range(3):
        t0 = time.perf_counter()
        sum(range(10**7))
        loops.append(time.perf_counter() - t0)
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "loadavg_at_start": list(os.getloadavg()),
        "reference_loop_ms": round(1000 * min(loops), 1),
    }


def published_rows(settings: Any, platform: str) -> list[dict[str, Any]]:
    """What one sandbox network's emulator holds (the sandbox's public listing: rows with external_id, text,
    title, ...), from the sandbox database of `settings`."""
    from backend.services.adapters import sandbox

    return sandbox(settings).list_published(platform=platform, limit=10**7)


def dies_with_this_process() -> None:
    """A child's `preexec_fn`: Linux sends it SIGTERM when the benchmark that started it dies (a SIGTERM, a kill -9,
    a crash), so no served emulator or worker is left running to load the next benchmark. Elsewhere: nothing."""
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
