"""Webhook delivery's pure parts (docs/webhooks.md): Standard Webhooks signing, the message sent, one signed
request to a receiver through the address rule, and what its answer decides. The store and the worker are
backend/services/webhooks.py and backend/jobs/webhooks.py."""
