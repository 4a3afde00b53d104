"""What a statement costs the worker's interpreter: peewee building and rendering it each time vs its statement shape
rendered once (issue 34, ruling 2; backend/store/shapes.py).

For the worker's hot statements, on SQLite, in this process (CPU time, robust to other load on the machine):
- `peewee`: the query as the engine wrote it before shapes: built, rendered, executed, its rows decoded;
- `build`, `render`: the building of that query object alone, and its rendering alone (`sql()` of a built one);
- `shape`: the statement shape's execution (a clone of its query, the values bound into the SQL rendered once,
  executed, its rows decoded by peewee);
each in µs a statement (median of --repeat rounds of --n executions). Writes match no row (fenced by a holder that
does not exist): the statement's work without changing the data. A per-target estimate weights each statement by
how often the worker runs it per target (bench/steps.py's zero-latency counts, in STATEMENTS_A_TARGET).

    .venv/bin/python bench/shapes.py [--n 2000] [--repeat 5] [--out bench/results/shapes.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.support.engine import (  # noqa: E402
    PLATFORMS,
    bench_settings,
    machine,
    prepare_workspace,
    queue_posts,
)

RESULTS = Path(__file__).resolve().parent / "results" / "shapes.json"

# executions a target of each statement in the worker (bench/steps.py zero latency, 40 posts x 5 networks, 0482c22)
STATEMENTS_A_TARGET = {
    "fence read (queue.hold)": 6.2,
    "job result (queue.complete)": 1.4,
    "post + target locked (apply.lock_target)": 2.2,
    "joined target load (engine._load)": 1.2,
    "siblings' statuses (apply.settle_post)": 1.2,
    # rendered each time before speed4 (8.2 a target in the burst, 1.6 after: these, estimated from the burst's
    # counts of rendered statements 8.24 -> 1.64 and what each target records)
    "outcome's target update (apply, a success)": 1.6,
    "follow-up job insert (queue.enqueue_many, 1 row)": 1.0,
    "attempt insert (engine._start_attempt)": 1.4,
    "event insert (events.record)": 1.3,
    "event's endpoints read (events.record)": 1.3,
    # rendered each time before speed6 (1.65 a target in the burst of speed4): a post's start (1 a post, 5 targets
    # a post in the burst: 0.2 a target each) releases its media holds (one video a post) and reads its accounts;
    # the heartbeat renews the claims of the pool (what is left of the 1.65: ~0.05 a target)
    "post's accounts (engine.start_post, 5 accounts)": 0.2,
    "holds of a post (media.release)": 0.2,
    "holds ended (media.release)": 0.2,
    "files by id (media._refresh)": 0.2,
    "a file held without limit? (media._refresh)": 0.2,
    "a file's latest hold (media._refresh)": 0.2,
    "a file's deadline (media._refresh)": 0.2,
    "keys of the files (media.release)": 0.2,
    "heartbeat renewal (queue.renew_all, 8 claims)": 0.05,
    # found by counting the burst's rendered statements by call site: 2 a post (speed6)
    "a target's unresolved attempts (apply.unresolved_attempts)": 0.4,
    # at a post's acceptance with files (POST /v1/posts, not the worker: 0 a target here), each a POST with 2 files
    "a file by key or id (media.get_media, 2 a POST)": 0.0,
    "live files by key (media.hold, 2 keys)": 0.0,
    "holds' upsert (media.hold, 2 files)": 0.0,
}


def commit() -> str:
    import subprocess

    out = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent, capture_output=True, text=True
    )
    return out.stdout.strip()


def cpu_us(fn: Callable[[], Any], n: int) -> float:
    t0 = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - t0) / n * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()

    from peewee import EXCLUDED, JOIN
    from peewee import fn as sql_fn  # `fn` is the loop variable below

    from backend import clock, queue
    from backend.config import get_settings
    from backend.ids import new_id
    from backend.schemas.statuses import JobStatus
    from backend.services import events, media
    from backend.services.publishing import engine
    from backend.services.publishing.apply import (
        _SIBLING_STATUSES,
        APPLY_TARGET,
        POST_STATE,
        _outcome_shape,
        lock_target,
        unresolved_attempts,
    )
    from backend.store.db import database, locked, tx
    from backend.store.models import (
        Account,
        Event,
        Job,
        Media,
        MediaHold,
        Post,
        PostTarget,
        PublishAttempt,
        WebhookEndpoint,
    )
    from backend.store.shapes import insert_shape

    with tempfile.TemporaryDirectory(prefix="socialpub-shapes-") as tmp:
        data_dir = Path(tmp) / "data"
        os.environ["SOCIALPUB_DATA_DIR"] = str(data_dir)
        os.environ.pop("SOCIALPUB_DATABASE_URL", None)
        get_settings.cache_clear()
        settings = bench_settings(data_dir)
        ws = prepare_workspace(settings, with_video=True)
        post_ids = queue_posts(settings, ws, [None] * 20, platforms=list(PLATFORMS))
        target = PostTarget.select().where(PostTarget.post == post_ids[7]).first()
        with tx():
            job = queue.enqueue("bench.shapes", {})
        job_id, holder, post_id, target_id = job.id, "nobody#1", target.post_id, target.id

        statements: dict[str, dict[str, Callable[[], Any]]] = {
            "fence read (queue.hold)": {
                "query": lambda: locked(
                    Job.select(Job.status, Job.lease_until).where(
                        (Job.id == job_id) & (Job.locked_by == holder)
                    )
                ).limit(1),
                "shape": lambda: queue._HOLD.first(id=job_id, by=holder),
            },
            "job result (queue.complete)": {
                "query": lambda: Job.update(
                    status=JobStatus.DONE, lease_until=None, updated_at=clock.now(), last_error=None
                ).where((Job.id == job_id) & (Job.locked_by == holder) & (Job.status == JobStatus.RUNNING)),
                "shape": lambda: queue._COMPLETE.run(id=job_id, by=holder, now=clock.now()),
            },
            "post + target locked (apply.lock_target)": {
                "query": lambda: locked(
                    Post.select(*POST_STATE, *APPLY_TARGET)
                    .join(PostTarget, on=(PostTarget.post == Post.id), attr="locked_target")
                    .where((Post.id == post_id) & (PostTarget.id == target_id))
                ).limit(1),
                "shape": lambda: lock_target(post_id, target_id, *APPLY_TARGET),
            },
            "joined target load (engine._load)": {
                "query": lambda: (
                    PostTarget.select(*engine._LOAD)
                    .join(Post, on=(PostTarget.post == Post.id))
                    .switch(PostTarget)
                    .join(Account, JOIN.LEFT_OUTER, on=(PostTarget.account == Account.id))
                    .where(PostTarget.id == target_id)
                    .limit(1)
                ),
                "shape": lambda: engine._load(target_id),
            },
            "siblings' statuses (apply.settle_post)": {
                "query": lambda: PostTarget.select(PostTarget.status).where(PostTarget.post == post_id),
                "shape": lambda: [t.status for t in _SIBLING_STATUSES.rows(post=post_id)],
            },
        }

        outcome = {  # a success's columns (decide.final), for a target that does not exist: no row written
            "status": "succeeded",
            "external_post_id": "ext-1",
            "post_url": "https://example.invalid/p/1",
            "fail_reason": None,
            "fail_type": None,
            "network_status": "published",
            "completed_at": clock.now(),
            "updated_at": clock.now(),
            "started_at": clock.now(),
            "next_attempt_at": None,
        }
        columns = tuple(sorted(outcome))

        def job_row() -> dict[str, Any]:
            now = clock.now()
            return dict(
                id=new_id("job"), kind="bench.shapes", payload={"target_id": target_id}, status="queued",
                run_at=now, workspace_id=ws.id, dedupe_key=new_id("key"), max_attempts=5, attempts=0,
                last_error=None, lane="facebook", created_at=now, updated_at=now,
            )  # fmt: skip

        def event_row() -> dict[str, Any]:
            return dict(
                id=new_id("evt"), workspace_id=ws.id, type="post.target.succeeded",
                data={"postId": post_id, "targetId": target_id, "status": "succeeded"}, subject_id=post_id,
                created_at=clock.now(),
            )  # fmt: skip

        statements.update(
            {
                "outcome's target update (apply, a success)": {
                    "query": lambda: PostTarget.update(**outcome).where(
                        (PostTarget.id == "tgt_none") & PostTarget.status.not_in(("succeeded", "failed"))
                    ),
                    "shape": lambda: _outcome_shape(columns, False).run(target="tgt_none", **outcome),
                },
                "follow-up job insert (queue.enqueue_many, 1 row)": {
                    "query": lambda: Job.insert_many([job_row()]).on_conflict_ignore(),
                    "shape": lambda: insert_shape(Job, 1, if_absent=True).insert([job_row()]),
                },
                "attempt insert (engine._start_attempt)": {
                    "query": lambda: PublishAttempt.insert(
                        id=new_id("att"), target=target_id, account=target.account_id, started_at=clock.now()
                    ),
                    "shape": lambda: engine._ATTEMPT_INSERT.insert(
                        [
                            dict(
                                id=new_id("att"),
                                target=target_id,
                                account=target.account_id,
                                started_at=clock.now(),
                            )
                        ]
                    ),
                },
                "event insert (events.record)": {
                    "query": lambda: Event.insert(**event_row()),
                    "shape": lambda: events._EVENT_INSERT.insert([event_row()]),
                },
                "event's endpoints read (events.record)": {
                    "query": lambda: WebhookEndpoint.select(
                        WebhookEndpoint.id, WebhookEndpoint.event_types
                    ).where(
                        (WebhookEndpoint.workspace == ws.id) & (WebhookEndpoint.enabled == True)  # noqa: E712
                    ),
                    "shape": lambda: events._ENDPOINTS[False].rows(workspace=ws.id),
                },
            }
        )

        # speed6: the post's media holds and their release, its accounts, the heartbeat (the engine's and the
        # media service's statements as they were written before, each against its shape)
        account_ids = sorted({a.id for a in Account.select(Account.id).where(Account.workspace == ws.id)})[:5]
        video = Media.select().where(Media.workspace == ws.id).first()
        keys = [video.key, "med_none_k.mp4"]
        now = clock.now()
        ref = f"post:{post_id}"
        locks = [f"nobody#{i}" for i in range(8)]
        # a target of another post: the attempt INSERTs above give `target_id` thousands of open attempts
        fresh_target = PostTarget.select(PostTarget.id).where(PostTarget.post == post_ids[8]).first().id
        with tx():
            media.hold(ws.id, keys, None, "bench:upsert1")
            media.hold(ws.id, keys, None, "bench:upsert2")

        def hold_rows() -> list[dict[str, Any]]:
            at = clock.now()  # two holds of the file (refs of two posts): each replaced by the upsert
            return [
                {"media": video.id, "ref": f"bench:upsert{i}", "until": None, "created_at": at}
                for i in (1, 2)
            ]

        statements.update(
            {
                "post's accounts (engine.start_post, 5 accounts)": {
                    "query": lambda: Account.select().where(Account.id.in_(account_ids)),
                    "shape": lambda: engine._ACCOUNTS.rows(ids=account_ids),
                },
                "holds of a post (media.release)": {
                    "query": lambda: MediaHold.select(MediaHold.media).where(MediaHold.ref == ref),
                    "shape": lambda: media._HOLDS_OF_REF.rows(ref=ref),
                },
                "holds ended (media.release)": {
                    "query": lambda: MediaHold.update(until=now).where(MediaHold.ref == "bench:none"),
                    "shape": lambda: media._END_HOLDS.run(until=now, ref="bench:none"),
                },
                "files by id (media._refresh)": {
                    "query": lambda: Media.select().where(Media.id.in_([video.id])),
                    "shape": lambda: media._MEDIA_OF_IDS.rows(ids=[video.id]),
                },
                "a file held without limit? (media._refresh)": {
                    "query": lambda: (
                        MediaHold.select(MediaHold.media)
                        .where((MediaHold.media == video.id) & MediaHold.until.is_null())
                        .limit(1)
                    ),
                    "shape": lambda: media._HELD_WITHOUT_LIMIT.first(media=video.id),
                },
                "a file's latest hold (media._refresh)": {
                    "query": lambda: MediaHold.select(sql_fn.MAX(MediaHold.until).alias("latest")).where(
                        MediaHold.media == video.id
                    ),
                    "shape": lambda: media._LATEST_HOLD.first(media=video.id),
                },
                "a file's deadline (media._refresh)": {
                    "query": lambda: Media.update(expires_at=now).where(Media.id == "med_none"),
                    "shape": lambda: media._SET_EXPIRY.run(expires=now, media="med_none"),
                },
                "keys of the files (media.release)": {
                    "query": lambda: Media.select(Media.key).where(Media.id.in_([video.id])),
                    "shape": lambda: media._KEYS_OF_IDS.rows(ids=[video.id]),
                },
                "a target's unresolved attempts (apply.unresolved_attempts)": {
                    "query": lambda: (
                        PublishAttempt.select()
                        .where((PublishAttempt.target == fresh_target) & PublishAttempt.finished_at.is_null())
                        .order_by(PublishAttempt.started_at, PublishAttempt.id)
                    ),
                    "shape": lambda: unresolved_attempts(fresh_target),
                },
                "heartbeat renewal (queue.renew_all, 8 claims)": {
                    "query": lambda: (
                        Job.update(lease_until=now, updated_at=now)
                        .where(Job.locked_by.in_(locks) & (Job.status == JobStatus.RUNNING))
                        .returning(Job.id)
                    ),
                    "shape": lambda: queue._RENEW_ALL.rows(locks=locks, until=now, now=now),
                },
                "a file by key or id (media.get_media, 2 a POST)": {
                    "query": lambda: (
                        Media.select()
                        .where(
                            ((Media.key == video.key) | (Media.id == video.key))
                            & (Media.workspace == ws.id)
                            & (Media.expires_at.is_null() | (Media.expires_at > now))
                        )
                        .limit(1)
                    ),
                    "shape": lambda: media._MEDIA_BY_KEY_OR_ID.first(key=video.key, workspace=ws.id, now=now),
                },
                "live files by key (media.hold, 2 keys)": {
                    "query": lambda: Media.select().where(
                        (Media.workspace == ws.id)
                        & Media.key.in_(keys)
                        & (Media.expires_at.is_null() | (Media.expires_at > now))
                    ),
                    "shape": lambda: media._LIVE_OF_KEYS.rows(workspace=ws.id, keys=keys, now=now),
                },
                "holds' upsert (media.hold, 2 files)": {
                    "query": lambda: (
                        MediaHold.insert_many(hold_rows())
                        .on_conflict(
                            conflict_target=[MediaHold.media, MediaHold.ref],
                            update={MediaHold.until: EXCLUDED.until},
                        )
                        .as_rowcount()
                    ),
                    "shape": lambda: insert_shape(
                        MediaHold, 2, conflict=media._HOLD_KEY, replace=(MediaHold.until,)
                    ).insert(hold_rows()),
                },
            }
        )

        def executed(build: Callable[[], Any]) -> Callable[[], Any]:
            def run() -> Any:
                q = build()
                result = q.execute()
                return result if isinstance(result, int) else list(result)

            return run

        out: dict[str, Any] = {}
        for name, forms in statements.items():
            build = forms["query"]
            built = build()
            ctx_of = database.obj.get_sql_context
            kinds = {
                "peewee": executed(build),
                "build": build,
                "render": lambda built=built, ctx_of=ctx_of: ctx_of().sql(built).query(),
                "shape": forms["shape"],
            }
            rounds: dict[str, list[float]] = {k: [] for k in kinds}
            for fn in kinds.values():
                fn()  # warm: the shape rendered once, caches filled
            for _ in range(args.repeat):
                for kind, fn in kinds.items():  # interleaved
                    rounds[kind].append(round(cpu_us(fn, args.n), 1))
            medians = {k: statistics.median(v) for k, v in rounds.items()}
            out[name] = {"median_us": medians, "rounds_us": rounds, "a_target": STATEMENTS_A_TARGET[name]}
            print(
                f"{name}: peewee {medians['peewee']:.0f} µs (build {medians['build']:.0f}, render "
                f"{medians['render']:.0f}) -> shape {medians['shape']:.0f} µs"
            )
        per_target = {
            k: round(sum(v["median_us"][k] * v["a_target"] for v in out.values()) / 1000, 2)
            for k in ("peewee", "build", "render", "shape")
        }
        print(f"these statements a target (ms): {per_target}")
        result = {
            "commit": commit(),
            "machine": machine(),
            "n": args.n,
            "repeat": args.repeat,
            "statements": out,
            "a_target_ms": per_target,
        }
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
        print(f"results: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
