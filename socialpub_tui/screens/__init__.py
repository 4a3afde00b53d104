"""The TUI's screens: the four modes (posts, calendar, accounts, activity), and the screens pushed on top of
them (post detail, compose/edit, help, confirmations)."""
