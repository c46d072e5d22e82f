# Every target sets itself up: a .venv with the dependencies, and the gRPC
# stubs generated from protos/ into gen/ whenever a .proto is newer.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed
PROTOS := $(shell find protos -name '*.proto')
STUBS := gen/.stamp

.PHONY: setup protos run test lint bench soak clean

setup: $(INSTALLED) $(STUBS)

$(INSTALLED): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	echo "$(CURDIR)/gen" > "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/rodada-gen.pth"
	touch $@

$(STUBS): $(PROTOS) $(INSTALLED)
	rm -rf gen && mkdir -p gen
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m grpc_tools.protoc -Iprotos --python_out=gen --grpc_python_out=gen \
		--mypy_out=gen --mypy_grpc_out=gen $(PROTOS)
	touch $@

protos: $(STUBS)

run: setup
	$(PY) -m tools.run_local

test: setup
	$(PY) -m pytest

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

bench: setup
	$(PY) -m tools.bench

# Conflicting actions through three service replicas and two gateways, then an
# audit of every match (bounded, loopback; exits non-zero on a violation).
soak: setup
	$(PY) -m tools.soak

clean:
	rm -rf $(VENV) gen .pytest_cache .mypy_cache .ruff_cache
