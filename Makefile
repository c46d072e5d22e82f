# Every target sets itself up: a .venv with the pinned dependencies
# (requirements.lock to run; requirements-dev.lock, its superset, to test and
# lint) and the gRPC stubs generated from protos/ into gen/ whenever a .proto
# is newer. `make lock` pins them again after pyproject.toml changes.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
RUNTIME := $(VENV)/.runtime
INSTALLED := $(VENV)/.installed
# Ours; protos/google/api holds the vendored HTTP annotations, whose Python
# modules come with googleapis-common-protos.
PROTOS := $(shell find protos/rodada -name '*.proto')
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
# for both; jq for the README's grpcurl walkthrough (tests/integration);
# chromium for the browser tests, and a CJK font for the poets' names it draws.
DEBIAN_PACKAGES := protobuf-compiler protobuf-compiler-grpc-java-plugin libprotobuf-java libgrpc-java \
	libgeronimo-annotation-1.3-spec-java default-jdk-headless jq chromium fonts-noto-cjk
# The web client (clients/web, its own package.json: openapi-typescript wants
# TypeScript 5, buf's tools 7): its types generated from the gateway's OpenAPI,
# exported without running anything, then type-checked (strict) and bundled
# into clients/web/dist, which the gateway serves at /.
WEB := clients/web
WEB_TOOLS := $(WEB)/node_modules/.installed
WEB_OPENAPI := gen/web/openapi.json
WEB_TYPES := $(WEB)/src/api/schema.d.ts
WEB_SITE := $(WEB)/dist/.built
WEB_SOURCES := $(shell find $(WEB)/src $(WEB)/public -type f -not -name schema.d.ts) $(WEB)/tsconfig.json

.PHONY: setup protos client-stubs web debian-tools run test lint bench soak lock clean advisor-tables advisor-cache

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
		--descriptor_set_out=gen/rodada.binpb --include_source_info $(1) $(PROTOS)
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

$(WEB_TOOLS): $(WEB)/package.json $(WEB)/package-lock.json
	cd $(WEB) && npm ci --no-audit --no-fund
	touch $@

$(WEB_OPENAPI): $(STUBS) $(wildcard gateway/*.py gateway/routes/*.py services/*/game.py) $(PROTOS)
	$(PY) -m tools.export_openapi $@

$(WEB_TYPES): $(WEB_OPENAPI) $(WEB_TOOLS)
	cd $(WEB) && OPENAPI=$(CURDIR)/$(WEB_OPENAPI) npm run --silent types

# The commands are clients/web/package.json's scripts: the image builds the site the same way.
$(WEB_SITE): $(WEB_TYPES) $(WEB_SOURCES)
	cd $(WEB) && npm run --silent build
	touch $@

web: $(WEB_SITE)

# The web client needs Node and npm; on a machine with only Python the
# platform starts without it (the API, /docs and /rules/ are all there).
run: $(RUNTIME) $(STUBS) advisor-cache
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory web; \
		else echo "npm not found: starting without the web client at /"; fi
	$(PY) -m tools.run_local

test: setup $(CLIENT_STUBS) $(BENCH_NODE) $(WEB_SITE) advisor-cache
	$(PY) -m pytest

lint: setup $(NODE_TOOLS)
	$(BUF) lint
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

bench/%/node_modules/.installed: bench/%/package.json bench/%/package-lock.json
	cd bench/$* && npm ci --no-audit --no-fund
	touch $@

# The advisors' tables (Yatzy classic and Scandinavian, Bozó): advisor-tables
# builds them afresh into .data/advisor (or RODADA_ADVISOR_DIR), printing time,
# size and digest; advisor-cache does every game's work before serving (each
# declaration's ``prepare``, services/kit/prepare.py: for these, load the
# tables, building only a missing one, once per checkout), so that services
# started next are ready in milliseconds. The image does the same
# (deploy/docker/Dockerfile).
advisor-tables: $(RUNTIME) $(STUBS)
	$(PY) -m tools.build_advisor_tables

advisor-cache: $(RUNTIME) $(STUBS)
	$(PY) -m services.kit.prepare

# Side by side with boardgame.io (throughput at 10 and 50 matches, engine,
# Redis memory, a matchmaking burst), then 10,000 idle feeds on one gateway.
# Bounded in time; loopback stacks of its own (tools/bench.py).
bench: setup $(BENCH_NODE) advisor-cache
	$(PY) -m tools.bench
	$(PY) -m tools.bench_feeds

# Conflicting actions through three service replicas and two gateways, then an
# audit of every match (bounded, loopback; exits non-zero on a violation).
soak: setup advisor-cache
	$(PY) -m tools.soak

# Pin every dependency again (with hashes, for every platform) from pyproject.toml.
lock: $(RUNTIME)
	$(PIP) uv==$(UV_VERSION)
	$(VENV)/bin/uv pip compile pyproject.toml --extra build --universal --python-version 3.11 \
		--generate-hashes -q -o requirements.lock
	$(VENV)/bin/uv pip compile pyproject.toml --extra build --extra dev --universal --python-version 3.11 \
		--generate-hashes -q -o requirements-dev.lock

clean:
	rm -rf $(VENV) gen node_modules $(WEB)/node_modules $(WEB)/dist $(WEB_TYPES) .pytest_cache .mypy_cache .ruff_cache
