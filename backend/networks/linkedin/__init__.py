"""The linkedin network: its adapter, rules, OAuth app and emulator."""
