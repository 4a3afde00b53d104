"""The status vocabulary: one `StrEnum` per thing that has a status, and its final sets beside it.

Each member is the string the wire, the store and the logs carry (a `StrEnum` member *is* that string: it
compares equal to it, formats as it and is stored as it), so the API, the services, the engine, the client and
the TUI say a status one way. The store keeps plain strings (it imports no wire-format module); what it holds
are these values. Pure Python: no pydantic, no store.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal


class PostStatus(StrEnum):
    """A post's status (spec 2.4): scheduled -> processing -> completed | partial | failed; cancelled before."""

    SCHEDULED = "scheduled"
    PROCESSING = "processing"
    COMPLETED = "completed"
    PARTIAL = "partial"
    FAILED = "failed"
    CANCELLED = "cancelled"


POST_OUTCOMES: tuple[PostStatus, ...] = (PostStatus.COMPLETED, PostStatus.PARTIAL, PostStatus.FAILED)
"""The final statuses a publication ends in (a cancelled post was never published)."""
POST_FINAL: frozenset[PostStatus] = frozenset({*POST_OUTCOMES, PostStatus.CANCELLED})
"""A post in one of these never changes again."""


class TargetStatus(StrEnum):
    """One network target of a post: pending -> publishing -> succeeded | inbox_delivered | failed."""

    PENDING = "pending"
    PUBLISHING = "publishing"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    INBOX_DELIVERED = "inbox_delivered"


TARGET_SUCCESS: tuple[TargetStatus, ...] = (TargetStatus.SUCCEEDED, TargetStatus.INBOX_DELIVERED)
"""A target that reached the network (in the feed, or in the creator's inbox)."""
TARGET_FINAL: tuple[TargetStatus, ...] = (*TARGET_SUCCESS, TargetStatus.FAILED)
"""A target in one of these is done: it is never published again (in this order in the activity counts)."""


class JobStatus(StrEnum):
    """A durable job: queued -> running -> done | dead (a retry puts a running job back to queued)."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    DEAD = "dead"


JOB_FINAL: frozenset[JobStatus] = frozenset({JobStatus.DONE, JobStatus.DEAD})
"""A job in one of these is never claimed again (a dead one may be enqueued anew under its dedupe key)."""


class GenerationStatus(StrEnum):
    """A media generation: pending -> processing -> completed | failed."""

    PENDING = "pending"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"


GENERATION_FINAL: frozenset[GenerationStatus] = frozenset(
    {GenerationStatus.COMPLETED, GenerationStatus.FAILED}
)
"""A generation in one of these has its result (or its failure) and never changes again."""


# The wire's field types: each enum's members spelled as a `Literal`, so the OpenAPI document states the values
# inline (as it always did) while a parsed body carries the enum's members.
PostStatusValue = Literal[
    PostStatus.SCHEDULED,
    PostStatus.PROCESSING,
    PostStatus.COMPLETED,
    PostStatus.PARTIAL,
    PostStatus.FAILED,
    PostStatus.CANCELLED,
]
TargetStatusValue = Literal[
    TargetStatus.PENDING,
    TargetStatus.PUBLISHING,
    TargetStatus.SUCCEEDED,
    TargetStatus.FAILED,
    TargetStatus.INBOX_DELIVERED,
]
GenerationStatusValue = Literal[
    GenerationStatus.PENDING, GenerationStatus.PROCESSING, GenerationStatus.COMPLETED, GenerationStatus.FAILED
]

__all__ = [
    "GENERATION_FINAL",
    "JOB_FINAL",
    "POST_FINAL",
    "POST_OUTCOMES",
    "TARGET_FINAL",
    "TARGET_SUCCESS",
    "GenerationStatus",
    "GenerationStatusValue",
    "JobStatus",
    "PostStatus",
    "PostStatusValue",
    "TargetStatus",
    "TargetStatusValue",
]
