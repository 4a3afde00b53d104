"""Series and times: wall-clock times in the file's zone, DST gaps and overlaps, until/count, cron, bounds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from recipes import series
from recipes.schema import Repeat

PARIS, NEW_YORK = ZoneInfo("Europe/Paris"), ZoneInfo("America/New_York")


def rep(**kw: object) -> Repeat:
    return Repeat.model_validate(kw)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


@pytest.mark.parametrize(
    "zone, start, until, winter, summer",
    [
        # Europe/Paris: summer time from 2027-03-28, back to winter time on 2027-10-31
        (PARIS, "2027-03-16", "2027-04-06", timedelta(hours=1), timedelta(hours=2)),
        (PARIS, "2027-10-19", "2027-11-09", timedelta(hours=2), timedelta(hours=1)),
        # America/New_York: daylight time from 2027-03-14, back on 2027-11-07
        (NEW_YORK, "2027-03-02", "2027-03-23", timedelta(hours=-5), timedelta(hours=-4)),
        (NEW_YORK, "2027-10-26", "2027-11-16", timedelta(hours=-4), timedelta(hours=-5)),
    ],
)
def test_weekly_series_keeps_the_wall_clock_across_dst(zone, start, until, winter, summer) -> None:
    locals_ = series.local_times(rep(every="week", on=["tue"], times=["09:00"], start=start, until=until))
    assert len(locals_) == 4
    instants = [series.to_utc(w, zone) for w in locals_]
    walls = [i.astimezone(zone) for i in instants]
    assert all((w.hour, w.minute) == (9, 0) for w in walls)
    assert all(w.weekday() == 1 for w in walls)
    offsets = [w.utcoffset() for w in walls]
    assert offsets[:2] == [winter, winter] and offsets[2:] == [
        summer,
        summer,
    ]  # the change is between weeks 2 and 3
    assert instants[2] - instants[1] == timedelta(days=7) - (summer - winter)


def test_a_nonexistent_time_moves_to_the_first_valid_minute_after() -> None:
    # 2027-03-28 in Paris: 02:00 → 03:00, so 02:30 does not exist
    assert not series.exists(datetime(2027, 3, 28, 2, 30), PARIS)
    assert series.to_utc(datetime(2027, 3, 28, 2, 30), PARIS) == utc(2027, 3, 28, 1, 0)  # 03:00 CEST
    assert series.to_utc(datetime(2027, 3, 28, 2, 0), PARIS).astimezone(PARIS).strftime("%H:%M") == "03:00"
    # New York, 2027-03-14: 02:00 → 03:00
    assert (
        series.to_utc(datetime(2027, 3, 14, 2, 15), NEW_YORK).astimezone(NEW_YORK).strftime("%H:%M")
        == "03:00"
    )
    # a daily series at 02:30 across the change: every day 02:30 but that one
    days = series.local_times(rep(every="day", times=["02:30"], start="2027-03-27", count=3))
    walls = [series.to_utc(d, PARIS).astimezone(PARIS).strftime("%m-%d %H:%M") for d in days]
    assert walls == ["03-27 02:30", "03-28 03:00", "03-29 02:30"]


def test_an_ambiguous_time_takes_the_first_occurrence() -> None:
    # 2027-10-31 in Paris: 03:00 CEST → 02:00 CET, so 02:30 happens twice; the first is 00:30Z (CEST)
    assert series.is_ambiguous(datetime(2027, 10, 31, 2, 30), PARIS)
    assert series.to_utc(datetime(2027, 10, 31, 2, 30), PARIS) == utc(2027, 10, 31, 0, 30)
    # New York, 2027-11-07: 01:30 EDT first (05:30Z), then 01:30 EST (06:30Z)
    assert series.to_utc(datetime(2027, 11, 7, 1, 30), NEW_YORK) == utc(2027, 11, 7, 5, 30)
    assert not series.is_ambiguous(datetime(2027, 11, 7, 9, 0), NEW_YORK)


def test_times_on_several_days_and_several_clocks_in_order() -> None:
    got = series.local_times(
        rep(every="week", on=["fri", "tue"], times=["17:30", "09:00"], start="2027-01-05", until="2027-01-08")
    )
    assert got == [
        datetime(2027, 1, 5, 9),
        datetime(2027, 1, 5, 17, 30),
        datetime(2027, 1, 8, 9),
        datetime(2027, 1, 8, 17, 30),
    ]


def test_until_is_inclusive_and_count_counts_date_times() -> None:
    r = rep(every="day", times=["09:00"], start="2027-01-01", until="2027-01-03")
    assert [d.day for d in series.local_times(r)] == [1, 2, 3]
    r = rep(every="day", times=["09:00", "18:00"], start="2027-01-01", count=3)
    assert series.local_times(r) == [
        datetime(2027, 1, 1, 9),
        datetime(2027, 1, 1, 18),
        datetime(2027, 1, 2, 9),
    ]


def test_week_without_on_uses_the_start_day_and_interval_skips_weeks() -> None:
    r = rep(every="week", times=["10:00"], start="2027-01-06", count=3, interval=2)  # a Wednesday
    assert [d.date().isoformat() for d in series.local_times(r)] == ["2027-01-06", "2027-01-20", "2027-02-03"]


def test_month_days_skip_short_months_and_minus_one_is_the_last_day() -> None:
    r = rep(every="month", on=[31], times=["09:00"], start="2027-01-01", until="2027-05-31")
    assert [d.month for d in series.local_times(r)] == [1, 3, 5]
    r = rep(every="month", on=[-1, 1], times=["09:00"], start="2027-01-01", count=4)
    assert [d.date().isoformat() for d in series.local_times(r)] == [
        "2027-01-01",
        "2027-01-31",
        "2027-02-01",
        "2027-02-28",
    ]


def test_cron_in_local_time() -> None:
    r = rep(cron="0 9 * * 1-5", start="2027-01-01", until="2027-01-08")  # Friday 1st to Friday 8th
    got = series.local_times(r)
    assert [d.day for d in got] == [1, 4, 5, 6, 7, 8] and all(d.hour == 9 for d in got)
    r = rep(cron="30 17 1 * *", start="2027-01-01", count=3)
    assert series.local_times(r) == [datetime(2027, m, 1, 17, 30) for m in (1, 2, 3)]


def test_cron_across_dst_keeps_the_wall_clock() -> None:
    r = rep(cron="0 9 * * sun", start="2027-03-21", count=2)
    a, b = (series.to_utc(d, PARIS) for d in series.local_times(r))
    assert (a.hour, b.hour) == (8, 7)  # 09:00 CET, then 09:00 CEST


def test_a_cron_that_never_matches_is_an_error() -> None:
    with pytest.raises(series.CronNeverMatches):
        series.local_times(rep(cron="0 9 30 2 *", start="2027-01-01", count=2))


def test_a_series_is_capped() -> None:
    r = rep(every="day", times=["09:00", "12:00"], start="2027-01-01", until="2028-12-31")
    with pytest.raises(series.SeriesTooLong, match="1,000"):
        series.local_times(r)
    assert len(series.local_times(rep(every="day", times=["09:00"], start="2027-01-01", count=1000))) == 1000


def test_at_local_and_with_offset() -> None:
    assert series.at_instant("2027-01-15 09:00", PARIS) == (utc(2027, 1, 15, 8), datetime(2027, 1, 15, 9))
    assert series.at_instant("2027-07-15T09:00", PARIS)[0] == utc(2027, 7, 15, 7)
    # with an offset the zone does not matter for the instant; the wall clock is shown in the zone
    assert series.at_instant("2027-01-15T09:00:00-05:00", PARIS) == (
        utc(2027, 1, 15, 14),
        datetime(2027, 1, 15, 15),
    )
    assert series.at_instant("2027-01-15T08:00:00Z", NEW_YORK)[0] == utc(2027, 1, 15, 8)
    assert series.at_instant("2027-03-28 02:30", PARIS)[0] == utc(2027, 3, 28, 1)  # the gap
    with pytest.raises(ValueError):
        series.parse_at("2027-01-15T09:00:00.000")
