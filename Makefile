# The two commands of the README: `make run` and `make test`.
PYTHON ?= python3
UV := $(shell command -v uv 2>/dev/null || echo .tools/bin/uv)
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test setup lint bench accuracy worker clean

.tools/bin/uv:
	$(PYTHON) -m venv .tools
	.tools/bin/python -m pip install --quiet --disable-pip-version-check uv

$(VENV)/.synced: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --compile-bytecode --python $(PYTHON)
	touch $@

setup: $(VENV)/.synced

run: setup
	DJANGO_DEBUG=true $(PY) manage.py migrate --noinput
	DJANGO_DEBUG=true $(PY) manage.py demo_setup --base-url http://$(HOST):$(PORT)/
	DJANGO_DEBUG=true $(PY) manage.py runserver $(HOST):$(PORT)

test: setup
	$(PY) -m pytest $(PYTEST_ARGS)

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
	rm -rf $(VENV) .tools db.sqlite3 staticfiles
