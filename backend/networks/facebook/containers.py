"""Meta's container publishing, said once for Instagram and Threads (their fidelity tables: instagram/docs.md,
threads/docs.md): a container per media (a carousel's items first, each followed to FINISHED, then the parent),
each saved as the attempt's progress at once; the container's status followed until FINISHED; the account's
publishing limit read (at its quota: a wait, never a failure); then the publish call and the permalink.

What is not ready yet comes back pending with a tracking ref: check_status follows it to `ready` and complete()
publishes (an attempt of its own). A container already PUBLISHED is looked up in the account's listing, never
published again. An interrupted attempt's successor continues from its containers (`pub.resume`) while the network
still has them (24 h), instead of creating new ones that would count against the account's quota.

A network's adapter subclasses ContainerFlow with its calls (create_container, container_status, the publish call,
publishing_limit, permalink, find_existing) and its words (LABEL, CAPTION, LIMIT_CODE, failed_container)."""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from typing import Any

from backend.networks.base import (
    NetworkError,
    Publication,
    PublishOutcome,
    check_failed,
    decode_ref,
    encode_ref,
)

CONTAINER_TTL_WORDS = "not published within 24 h"


class ContainerFlow(ABC):
    LABEL: str = ""  # the network's name in messages
    CAPTION: str = "caption"  # the container parameter that carries the post's text
    LIMIT_CODE: str = ""  # the network code of a wait for the publishing limit (the endpoint's name)
    NOT_READY: str | None = None  # the publish call's error code for a container not FINISHED after all

    # --- the network's calls ---------------------------------------------------------------------------
    @abstractmethod
    def create_container(self, pub: Publication, params: dict[str, Any], media: Any = None) -> str: ...

    @abstractmethod
    def container_status(self, pub: Publication, container: str) -> tuple[str, str]:
        """(status, detail): IN_PROGRESS | FINISHED | PUBLISHED | ERROR | EXPIRED, and what the network says of
        an ERROR."""
        ...

    @abstractmethod
    def publish_call(self, pub: Publication, container: str) -> str:
        """The publish call (media_publish, threads_publish): the published media's id."""
        ...

    @abstractmethod
    def publishing_limit(self, pub: Publication) -> tuple[int, int]: ...

    @abstractmethod
    def permalink(self, pub: Publication, media_id: str) -> str | None: ...

    @abstractmethod
    def listed(self, pub: Publication) -> PublishOutcome | None:
        """The account's listing since the attempt's start, matched by caption: the publication, or None."""
        ...

    @abstractmethod
    def failed_container(self, detail: str, ref: str) -> PublishOutcome:
        """A container in ERROR, in words a user can act on."""
        ...

    # --- the flow ----------------------------------------------------------------------------------------
    def expired(self, what: str) -> PublishOutcome:
        return PublishOutcome.failed(
            "retriable",
            f"{what} expired ({CONTAINER_TTL_WORDS}); it will be created again",
            network_status="EXPIRED",
        )

    def advance(self, pub: Publication, state: dict[str, Any], *, publish: bool) -> PublishOutcome:
        """The containers' states; once FINISHED, the publish call when `publish` (publish()), else `ready` (a
        status check never publishes)."""
        ref = encode_ref(**state)
        children: list[str] = state.get("children") or []
        container = str(state.get("container") or "")
        if children and not container:
            for child in children:
                status, detail = self.container_status(pub, child)
                if status == "ERROR":
                    return self.failed_container(detail, ref)
                if status == "EXPIRED":
                    return self.expired(f"an item of the {self.LABEL} carousel")
                if status != "FINISHED":
                    return PublishOutcome.pending(ref, network_status=status or "IN_PROGRESS")
            container = self.create_container(
                pub,
                {
                    "media_type": "CAROUSEL",
                    "children": ",".join(children),
                    self.CAPTION: pub.payload.text or None,
                },
            )
            state = {**state, "container": container}
            ref = encode_ref(**state)
            if publish:
                pub.saved(ref)
        status, detail = self.container_status(pub, container)
        if status == "ERROR":
            return self.failed_container(detail, ref)
        if status == "EXPIRED":
            return self.expired(f"the {self.LABEL} container")
        if status == "PUBLISHED":  # published by an earlier attempt that never recorded it: the media exists
            found = self.listed(pub)
            if found is not None and found.state == "published":  # matched by caption: listed_at says so
                return dataclasses.replace(found, tracking_ref=ref, network_status=status)
            # not in the listing yet (or the listing failed): never fail a published container, look again later
            return PublishOutcome.pending(ref, network_status=status)
        if status != "FINISHED":
            return PublishOutcome.pending(ref, network_status=status or "IN_PROGRESS")
        if not publish:
            return PublishOutcome.ready(ref, network_status=status)
        return self.publish_container(pub, container, ref)

    def publish_container(self, pub: Publication, container: str, ref: str) -> PublishOutcome:
        used, total = self.publishing_limit(pub)
        if used >= total:
            return PublishOutcome.failed(
                "retriable",
                f"the account used its {self.LABEL} publishing limit ({used}/{total} posts in 24 h); "
                "the post waits and is published once the limit allows",
                retry_after_s=3600.0,
                network_code=self.LIMIT_CODE,
                tracking_ref=ref,
                wait=True,
            )
        try:
            media_id = self.publish_call(pub, container)
        except NetworkError as e:
            if self.NOT_READY is not None and e.code == self.NOT_READY:
                return PublishOutcome.pending(ref, network_status="IN_PROGRESS")  # follow its status again
            raise
        return PublishOutcome.published(media_id, self.permalink(pub, media_id), tracking_ref=ref)

    def resumable(self, pub: Publication) -> dict[str, Any] | None:
        """The containers of an interrupted attempt (pub.resume) the network still has and has not refused: the
        state to continue from (a PUBLISHED one is then looked up, never published again), None to start over
        (none saved, expired, unknown to the network, or failed)."""
        state = decode_ref(pub.resume) if pub.resume else {}
        ids = [state["container"]] if state.get("container") else list(state.get("children") or [])
        if not ids:
            return None
        for container in ids:
            try:
                status, _ = self.container_status(pub, container)
            except NetworkError as e:
                if e.fail_type == "permanent":  # the network does not know it (any more): start over
                    return None
                raise
            if status in ("EXPIRED", "ERROR"):
                return None
        return {k: v for k, v in state.items() if k in ("container", "children")}

    def find_existing(self, pub: Publication) -> PublishOutcome | None:
        """Whether an earlier attempt published the target. The container it saved (`pub.resume`; for the publish
        call of a tracked container, that container) is asked: the network's answer for that very attempt.
        PUBLISHED: published — its media then looked up in the listing (not listed yet: pending, looked up again
        later, never published again); any other state: its publish call never went through, so nothing is
        published (None). Nothing saved: nothing published either — a publish call saves its container (a
        carousel its items, then its parent) before it publishes it, so an attempt cut off before the save never
        reached media_publish. (The account's listing matched by caption was asked then, and cannot tell apart two
        posts of one caption published in the same minutes: under kills, a target whose container creation was
        cut off took the media of another target of its caption whose answer was not recorded yet, succeeded
        without being published, and left the other without its id — bench/crash.py, one caption.) Only for a
        saved container the network no longer knows (expired after 24 h) does the listing decide, matched by
        caption; the media other targets of the account hold are skipped there (`pub.held_elsewhere`), and the
        engine takes a listed match only once no other target's call that may have made it is under way."""
        state = decode_ref(pub.resume) if pub.resume else {}
        container = str(state.get("container") or "")
        if container:
            try:
                status, _ = self.container_status(pub, container)
            except NetworkError as e:
                if e.fail_type != "permanent":
                    return check_failed(self.LABEL, e)
                status = ""  # the network does not know it (any more): the listing decides
            if status == "PUBLISHED":
                found = self.listed(pub)
                if found is not None and found.state == "published":
                    return found
                return PublishOutcome.pending(str(pub.resume), network_status=status)
            if status:
                return None  # IN_PROGRESS, FINISHED, ERROR, EXPIRED: the container was never published
            return self.listed(pub)  # a container the network no longer knows
        return None  # nothing saved, or a carousel's items without their parent: the call never published

    def check_status(self, pub: Publication, ref: str) -> PublishOutcome:
        try:
            return self.advance(pub, decode_ref(ref), publish=False)
        except NetworkError as e:
            return e.outcome(tracking_ref=ref)

    def complete(self, pub: Publication, ref: str) -> PublishOutcome:
        """The publish call of a tracked container check_status found FINISHED."""
        container = str(decode_ref(ref).get("container") or "")
        if not container:
            return PublishOutcome.failed(
                "retriable",
                f"the {self.LABEL} container is not created yet; it will be checked again",
                tracking_ref=ref,
            )
        try:
            return self.publish_container(pub, container, ref)
        except NetworkError as e:
            return e.outcome(tracking_ref=ref)
