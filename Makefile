# Everything runs from the project's own virtual environment, created on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
# The suite runs on every core (pytest-xdist; each worker takes the tests in pytest-django's
# order, the transactional ones, which empty the tables, last);
# TEST_JOBS=0 runs it in this process, for a debugger or -x on the first failure.
TEST_JOBS ?= auto
PYTEST := $(BIN)/python -m pytest -n $(TEST_JOBS)
STAMP := $(VENV)/.installed
RUNTIME_STAMP := $(VENV)/.runtime

.PHONY: install run dev test lint format migrate seed postgres-test bench clean api-docs reliability demo-reset

# uv (from PyPI, into the virtualenv) installs the pinned requirements in seconds; pip is the
# fallback when uv cannot be had.
$(STAMP): requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	( $(BIN)/python -m pip install --quiet uv && \
	  $(BIN)/uv pip install --quiet --python $(BIN)/python -r requirements-dev.txt ) || \
	( echo "uv unavailable: installing with pip" && \
	  $(BIN)/python -m pip install --quiet --upgrade pip && \
	  $(BIN)/python -m pip install --quiet -r requirements-dev.txt )
	touch $(STAMP) $(RUNTIME_STAMP)

install: $(STAMP)

# What `make run` needs and no more: the runtime pins only (half the download of the tools).
$(RUNTIME_STAMP): requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	( $(BIN)/python -m pip install --quiet uv && \
	  $(BIN)/uv pip install --quiet --python $(BIN)/python -r requirements.txt ) || \
	( echo "uv unavailable: installing with pip" && \
	  $(BIN)/python -m pip install --quiet --upgrade pip && \
	  $(BIN)/python -m pip install --quiet -r requirements.txt )
	touch $(RUNTIME_STAMP)

migrate: install
	$(BIN)/python manage.py migrate --noinput

seed: migrate
	$(BIN)/python manage.py load_masterdata
	$(BIN)/python manage.py seed_demo

# gunicorn (config/gunicorn.py, debug off) and the background worker; Ctrl-C stops both.
# --prepare does what `seed` does (migrate, master data, demo world) in one Django start-up.
run: $(RUNTIME_STAMP)
	PORT=$(PORT) $(BIN)/python bin/serve --prepare

# Django's development server with autoreload (debug on).
dev: seed
	$(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

test: install
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(PYTEST)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# The suite against a real PostgreSQL server (DATABASE_URL must point at it; .ci/run starts one):
# the tests that use the test database (tests/conftest.py leaves out the others, which would
# only repeat what they did on SQLite).
postgres-test: install
	$(PYTEST)

# The benchmark suite: PostgreSQL + fleet-scale data + gunicorn, ratios against their targets.
bench: install
	bash bench/run.sh

# Load and fault drills through the production topology (nginx, two gunicorn nodes, the worker,
# Redis, S3 via moto) on a throwaway PostgreSQL kept in .cache/reliability-pg.
reliability: install
	bash bench/pg.sh start $(PWD)/.cache/reliability-pg 55220
	DATABASE_URL=postgres://postgres@127.0.0.1:55220/postgres $(BIN)/python reliability/run.py \
	  --pg-ctl "bash bench/pg.sh stop $(PWD)/.cache/reliability-pg 55220;;bash bench/pg.sh start $(PWD)/.cache/reliability-pg 55220"; \
	  status=$$?; bash bench/pg.sh stop $(PWD)/.cache/reliability-pg 55220; exit $$status

# Back to the documented demo world (master data kept, ids from 1), keeping the virtualenv.
demo-reset: migrate
	$(BIN)/python manage.py seed_demo --reset

clean:
	rm -rf $(VENV) db.sqlite3 media var

# Rebuild docs/api.md from real calls against a freshly seeded demo on a throwaway database.
api-docs: install
	rm -rf /tmp/api-docs.sqlite3 /tmp/api-docs-media
	DATABASE_URL=sqlite:////tmp/api-docs.sqlite3 MEDIA_ROOT=/tmp/api-docs-media $(BIN)/python manage.py migrate -v0
	DATABASE_URL=sqlite:////tmp/api-docs.sqlite3 MEDIA_ROOT=/tmp/api-docs-media $(BIN)/python manage.py seed_demo >/dev/null
	DATABASE_URL=sqlite:////tmp/api-docs.sqlite3 MEDIA_ROOT=/tmp/api-docs-media $(BIN)/python manage.py runserver 127.0.0.1:$(PORT) --noreload >/tmp/api-docs.log 2>&1 & \
	  pid=$$!; for _ in $$(seq 1 120); do curl -sf http://127.0.0.1:$(PORT)/healthz >/dev/null 2>&1 && break; sleep 0.5; done; \
	  $(BIN)/python docs/build_api_md.py --base http://127.0.0.1:$(PORT) \
	  && DATABASE_URL=sqlite:////tmp/api-docs.sqlite3 MEDIA_ROOT=/tmp/api-docs-media $(BIN)/python manage.py seed_demo --reset >/dev/null \
	  && $(BIN)/python docs/build_api_md.py --base http://127.0.0.1:$(PORT) --out /tmp/api-docs-replay.md \
	  && grep -E '^### |^Response|"[a-zA-Z]*[iI]d": [0-9]+' docs/api.md >/tmp/api-docs.first \
	  && grep -E '^### |^Response|"[a-zA-Z]*[iI]d": [0-9]+' /tmp/api-docs-replay.md >/tmp/api-docs.replay \
	  && diff /tmp/api-docs.first /tmp/api-docs.replay \
	  && echo "replayed after seed_demo --reset: every call answered the same status and ids"; \
	  status=$$?; kill $$pid; exit $$status
