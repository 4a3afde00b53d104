"""`python -m backend.operator …`: the operator commands without the front end (same as `socialpub …`)."""

from backend.operator.cli import main

main()
