"""Widgets the TUI's screens share."""
