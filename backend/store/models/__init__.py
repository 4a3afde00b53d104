"""All models, one module per resource. Import from here."""

from backend.store.models.accounts import Account
from backend.store.models.base import BaseModel
from backend.store.models.events import Event
from backend.store.models.generations import CreditEntry, Generation
from backend.store.models.instance import InstanceSetting
from backend.store.models.jobs import Job
from backend.store.models.media import Media, MediaHold
from backend.store.models.oauth import NetworkInstance, OAuthSession
from backend.store.models.posts import Post, PostLabel, PostTarget, PublishAttempt
from backend.store.models.tiktok import TikTokPublish
from backend.store.models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from backend.store.models.workspace import ApiKey, Owner, RateCounter, Workspace

__all__ = [
    "Account",
    "ApiKey",
    "BaseModel",
    "CreditEntry",
    "Event",
    "Generation",
    "InstanceSetting",
    "Job",
    "Media",
    "MediaHold",
    "NetworkInstance",
    "OAuthSession",
    "Owner",
    "Post",
    "PostLabel",
    "PostTarget",
    "PublishAttempt",
    "RateCounter",
    "TikTokPublish",
    "WebhookAttempt",
    "WebhookDelivery",
    "WebhookEndpoint",
    "Workspace",
]
