"""gunicorn reads ./gunicorn.conf.py when no -c is given: the project's settings, always.

`gunicorn config.wsgi` from the repository root therefore runs with config/gunicorn.py
(gthread workers, request-line and header limits, metrics hooks); `-c` still overrides.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from config.gunicorn import *  # noqa: F403
