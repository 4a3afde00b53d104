"""SOCIALPUB_PIGEON_…"""

from pydantic import Field

from backend.networks.settings import NetworkSettings, base_url_alias, network_config


class PigeonSettings(NetworkSettings):
    model_config = network_config("pigeon")

    api_base: str = Field("https://api.pigeon.example", validation_alias=base_url_alias("pigeon"))
    version: str | None = None  # SOCIALPUB_PIGEON_VERSION (lifecycle.py), its default when unset
    products: str = ""  # SOCIALPUB_PIGEON_PRODUCTS: the app's products, comma-separated (checks.py)
    audited: bool = False  # SOCIALPUB_PIGEON_AUDITED
