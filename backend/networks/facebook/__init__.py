"""The facebook network: its adapter, rules, OAuth app and emulator."""
