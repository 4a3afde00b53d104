"""All models, one module per resource. Import from here."""

from backend.store.models.base import BaseModel
from backend.store.models.jobs import Job
from backend.store.models.workspace import ApiKey, Owner, RateCounter, Workspace

__all__ = ["ApiKey", "BaseModel", "Job", "Owner", "RateCounter", "Workspace"]
