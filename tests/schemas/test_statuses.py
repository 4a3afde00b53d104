"""The status vocabulary is said once: the enums of backend.schemas.statuses are what the wire states, the store's
columns default to their values, and each final set is a subset of its enum."""

from __future__ import annotations

import typing

from backend.schemas.posts import PostOut, TargetOut
from backend.schemas.statuses import (
    GENERATION_FINAL,
    JOB_FINAL,
    POST_FINAL,
    POST_OUTCOMES,
    TARGET_FINAL,
    TARGET_SUCCESS,
    GenerationStatus,
    GenerationStatusValue,
    JobStatus,
    PostStatus,
    PostStatusValue,
    TargetStatus,
    TargetStatusValue,
)
from backend.schemas.tiktok import TIKTOK_FINAL, TIKTOK_PROCESSING, TikTokStatus, TikTokStatusValue
from backend.store.models import Job, Post, PostTarget, TikTokPublish


def test_a_member_is_its_string():
    assert PostStatus.COMPLETED == "completed" and f"{TargetStatus.INBOX_DELIVERED}" == "inbox_delivered"
    assert {"completed": 1}[PostStatus.COMPLETED] == 1  # the same hash: a dict keyed by either finds it


def test_the_wire_literals_list_every_member_but_the_store_only_initiating():
    assert list(typing.get_args(PostStatusValue)) == list(PostStatus)
    assert list(typing.get_args(TargetStatusValue)) == list(TargetStatus)
    assert list(typing.get_args(GenerationStatusValue)) == list(GenerationStatus)
    assert list(typing.get_args(TikTokStatusValue)) == [
        s for s in TikTokStatus if s != TikTokStatus.INITIATING
    ]


def test_a_parsed_body_carries_the_enum():
    target = TargetOut.model_fields["status"].annotation
    assert target == TargetStatusValue and PostOut.model_fields["status"].annotation == PostStatusValue


def test_the_final_sets():
    assert set(POST_OUTCOMES) < POST_FINAL and PostStatus.CANCELLED in POST_FINAL
    assert (
        set(TARGET_SUCCESS)
        < set(TARGET_FINAL)
        == {TargetStatus.SUCCEEDED, TargetStatus.INBOX_DELIVERED, "failed"}
    )
    assert JOB_FINAL == {JobStatus.DONE, JobStatus.DEAD} and GENERATION_FINAL == {"completed", "failed"}
    assert not set(TIKTOK_FINAL) & set(TIKTOK_PROCESSING)
    assert {*TIKTOK_FINAL, *TIKTOK_PROCESSING, TikTokStatus.INITIATING} == set(TikTokStatus)


def test_the_store_defaults_are_members():
    assert Job.status.default in set(JobStatus)
    assert PostTarget.status.default in set(TargetStatus)
    assert TikTokPublish.status.default == TikTokStatus.INITIATING
    assert Post.status.default is None  # every post is created with its status said
