"""The publishing engine: moves posts from `scheduled`/`processing` to `completed`, `partial` or `failed`.

One job per target, so one slow network never holds up the others (jobs are durable rows, backend/jobs/queue.py):
- `post.publish` {post_id}, due at `scheduledAt` (or now): one transaction turns the post `processing`
  (lateness recorded), releases its media to the retention rule, and enqueues one `target.publish` job per
  open target on its network's lane (`target.track` for targets the network accepted already).
- `target.publish` {target_id}: records an attempt (`publish_attempt`) and marks the target `publishing` in
  its own transaction BEFORE the call; reconciles first when an earlier attempt never recorded its outcome
  (`find_existing` from that attempt's start; publish again only when the network confirms it absent, which
  counts only once the network's listing delay has passed since that call was over: TikTok lists a post only
  once processed); calls the network; applies the outcome. A target that waits (backoff, a daily cap's
  Retry-After, a listing not conclusive yet) is `pending` with `next_attempt_at`.
- `target.track` {target_id}: follows asynchronous processing (TikTok, Instagram containers, YouTube, LinkedIn
  assets) until confirmation, or fails `retriable` past the platform's deadline. Where the network then waits
  for a publishing call (LinkedIn /posts, Instagram media_publish: `ready`), that call is an attempt exactly
  like target.publish's.

Decide, then apply: `decide` (pure) turns a target's state and an outcome into a Decision (column values,
events, follow-up jobs, account change); `apply.apply` writes it in one transaction, fenced (a final target is
never reopened) and settling the post when its last target becomes final. Every target outcome records a
`publish.completed` / `publish.failed` event in that transaction.
"""

from backend.services.publishing.apply import apply, settle_post, track_poll_s
from backend.services.publishing.decide import Decision, track_deadline_s
from backend.services.publishing.engine import (
    build_publication,
    give_up,
    give_up_post,
    media_refs,
    publish_target,
    start_post,
    track_target,
)

__all__ = [
    "track_deadline_s",
    "Decision",
    "apply",
    "build_publication",
    "give_up",
    "give_up_post",
    "media_refs",
    "publish_target",
    "settle_post",
    "start_post",
    "track_poll_s",
    "track_target",
]
