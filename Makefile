# Every target sets itself up: a .venv with the pinned dependencies
# (requirements.lock to run; requirements-dev.lock, its superset, to test and
# lint) and the gRPC stubs generated from protos/ into gen/ whenever a .proto
# is newer. `make lock` pins them again after pyproject.toml changes.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
RUNTIME := $(VENV)/.runtime
INSTALLED := $(VENV)/.installed
PROTOS := $(shell find protos -name '*.proto')
STUBS := gen/.stamp
TYPED_STUBS := gen/.typed
PIP := $(PY) -m pip install -q --disable-pip-version-check
UV_VERSION := 0.13.9
# buf, protoc-gen-es and the TypeScript compiler, pinned in package.json.
NODE_TOOLS := node_modules/.installed
BUF := node_modules/.bin/buf
CLIENT_STUBS := gen/.client-stubs
# The benchmark's Node packages (the boardgame.io reference and Rodada's load
# generators), pinned in their package-lock.json files; tests/bench runs them.
BENCH_NODE := bench/reference/node_modules/.installed bench/rodada/node_modules/.installed
# From Debian: protoc and the gRPC Java plugin, and the Java libraries the
# generated Java compiles against (tests/protos), one protobuf version (3.21)
# for both; jq for the README's grpcurl walkthrough (tests/integration).
DEBIAN_PACKAGES := protobuf-compiler protobuf-compiler-grpc-java-plugin libprotobuf-java libgrpc-java \
	libgeronimo-annotation-1.3-spec-java default-jdk-headless jq

.PHONY: setup protos client-stubs debian-tools run test lint bench soak lock clean

setup: $(INSTALLED) $(TYPED_STUBS)

# What running needs (the dependencies and grpcio-tools for the stubs), then
# the project itself without resolving anything again.
$(RUNTIME): requirements.lock pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) --require-hashes -r requirements.lock
	$(PIP) --no-deps -e .
	echo "$(CURDIR)/gen" > "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/rodada-gen.pth"
	touch $@

$(INSTALLED): requirements-dev.lock $(RUNTIME)
	$(PIP) --require-hashes -r requirements-dev.lock
	touch $@

define generate_stubs
	rm -rf gen/rodada && mkdir -p gen
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m grpc_tools.protoc -Iprotos --python_out=gen --grpc_python_out=gen \
		$(1) $(PROTOS)
	touch $(STUBS)
endef

$(STUBS): $(PROTOS) $(RUNTIME)
	$(call generate_stubs,)

# With type stubs (.pyi) for mypy, once the development tools are in.
$(TYPED_STUBS): $(PROTOS) $(INSTALLED)
	$(call generate_stubs,--mypy_out=gen --mypy_grpc_out=gen)
	touch $@

protos: $(STUBS)

$(NODE_TOOLS): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

debian-tools:
	@dpkg -s $(DEBIAN_PACKAGES) >/dev/null 2>&1 || { apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(DEBIAN_PACKAGES); }

# The mobile and web client stubs of buf.gen.yaml this machine can make
# (TypeScript, Java, Kotlin; Swift's plugins need a Swift toolchain).
$(CLIENT_STUBS): $(PROTOS) buf.gen.yaml $(NODE_TOOLS) $(INSTALLED) | debian-tools
	$(PY) -m tools.stubs
	touch $@

client-stubs: $(CLIENT_STUBS)

run: $(RUNTIME) $(STUBS)
	$(PY) -m tools.run_local

test: setup $(CLIENT_STUBS) $(BENCH_NODE)
	$(PY) -m pytest

lint: setup $(NODE_TOOLS)
	$(BUF) lint
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

bench/%/node_modules/.installed: bench/%/package.json bench/%/package-lock.json
	cd bench/$* && npm ci --no-audit --no-fund
	touch $@

# Side by side with boardgame.io (throughput at 10 and 50 matches, engine,
# Redis memory, a matchmaking burst), then 10,000 idle feeds on one gateway.
# Bounded in time; loopback stacks of its own (tools/bench.py).
bench: setup $(BENCH_NODE)
	$(PY) -m tools.bench
	$(PY) -m tools.bench_feeds

# Conflicting actions through three service replicas and two gateways, then an
# audit of every match (bounded, loopback; exits non-zero on a violation).
soak: setup
	$(PY) -m tools.soak

# Pin every dependency again (with hashes, for every platform) from pyproject.toml.
lock: $(RUNTIME)
	$(PIP) uv==$(UV_VERSION)
	$(VENV)/bin/uv pip compile pyproject.toml --extra build --universal --python-version 3.11 \
		--generate-hashes -q -o requirements.lock
	$(VENV)/bin/uv pip compile pyproject.toml --extra build --extra dev --universal --python-version 3.11 \
		--generate-hashes -q -o requirements-dev.lock

clean:
	rm -rf $(VENV) gen node_modules .pytest_cache .mypy_cache .ruff_cache
