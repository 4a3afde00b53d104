"""The instagram network: its adapter, rules, OAuth app and emulator."""
