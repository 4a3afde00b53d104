"""The socialpub backend. Importing it installs the logging rules every process keeps (backend/logs.py)."""

from backend import logs

logs.install()
