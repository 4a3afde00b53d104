"""The youtube network: its adapter, rules, OAuth app and emulator."""
