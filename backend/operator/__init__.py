"""The operator's side of the backend: the commands that own the store (`init`, `admin …`, `serve`, `worker`,
`tick`, in `backend.operator.cli`, mounted by the `socialpub` command), the embedded backend the client runs
in-process (`backend.operator.embedded`) and `make run` (`backend.operator.devrun`).

This is the one door from the front end (socialpub_tui) into the backend's application, store and worker;
it sits above `backend.api` in the layers (see pyproject.toml, [tool.importlinter]). Importing this package
imports nothing else: each entry point loads what it needs when it runs.
"""
