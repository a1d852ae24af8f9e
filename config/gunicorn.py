"""gunicorn settings: `gunicorn -c config/gunicorn.py config.wsgi`.

Workers and threads follow the core count (override with WEB_CONCURRENCY and GUNICORN_THREADS);
set DATABASE_POOL=1 so each worker keeps a psycopg 3 connection pool.
"""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2 + 1))
threads = int(os.environ.get("GUNICORN_THREADS", "2"))
worker_class = "gthread"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = 20
keepalive = 5
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "0"))
accesslog = os.environ.get("GUNICORN_ACCESS_LOG") or None
errorlog = "-"
# Uploads are streamed to disk by Django's temporary-file handler; keep them off tmpfs-less
# container layers when a directory is given.
worker_tmp_dir = os.environ.get("GUNICORN_WORKER_TMP_DIR") or None
# 500 DOTs as repeated `dots=` parameters need about 7 KB of request line.
limit_request_line = 8190
