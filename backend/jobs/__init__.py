"""Durable job queue (rows in the store), retry math, handler registry and the worker loop."""
