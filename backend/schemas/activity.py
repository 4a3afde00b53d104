"""GET /v1/activity (a socialpub extension): the workspace's publishing outcomes per local day, and its latest
failures — what a dashboard plots without paging through every post."""

from __future__ import annotations

from pydantic import Field

from backend.schemas.common import CamelOut, NetworkName, Timestamp


class PostCounts(CamelOut):
    """Posts that finished, by final status (spec 3.1)."""

    completed: int = 0
    partial: int = 0
    failed: int = 0


class TargetCounts(CamelOut):
    """The targets of those posts, by final status (spec 3.2)."""

    succeeded: int = 0
    inbox_delivered: int = 0
    failed: int = 0


class ActivityDay(CamelOut):
    date: str = Field(
        description="the local day, `YYYY-MM-DD` in `timezone`", json_schema_extra={"format": "date"}
    )
    start: Timestamp = Field(description="local midnight of that day, in UTC (inclusive)")
    end: Timestamp = Field(
        description="local midnight of the next day, in UTC (exclusive); a day of a DST "
        "change lasts 23 or 25 hours"
    )
    posts: PostCounts
    targets: TargetCounts


class ActivityTotals(CamelOut):
    posts: PostCounts
    targets: TargetCounts
    success_rate: float | None = Field(
        description="succeeded and inbox_delivered targets over all finished "
        "targets of the period, 0 to 1; null when none finished"
    )


class ActivityFailure(CamelOut):
    post_id: str
    platform: NetworkName
    account_id: str | None
    account_name: str
    fail_reason: str | None
    fail_type: str | None = Field(description="`retriable` or `permanent`")
    completed_at: Timestamp | None = Field(description="when the target failed")


class ActivityOut(CamelOut):
    days: int = Field(description="how many local days, today included")
    timezone: str = Field(description="the IANA zone the days are counted in")
    start: Timestamp = Field(description="local midnight of the first day, in UTC")
    end: Timestamp = Field(description="local midnight after today, in UTC")
    per_day: list[ActivityDay] = Field(
        description="one entry per local day, oldest first, days without activity included (zero counts)"
    )
    totals: ActivityTotals
    failures: list[ActivityFailure] = Field(
        description="the failed targets of the posts that finished in the period, newest first"
    )
