"""The tiktok network: its adapter, rules, OAuth app and emulator."""
