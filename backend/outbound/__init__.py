"""Outbound HTTP, shared by media fetches, network adapters, generation providers and webhook delivery: the
address rules (SSRF guard, pinned resolution: guard.py), the whole-exchange deadline (watchdog.py) and
Retry-After parsing (retry_after.py). Imports nothing of the product above backend.config and backend.errors.
"""
