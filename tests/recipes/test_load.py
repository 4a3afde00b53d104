"""load(): occurrences from valid files, every problem of an invalid one at its line and column."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from recipes.load import load
from recipes.model import Problem
from tests.support.networks import catalogue

from .conftest import EXAMPLES, media_bytes


def problems(loaded) -> list[tuple[int, int, str]]:  # type: ignore[no-untyped-def]
    return [(p.line, p.column, p.code) for p in loaded.problems]


def only(loaded) -> Problem:  # type: ignore[no-untyped-def]
    assert len(loaded.problems) == 1, loaded.problems
    return loaded.problems[0]


# ---- valid files --------------------------------------------------------------------------------------


def test_an_entry_with_at_becomes_one_occurrence(load_text, folder: Path) -> None:
    loaded = load_text("""
        timezone: Europe/Paris
        posts:
          - id: launch
            content: "Our {weekday} launch! {file.stem}"
            media: [images/a.jpg, clips/*.mp4]
            targets: [instagram, {platform: linkedin, channelId: acc_123}]
            options: {tiktok: {privacyLevel: PUBLIC_TO_EVERYONE}}
            at: "2027-01-15 09:00"
    """)
    assert loaded.problems == []
    assert loaded.set_name == "shop" and loaded.root == folder
    (o,) = loaded.occurrences
    assert o.key == "shop/posts.yaml#launch"
    assert (o.set_name, o.file, o.entry, o.line, o.local, o.zone) == (
        "shop",
        "posts.yaml",
        "launch",
        3,
        None,
        "Europe/Paris",
    )
    assert o.scheduled_at == datetime(2027, 1, 15, 8, 0, tzinfo=UTC)
    assert o.content == "Our Friday launch! a"
    assert o.media == tuple(
        Path(os.path.abspath(folder / p)) for p in ("images/a.jpg", "clips/one.mp4", "clips/two.mp4")
    )
    assert all(p.is_absolute() for p in o.media)
    assert o.targets == ("instagram", {"platform": "linkedin", "channelId": "acc_123"})
    assert o.options == {"tiktok": {"privacyLevel": "PUBLIC_TO_EVERYONE"}}


def test_a_series_becomes_one_occurrence_per_date_time_with_keyed_local_times(load_text) -> None:
    loaded = load_text("""
        timezone: Europe/Paris
        posts:
          - id: weekly-tip
            content: "Tip {n}/{total} on {weekday} at {time}"
            targets: [facebook]
            repeat:
              every: week
              on: [tue, fri]
              times: ["09:00", "17:30"]
              start: "2027-01-05"
              until: "2027-01-08"
    """)
    assert loaded.problems == []
    keys = [o.key for o in loaded.occurrences]
    assert keys == [
        "shop/posts.yaml#weekly-tip@2027-01-05T09:00",
        "shop/posts.yaml#weekly-tip@2027-01-05T17:30",
        "shop/posts.yaml#weekly-tip@2027-01-08T09:00",
        "shop/posts.yaml#weekly-tip@2027-01-08T17:30",
    ]
    assert [o.content for o in loaded.occurrences][::3] == [
        "Tip 1/4 on Tuesday at 09:00",
        "Tip 4/4 on Friday at 17:30",
    ]
    assert loaded.occurrences[0].local == datetime(2027, 1, 5, 9, 0)
    assert loaded.occurrences[0].scheduled_at == datetime(2027, 1, 5, 8, 0, tzinfo=UTC)


def test_a_series_across_dst_keeps_09_00_and_moves_its_utc_offset(load_text) -> None:
    loaded = load_text("""
        timezone: America/New_York
        posts:
          - id: tip
            content: "{date} {time} {weekday}"
            targets: [facebook]
            repeat: {every: week, on: [sun], times: ["09:00", "02:30"], start: "2027-03-07", count: 4}
          - {id: gap, content: "{time}", targets: [facebook], at: "2027-03-14 02:30"}
          - {id: twice, content: "{time}", targets: [facebook], at: "2027-11-07 01:30"}
    """)
    assert loaded.problems == []
    by_key = {o.key: o for o in loaded.occurrences}
    before, after = (
        by_key["shop/posts.yaml#tip@2027-03-07T09:00"],
        by_key["shop/posts.yaml#tip@2027-03-14T09:00"],
    )
    assert before.scheduled_at == datetime(2027, 3, 7, 14, 0, tzinfo=UTC)  # EST, UTC-5
    assert after.scheduled_at == datetime(2027, 3, 14, 13, 0, tzinfo=UTC)  # EDT, UTC-4
    assert (before.content, after.content) == ("2027-03-07 09:00 Sunday", "2027-03-14 09:00 Sunday")
    # 02:30 does not exist on 2027-03-14: the occurrence keeps its key and goes out at 03:00
    skipped = by_key["shop/posts.yaml#tip@2027-03-14T02:30"]
    assert skipped.local == datetime(2027, 3, 14, 2, 30) and skipped.content == "2027-03-14 03:00 Sunday"
    assert skipped.scheduled_at == datetime(2027, 3, 14, 7, 0, tzinfo=UTC)
    assert by_key["shop/posts.yaml#gap"].content == "03:00"
    twice = by_key["shop/posts.yaml#twice"]  # 01:30 happens twice on 2027-11-07: the first, EDT
    assert twice.scheduled_at == datetime(2027, 11, 7, 5, 30, tzinfo=UTC)
    assert twice.scheduled_at.astimezone(ZoneInfo("America/New_York")).utcoffset() == timedelta(hours=-4)


def test_yaml_1_2_reading_on_is_a_key_and_times_and_dates_are_text(load_text) -> None:
    loaded = load_text("""
        timezone: Europe/Paris
        posts:
          - id: tip
            content: x
            targets: [facebook]
            repeat: {every: week, on: [mon], times: [9:00, 17:30], start: 2027-01-04, count: 2}
    """)
    assert loaded.problems == []
    assert [o.local for o in loaded.occurrences] == [datetime(2027, 1, 4, 9), datetime(2027, 1, 4, 17, 30)]


def test_past_occurrences_are_included(load_text) -> None:
    loaded = load_text("""
        posts:
          - {id: old, content: x, targets: [facebook], at: "2001-01-01 09:00"}
    """)
    assert [o.scheduled_at.year for o in loaded.occurrences] == [2001]


def test_defaults_merge_lists_replaced_options_merged_per_setting(load_text) -> None:
    loaded = load_text("""
        timezone: UTC
        defaults:
          targets: [facebook, {platform: linkedin, channelId: acc_123}]
          content: "from defaults {id}"
          media: [images/a.jpg]
          options: {youtube: {privacyStatus: unlisted, madeForKids: false}, tiktok: {privacyLevel: SELF_ONLY}}
        posts:
          - id: inherits
            at: "2027-01-15 09:00"
          - id: own
            content: own
            media: [clips/one.mp4]
            targets: [youtube]
            options: {youtube: {title: Hi, madeForKids: true}}
            at: "2027-01-15 09:00"
    """)
    assert loaded.problems == []
    inherits, own = loaded.occurrences
    assert inherits.targets == ("facebook", {"platform": "linkedin", "channelId": "acc_123"})
    assert inherits.content == "from defaults inherits"
    assert [p.name for p in inherits.media] == ["a.jpg"]
    assert own.targets == ("youtube",) and own.content == "own" and [p.name for p in own.media] == ["one.mp4"]
    assert own.options == {
        "youtube": {"privacyStatus": "unlisted", "madeForKids": True, "title": "Hi"},
        "tiktok": {"privacyLevel": "SELF_ONLY"},
    }


def test_tiktok_privacy_is_a_shorthand_for_privacy_level(load_text) -> None:
    """TikTok makes the creator choose who sees a direct post: a recipe says it as `privacy` (or privacyLevel)."""
    loaded = load_text("""
        timezone: UTC
        posts:
          - id: mine
            content: a
            targets: [tiktok]
            media: [clips/one.mp4]
            options: {tiktok: {privacy: SELF_ONLY}}
            at: "2027-01-15 09:00"
    """)
    assert loaded.problems == []
    assert loaded.occurrences[0].options == {"tiktok": {"privacyLevel": "SELF_ONLY"}}
    bad = load_text("""
        timezone: UTC
        posts:
          - id: mine
            content: a
            targets: [tiktok]
            media: [clips/one.mp4]
            options: {tiktok: {privacy: FRIENDS}}
            at: "2027-01-15 09:00"
    """)
    (problem,) = bad.problems
    assert "SELF_ONLY" in str(problem) and "FRIENDS" in str(problem)


def test_youtube_privacy_is_a_shorthand_for_privacy_status(load_text) -> None:
    """The issue's own example writes `options: {youtube: {privacy: unlisted}}`: accepted, sent as privacyStatus."""
    loaded = load_text("""
        timezone: UTC
        defaults:
          targets: [youtube]
          media: [clips/one.mp4]
          options: {youtube: {privacy: unlisted}}
        posts:
          - id: inherits
            content: a
            at: "2027-01-15 09:00"
          - id: own
            content: b
            options: {youtube: {privacy: private, title: Hi}}
            at: "2027-01-15 09:00"
    """)
    assert loaded.problems == []
    inherits, own = loaded.occurrences
    assert inherits.options == {"youtube": {"privacyStatus": "unlisted"}}
    assert own.options == {"youtube": {"privacyStatus": "private", "title": "Hi"}}
    both = load_text(
        """
        timezone: UTC
        posts:
          - id: both
            content: c
            targets: [youtube]
            media: [clips/one.mp4]
            options: {youtube: {privacy: private, privacyStatus: public}}
            at: "2027-01-15 09:00"
    """,
        name="posts.yaml",
    )
    assert [p.message for p in both.problems] == [
        "posts[0].options.youtube: give `privacy` or `privacyStatus`, not both"
    ]


def test_zone_from_the_file_else_the_default_zone_else_utc(load_text, folder: Path) -> None:
    text = """
        posts:
          - {id: a, content: x, targets: [facebook], at: "2027-07-01 09:00"}
    """
    loaded = load_text(text)
    assert (loaded.occurrences[0].zone, loaded.occurrences[0].scheduled_at.hour) == ("UTC", 9)
    loaded = load(folder, networks=catalogue(), default_zone="America/New_York")
    assert (loaded.occurrences[0].zone, loaded.occurrences[0].scheduled_at.hour) == ("America/New_York", 13)
    loaded = load_text(
        "timezone: Asia/Tokyo\n" + text.replace("\n        ", "\n"), default_zone="America/New_York"
    )
    assert (loaded.occurrences[0].zone, loaded.occurrences[0].scheduled_at.hour) == ("Asia/Tokyo", 0)
    with pytest.raises(ValueError, match="unknown time zone"):
        load(folder, networks=catalogue(), default_zone="Mars/Olympus")


def test_a_folder_is_read_recursively_sorted_skipping_hidden(write, folder: Path) -> None:
    entry = "posts:\n  - {id: a, content: x, targets: [facebook], at: '2027-01-15 09:00'}\n"
    for name in (
        "b.yaml",
        "a/z.yml",
        "a/c.yaml",
        ".hidden/x.yaml",
        "a/.git/y.yaml",
        ".dot.yaml",
        "notes.txt",
    ):
        write(entry, name)
    loaded = load(folder, networks=catalogue())
    assert [f.file for f in loaded.files] == ["a/c.yaml", "a/z.yml", "b.yaml"]
    assert [o.key for o in loaded.occurrences][0] == "shop/a/c.yaml#a"


def test_set_name_and_single_file(write, folder: Path) -> None:
    path = write("posts:\n  - {id: a, content: x, targets: [facebook], at: '2027-01-15 09:00'}\n", "one.yaml")
    loaded = load(path, networks=catalogue())
    assert (loaded.root, loaded.set_name, loaded.files[0].file) == (folder, "shop", "one.yaml")
    assert load(path, networks=catalogue(), set_name="brand").occurrences[0].key == "brand/one.yaml#a"
    for bad in ("", "a/b", "x#y"):
        with pytest.raises(ValueError):
            load(path, networks=catalogue(), set_name=bad)


def test_media_paths_are_relative_to_the_file_and_globs_sorted(write, folder: Path) -> None:
    (folder / "sub" / "pics").mkdir(parents=True)
    for n in ("c.jpg", "a.jpg", "b.jpg"):
        (folder / "sub" / "pics" / n).write_bytes(media_bytes(n))
    write(
        """
        posts:
          - {id: a, content: "{files}", media: ["pics/*.jpg"], targets: [facebook], at: "2027-01-15 09:00"}
    """,
        "sub/f.yaml",
    )
    (o,) = load(folder, networks=catalogue()).occurrences
    assert o.content == "a.jpg, b.jpg, c.jpg" and o.file == "sub/f.yaml"


def test_the_examples_validate_clean() -> None:
    loaded = load(EXAMPLES, networks=catalogue())
    assert loaded.problems == []
    assert [f.file for f in loaded.files] == ["launch.yaml", "videos.yaml", "weekly.yaml"]
    assert loaded.set_name == "examples"
    assert len(loaded.occurrences) >= 20
    assert all(o.zone == "Europe/Paris" for o in loaded.occurrences)
    assert all(o.scheduled_at.strftime("%Y-%m") == "2027-01" for o in loaded.occurrences)
    assert all(all(isinstance(t, str) for t in o.targets) for o in loaded.occurrences)
    assert any(o.local is not None for o in loaded.occurrences)
    options = [o.options for o in loaded.occurrences if o.options]
    assert any((o.get("tiktok") or {}).get("postMode") == "MEDIA_UPLOAD" for o in options)  # drafts: any app
    assert any("privacyStatus" in (o.get("youtube") or {}) for o in options)


def test_example_media_are_real_and_small() -> None:
    from PIL import Image

    images = sorted((EXAMPLES / "images").iterdir())
    assert images
    for path in images:
        assert path.stat().st_size < 60_000
        with Image.open(path) as img:
            assert img.format == "JPEG"
    (clip,) = sorted((EXAMPLES / "clips").iterdir())
    assert clip.stat().st_size < 150_000
    import av

    with av.open(str(clip)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264"
        assert 3 <= float(container.duration) / 1_000_000 <= 5  # Reels and LinkedIn want 3 s or more
    from backend.media.probe import probe_video
    from backend.networks import registry
    from backend.networks.base import MediaRef

    info = probe_video(clip)
    ref = MediaRef(
        url="x",
        kind="video",
        width=info.width,
        height=info.height,
        duration_s=info.duration_s,
        frame_rate=info.frame_rate,
        codec=info.video_codec,
        bytes=clip.stat().st_size,
    )
    rules = {n.name: n.network_rules() for n in registry.networks()}
    with_video_rules = {n: r for n, r in rules.items() if r.video}  # Mastodon's are each instance's
    assert {n: r.video.problems(ref) for n, r in with_video_rules.items()} == dict.fromkeys(
        with_video_rules, []
    )


# ---- problems, at their line and column ---------------------------------------------------------------


def test_broken_yaml_is_reported_where_the_unclosed_construct_opened_else_where_the_parser_stopped(
    load_text,
) -> None:
    p = only(load_text("posts:\n  - id: a\n    content: [x\n"))
    assert (p.line, p.column, p.code) == (3, 14, "invalid_yaml") and "gave up at line 4" in p.message
    p = only(load_text("posts:\n  - id: a\n     content: x\n"))
    assert (p.line, p.code) == (3, "invalid_yaml")
    assert p.file == "posts.yaml" and str(p).startswith("posts.yaml:3:")


def test_a_problem_names_the_file_relative_to_the_folder_or_as_given(write, folder: Path) -> None:
    path = write("posts: [1]\n", "sub/x.yaml")
    assert load(folder, networks=catalogue()).problems[0].file == "sub/x.yaml"
    assert load(path, networks=catalogue()).problems[0].file == str(path)


def test_unknown_keys_are_errors_with_a_suggestion(load_text) -> None:
    loaded = load_text("""
        posts:
          - id: a
            contnet: x
            targets: [facebook]
            options: {youtube: {privacyStaus: unlisted}}
            at: "2027-01-15 09:00"
    """)
    assert problems(loaded) == [(2, 5, "invalid_recipe"), (3, 5, "invalid_recipe"), (5, 25, "invalid_recipe")]
    missing, typo, option = (p.message for p in loaded.problems)
    assert "no `content`" in missing
    assert "unknown key `contnet` (did you mean `content`?)" in typo
    assert "posts[0].options.youtube.privacyStaus" in option and "privacyStatus" in option


def test_an_unknown_network_and_bad_option_values(load_text) -> None:
    loaded = load_text("""
        posts:
          - id: a
            content: x
            targets: [facebook, facebok, {platform: tiktak}]
            options:
              tiktok: {privacyLevel: EVERYONE}
            at: "2027-01-15 09:00"
    """)
    assert problems(loaded) == [
        (4, 25, "invalid_recipe"),
        (4, 45, "invalid_recipe"),
        (6, 30, "invalid_recipe"),
    ]
    assert "got 'facebok'" in loaded.problems[0].message
    assert "expected 'bluesky', 'facebook', 'instagram'" in loaded.problems[0].message
    assert "posts[0].targets[2].platform" in loaded.problems[1].message
    assert "PUBLIC_TO_EVERYONE" in loaded.problems[2].message


def test_duplicate_ids_are_reported_at_the_second(load_text) -> None:
    loaded = load_text("""
        posts:
          - {id: a, content: x, targets: [facebook], at: "2027-01-15 09:00"}
          - {id: b, content: x, targets: [facebook], at: "2027-01-15 09:00"}
          - {id: a, content: y, targets: [facebook], at: "2027-01-16 09:00"}
    """)
    p = only(loaded)
    assert (p.line, p.column, p.code) == (4, 10, "duplicate_id")
    assert "first on line 2" in p.message
    assert loaded.occurrences == []  # all-or-nothing per file


def test_missing_media_and_empty_globs_at_their_list_item(load_text) -> None:
    loaded = load_text("""
        posts:
          - id: a
            content: x
            targets: [facebook]
            media:
              - images/a.jpg
              - images/missing.jpg
              - clips/*.mov
            at: "2027-01-15 09:00"
          - {id: b, content: x, targets: [facebook], media: nope.png, at: "2027-01-15 09:00"}
    """)
    assert problems(loaded) == [
        (7, 9, "media_not_found"),
        (8, 9, "media_not_found"),
        (10, 53, "media_not_found"),
    ]
    assert "'images/missing.jpg' not found" in loaded.problems[0].message
    assert "no file matches 'clips/*.mov'" in loaded.problems[1].message


def test_media_the_backend_does_not_accept_are_refused_at_their_list_item(load_text, folder) -> None:
    for name in ("scan.bmp", "notes.txt", "clip.mkv", "clip.avi"):
        (folder / name).write_bytes(b"x")
    loaded = load_text("""
        posts:
          - id: a
            content: x
            targets: [facebook]
            media: [images/a.jpg, scan.bmp, notes.txt]
            at: "2027-01-15 09:00"
          - {id: b, content: x, targets: [facebook], media: ["clip.*"], at: "2027-01-15 09:00"}
    """)
    assert [p.code for p in loaded.problems] == ["unsupported_media_type"] * 3
    assert "'scan.bmp' is not a file the backend accepts (JPEG, PNG" in loaded.problems[0].message


def test_unknown_variable_at_the_content_value(load_text) -> None:
    loaded = load_text("""
        defaults:
          content: "from {defaults_var}"
        posts:
          - id: a
            content: "Our {weekdy} launch"
            targets: [facebook]
            at: "2027-01-15 09:00"
          - {id: b, targets: [facebook], at: "2027-01-15 09:00"}
          - {id: c, content: "{file.stem}", targets: [facebook], at: "2027-01-15 09:00"}
    """)
    assert problems(loaded) == [
        (2, 12, "unknown_variable"),
        (5, 14, "unknown_variable"),
        (9, 22, "unknown_variable"),
    ]
    assert "unknown variable {defaults_var}" in loaded.problems[0].message
    assert (
        "unknown variable {weekdy}" in loaded.problems[1].message
        and "{weekday}" in loaded.problems[1].message
    )
    assert "no media" in loaded.problems[2].message


def test_content_over_a_network_limit_after_substitution(load_text) -> None:
    long_ok = "x" * 2192
    loaded = load_text(f"""
        posts:
          - id: a
            content: "{long_ok} {{month_name}}"
            media: images/a.jpg
            targets: [facebook, instagram]
            repeat: {{every: month, times: ["09:00"], start: "2027-01-01", count: 12}}
    """)
    # 2,193 characters + the month's name: over 2,200 for the 8- and 9-letter names (February, September…)
    p = only(loaded)
    assert (p.line, p.column, p.code) == (3, 14, "content_too_long_for_target")
    assert "instagram allows 2,200" in p.message
    assert (
        "content is 2,201 characters" in p.message
        and "on 2027-02-01 09:00 and 3 more occurrences" in p.message
    )


def test_tiktok_counts_utf16_and_photo_titles(load_text) -> None:
    emoji = "\U0001f600" * 1101  # 2,202 UTF-16 units, 1,101 characters
    loaded = load_text(f"""
        posts:
          - {{id: a, content: "{emoji}", media: clips/one.mp4, targets: [tiktok], at: "2027-01-15 09:00"}}
          - {{id: b, content: "{"y" * 91}", media: images/a.jpg, targets: [tiktok], at: "2027-01-15 09:00"}}
    """)
    assert [(p.line, p.code) for p in loaded.problems] == [
        (2, "content_too_long_for_target"),
        (3, "title_too_long_for_target"),
    ]
    assert "2,202 characters (counted in UTF-16 units); tiktok allows 2,200" in loaded.problems[0].message
    assert "90 at most" in loaded.problems[1].message


def test_media_a_network_requires(load_text) -> None:
    loaded = load_text(
        """
        posts:
          - {id: a, content: x, targets: [facebook, instagram], at: "2027-01-15 09:00"}
          - {id: b, content: x, media: images/a.jpg, targets: [youtube], at: "2027-01-15 09:00"}
          - id: c
            content: x
            media: clips/one.mp4
            targets: [youtube]
            options: {youtube: {title: "%s"}}
            at: "2027-01-15 09:00"
    """
        % ("t" * 101)
    )
    assert problems(loaded) == [
        (2, 45, "media_required_for_target"),
        (3, 56, "video_required_for_target"),
        (8, 32, "title_too_long_for_target"),
    ]


def test_problems_of_defaults_are_reported_once_and_per_entry_where_the_entry_is_the_cause(load_text) -> None:
    loaded = load_text("""
        defaults:
          targets: [instagram]
          content: "{nope} x"
        posts:
          - {id: a, at: "2027-01-15 09:00"}
          - {id: b, at: "2027-01-16 09:00"}
          - {id: c, content: ok, media: images/a.jpg, at: "2027-01-16 09:00"}
    """)
    assert problems(loaded) == [
        (3, 12, "unknown_variable"),
        (5, 5, "media_required_for_target"),
        (6, 5, "media_required_for_target"),
    ]
    assert "instagram (from defaults) needs an image or a video" in loaded.problems[1].message


def test_generate_in_defaults_is_refused(load_text) -> None:
    loaded = load_text("""
        defaults:
          generate: {prompt: "a cup", type: image}
        posts:
          - id: a
            content: x
            targets: [facebook]
            at: "2027-01-15 09:00"
    """)
    p = only(loaded)
    assert (p.line, p.column, p.code) == (2, 13, "not_supported")
    assert "belongs to an entry, not to `defaults`" in p.message


def test_generate_is_read_per_occurrence(load_text, folder) -> None:  # type: ignore[no-untyped-def]
    loaded = load_text("""
        timezone: Europe/Paris
        posts:
          - id: tips
            content: "Tip {n}"
            targets: [youtube]
            repeat: {every: week, on: [tue], times: ["09:00"], start: "2027-01-05", count: 2}
            generate:
              type: video
              prompt: "Coffee tip number {n}, {weekday}"
              durationSec: 10
              sources: [images/a.jpg, "https://cdn.example.com/b.jpg"]
    """)
    assert loaded.problems == []
    first, second = loaded.occurrences
    assert first.generate is not None and second.generate is not None
    assert (first.generate.prompt, second.generate.prompt) == (
        "Coffee tip number 1, Tuesday",
        "Coffee tip number 2, Tuesday",
    )
    assert first.generate.sources == (folder / "images" / "a.jpg", "https://cdn.example.com/b.jpg")
    assert (first.generate.type, first.generate.duration_sec, first.generate.aspect_ratio) == (
        "video",
        10,
        "9:16",
    )
    assert first.media == ()  # the generated video satisfies youtube's "needs a video"
    assert first.generate.body(["u1", "u2"]) == {
        "type": "video",
        "prompt": "Coffee tip number 1, Tuesday",
        "aspectRatio": "9:16",
        "durationSec": 10,
        "sourceUrls": ["u1", "u2"],
    }


def test_generate_errors_with_positions(load_text) -> None:
    loaded = load_text("""
        posts:
          - id: a
            content: x
            targets: [facebook]
            at: "2027-01-15 09:00"
            generate: {type: gif, prompt: "ab", aspectRatio: "4:3", colour: red}
          - id: b
            content: x
            targets: [facebook]
            at: "2027-01-15 09:00"
            generate:
              type: image
              prompt: "a cup {nope}"
          - id: c
            content: x
            targets: [facebook]
            at: "2027-01-15 09:00"
            generate:
              type: image
              durationSec: 10
              prompt: "a cup"
          - id: d
            content: x
            targets: [facebook]
            at: "2027-01-15 09:00"
            generate:
              type: video
              prompt: "beans"
              sources: [missing.jpg, clips/one.mp4, "http://example.com/a.jpg"]
          - id: e
            content: x
            targets: [youtube]
            at: "2027-01-15 09:00"
            generate: {type: image, prompt: "a cup"}
    """)
    found = {(p.line, p.column, p.code): p.message for p in loaded.problems}
    assert (
        found[(6, 22, "invalid_recipe")] == "posts[0].generate.type: expected 'image' or 'video', got 'gif'"
    )
    assert "at least 3 characters" in found[(6, 35, "invalid_recipe")]
    assert (
        "posts[0].generate.aspectRatio: expected '9:16', '1:1' or '16:9'" in found[(6, 54, "invalid_recipe")]
    )
    assert "unknown key `colour`" in found[(6, 61, "invalid_recipe")]
    assert "unknown variable {nope}" in found[(13, 15, "unknown_variable")]
    assert "`durationSec` is for videos only" in found[(19, 7, "invalid_recipe")]
    assert "1 or 2 start images (a first and a last frame), got 3" in found[(29, 16, "invalid_recipe")]
    assert "youtube needs a video" in found[(32, 15, "video_required_for_target")]  # an image does not do
    assert len(found) == 8


def test_generate_sources_are_files_next_to_the_recipe(load_text) -> None:
    loaded = load_text("""
        posts:
          - id: d
            content: x
            targets: [facebook]
            at: "2027-01-15 09:00"
            generate:
              type: video
              prompt: "beans"
              sources: [missing.jpg, clips/one.mp4]
    """)
    assert [(p.line, p.column, p.code) for p in loaded.problems] == [
        (9, 17, "media_not_found"),
        (9, 30, "invalid_recipe"),
    ]
    assert "source 'missing.jpg' not found" in loaded.problems[0].message
    assert "is not an image" in loaded.problems[1].message


def test_generate_counts_as_a_media_file(load_text) -> None:
    media = ", ".join(["images/a.jpg"] * 10)
    loaded = load_text(f"""
        posts:
          - id: d
            content: x
            targets: [facebook]
            at: "2027-01-15 09:00"
            media: [{media}]
            generate: {{type: image, prompt: "a cup"}}
    """)
    assert "10 media files and a generated one" in only(loaded).message


def test_at_and_repeat_rules(load_text) -> None:
    loaded = load_text("""
        posts:
          - id: both
            content: x
            targets: [facebook]
            at: "2027-01-15 09:00"
            repeat: {every: day, times: ["09:00"], start: "2027-01-01", count: 2}
          - {id: neither, content: x, targets: [facebook]}
          - {id: badat, content: x, targets: [facebook], at: "15/01/2027 9h"}
          - {id: unbounded, content: x, targets: [facebook], repeat: {every: day, times: ["09:00"], start: "2027-01-01"}}
          - {id: notimes, content: x, targets: [facebook], repeat: {every: day, start: "2027-01-01", count: 1}}
          - {id: mixed, content: x, targets: [facebook], repeat: {every: day, times: ["9:00"], cron: "0 9 * * *", start: "2027-01-01", count: 1}}
    """)
    got = [(p.line, p.column, p.message.split(": ", 1)[1]) for p in loaded.problems]
    assert [(line, col) for line, col, _ in got] == [(6, 13), (7, 5), (8, 54), (9, 62), (10, 60), (11, 94)]
    for (_, _, message), (_, _, start) in zip(
        got,
        [
            (6, 13, "give `at` (one post) or `repe"),
            (7, 5, "an entry needs `at` (one post)"),
            (8, 54, 'expected "YYYY-MM-DD HH:MM" ('),
            (9, 62, "a series needs `until` (a date"),
            (10, 60, "a series with `every` needs `t"),
            (11, 94, "`cron` replaces every, on and "),
        ],
        strict=True,
    ):
        assert message.startswith(start)


def test_series_bounds(load_text) -> None:
    loaded = load_text("""
        posts:
          - id: big
            content: x
            targets: [facebook]
            repeat: {every: day, times: ["09:00", "10:00"], start: "2027-01-01", until: "2028-12-31"}
          - {id: count, content: x, targets: [facebook], repeat: {every: day, times: ["09:00"], start: "2027-01-01", count: 1001}}
          - {id: cron, content: x, targets: [facebook], repeat: {cron: "0 9 30 2 *", start: "2027-01-01", count: 3}}
    """)
    assert problems(loaded) == [
        (5, 13, "series_too_long"),
        (6, 117, "series_too_long"),
        (7, 64, "invalid_recipe"),
    ]
    assert "more than 1,000 occurrences" in loaded.problems[0].message
    assert "never matches" in loaded.problems[2].message


def test_keys_must_fit_in_a_label(write, folder: Path) -> None:
    deep = "/".join(["d" * 60] * 7) + "/f.yaml"  # 433 characters
    write(
        "posts:\n  - {id: %s, content: x, targets: [facebook], at: '2027-01-15 09:00'}\n" % ("i" * 70), deep
    )
    p = only(load(folder, networks=catalogue()))
    assert (p.line, p.column, p.code) == (2, 10, "key_too_long")
    assert "509 characters" in p.message  # shop/ + 433 + # + 70


@pytest.mark.parametrize("name", ["Europe/Pariss", "Europe"])  # "Europe": a folder of zones (was a traceback)
def test_unknown_timezone(load_text, name) -> None:
    p = only(load_text(f"timezone: {name}\nposts: []\n"))
    assert (p.line, p.column, p.code) == (1, 11, "unknown_timezone")
    assert name in p.message


def test_structure_errors(load_text) -> None:
    assert problems(load_text("")) == [(1, 1, "invalid_recipe")]
    assert problems(load_text("- a\n- b\n")) == [(1, 1, "invalid_recipe")]
    p = only(load_text("timezone: UTC\n"))
    assert (p.line, p.column) == (1, 1) and "missing `posts`" in p.message
    p = only(
        load_text(
            "posts:\n  - id: a\n    content: x\n    targets: [facebook]\n    at: '2027-01-15 09:00'\n"
            "    content: y\n"
        )
    )
    assert (p.line, p.column, p.code) == (6, 5, "invalid_yaml") and "duplicate key 'content'" in p.message
    p = only(load_text("posts: !!binary aGVsbG8=\n"))
    assert p.code == "invalid_yaml" and "unsupported tag" in p.message


def test_anchors_and_merge_keys(load_text) -> None:
    loaded = load_text("""
        base: &base {content: shared, targets: [facebook]}
        posts:
          - {<<: *base, id: a, at: "2027-01-15 09:00"}
    """)
    # `base` is not a key of the format: reported, the merge itself works
    assert [(p.line, p.column) for p in loaded.problems] == [(1, 1)]
    loaded = load_text("""
        posts:
          - &a {id: a, content: shared, targets: [facebook], at: "2027-01-15 09:00"}
          - {<<: *a, id: b}
    """)
    assert loaded.problems == [] and [o.content for o in loaded.occurrences] == ["shared", "shared"]


def test_every_error_of_every_file_and_all_or_nothing_per_file(write, folder: Path) -> None:
    write("posts:\n  - {id: ok, content: x, targets: [facebook], at: '2027-01-15 09:00'}\n", "good.yaml")
    write(
        """
        posts:
          - {id: ok, content: x, targets: [facebook], at: "2027-01-15 09:00"}
          - {id: bad1, content: x, targets: [nope], at: "2027-01-15 09:00"}
          - {id: bad2, content: "{x}", targets: [facebook], at: "2027-01-15 09:00"}
    """,
        "bad.yaml",
    )
    loaded = load(folder, networks=catalogue())
    good, bad = sorted(loaded.files, key=lambda f: f.file != "good.yaml")
    assert good.ok and len(good.occurrences) == 1
    assert not bad.ok and bad.occurrences == [] and len(bad.problems) == 2
    assert [p.line for p in loaded.problems] == [3, 4]


def test_loading_a_thousand_entries_is_quick(write, folder: Path) -> None:
    import time

    body = "".join(
        f"  - {{id: e{i}, content: 'Post {{id}} on {{weekday}}', targets: [facebook, linkedin], "
        f"at: '2027-01-15 09:{i % 60:02d}'}}\n"
        for i in range(1000)
    )
    write("timezone: Europe/Paris\nposts:\n" + body)
    started = time.perf_counter()
    loaded = load(folder, networks=catalogue())
    elapsed = time.perf_counter() - started
    assert loaded.problems == [] and len(loaded.occurrences) == 1000
    assert elapsed < 10  # measured ~0.5 s on the 2-core dev machine; a generous bound against regressions
