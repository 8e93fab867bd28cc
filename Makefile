# The two commands of the README: `make run` and `make test`.
PYTHON ?= python3
UV := $(shell command -v uv 2>/dev/null || echo .tools/bin/uv)
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test test-engine setup lint bench accuracy worker clean

.tools/bin/uv:
	$(PYTHON) -m venv .tools
	.tools/bin/python -m pip install --quiet --disable-pip-version-check uv

$(VENV)/.synced: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --compile-bytecode --python $(PYTHON)
	touch $@

setup: $(VENV)/.synced

# `make run` serves as a production server does (no DEBUG: no tracebacks on error pages or
# in API answers), with a secret key kept in this checkout unless one is configured.
LOCAL_SECRET_KEY := .local-secret-key
RUN_ENV := $(if $(DJANGO_SECRET_KEY)$(DJANGO_SECRET_KEY_FILE),,DJANGO_SECRET_KEY_FILE=$(LOCAL_SECRET_KEY))

$(LOCAL_SECRET_KEY):
	umask 077 && $(PYTHON) -c "import secrets; print(secrets.token_urlsafe(50))" > $@

run: setup $(LOCAL_SECRET_KEY)
	$(RUN_ENV) $(PY) manage.py migrate --noinput
	$(RUN_ENV) $(PY) manage.py demo_setup --base-url http://$(HOST):$(PORT)/
	$(RUN_ENV) $(PY) manage.py runserver $(HOST):$(PORT)

test: setup
	$(PY) -m pytest $(PYTEST_ARGS)

# The engine's own tests need no Django: they run with pytest-django switched off.
test-engine: setup
	$(PY) -m pytest -p no:django -W ignore::pytest.PytestConfigWarning tests/sizing -q

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy sizing configurator
	$(VENV)/bin/lint-imports

bench: setup
	$(PY) -m benchmarks.run

accuracy: setup
	$(PY) manage.py accuracy --cases sizing/data/ground_truth_cases.json --format markdown > docs/accuracy.md
	$(PY) manage.py accuracy --kind ttft --cases sizing/data/ttft_cases_calibration.json --format markdown >> docs/accuracy.md
	$(PY) manage.py accuracy --kind ttft --cases sizing/data/ttft_cases_held_out.json --format markdown >> docs/accuracy.md
	echo >> docs/accuracy.md
	$(PY) manage.py accuracy --kind traffic --cases sizing/data/traffic_cases.json --format markdown >> docs/accuracy.md

worker: setup
	$(VENV)/bin/celery -A configurator worker --loglevel=info

clean:
	rm -rf $(VENV) .tools db.sqlite3 staticfiles $(LOCAL_SECRET_KEY)
