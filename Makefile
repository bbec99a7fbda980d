# lockscope: two commands do all set-up on a fresh Debian 12 machine.
#   make demo   install what is missing, build, put `lockscope` on PATH, run the main job
#   make test   the same plus the test stack (database servers, Chromium, Go, Prometheus),
#               then lint and type checks (make check), then the test suite
#   make dist   the release artifact for database hosts (docs/install.md)
#   make test-kernels  the kernel-test subset on other kernels under QEMU (docs/kernels.md)
# Both are idempotent: a second run only checks and rebuilds what changed.

SHELL   := /bin/bash
VENV    := .venv
PY      := $(VENV)/bin/python
STAMPS  := build/stamps
CARGO_BIN ?= $(HOME)/.cargo/bin
export PATH := $(CARGO_BIN):$(PATH)

# apt packages by role: a machine that only runs the demo gets no database server, browser
# or Go; the test stack comes with `make test`; `make dist` adds the release's build root.
DEMO_PACKAGES := clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config \
	libdw-dev libbz2-dev liblzma-dev elfutils liburing-dev libaio-dev protobuf-compiler python3-venv \
	xfsprogs e2fsprogs util-linux libc6-dbg
TEST_PACKAGES := $(DEMO_PACKAGES) fio linux-perf chromium bpftrace \
	mariadb-server mariadb-client postgresql-15 sysbench golang-go prometheus systemd openssl \
	libfuse2
DIST_PACKAGES := $(DEMO_PACKAGES) mmdebstrap
INFERNO_VERSION := 0.12.8
# `make install` puts a launcher for this checkout's .venv at $(PREFIX)/bin/lockscope.
PREFIX   ?= /usr/local
LAUNCHER := $(DESTDIR)$(PREFIX)/bin/lockscope

.PHONY: all bins proto deps test-deps install demo check test unit-test test-kernels dist clean distclean

all: bins

bins: proto
	$(MAKE) -C bpf
	$(MAKE) -C workloads

# The pprof profile message (lockscope/export) compiled by Debian's protoc (3.21: the
# generated code needs protobuf 4.21-4.25 at run time, pinned in requirements.txt).
PROTO_DIR := analyzer/lockscope/export
proto: $(PROTO_DIR)/profile_pb2.py

$(PROTO_DIR)/profile_pb2.py: $(PROTO_DIR)/profile.proto
	protoc --proto_path=$(PROTO_DIR) --python_out=$(PROTO_DIR) --pyi_out=$(PROTO_DIR) $<

deps: $(STAMPS)/apt-demo $(STAMPS)/inferno $(STAMPS)/venv
test-deps: deps $(STAMPS)/apt-test

$(STAMPS):
	mkdir -p $@

# apt: install only the packages of the role not already present.
apt_install = @missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	command -v cargo >/dev/null || missing="$$missing cargo"; \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
$(STAMPS)/apt-demo: Makefile | $(STAMPS)
	$(call apt_install,$(DEMO_PACKAGES))
	touch $@
$(STAMPS)/apt-test: Makefile | $(STAMPS)
	$(call apt_install,$(TEST_PACKAGES))
	touch $@
$(STAMPS)/apt-dist: Makefile | $(STAMPS)
	$(call apt_install,$(DIST_PACKAGES))
	touch $@

$(STAMPS)/inferno: | $(STAMPS)/apt-demo
	@if ! cargo install --list 2>/dev/null | grep -q '^inferno v$(INFERNO_VERSION):'; then \
		cargo install inferno --locked --version $(INFERNO_VERSION); \
	fi
	touch $@

$(STAMPS)/venv: setup.py pyproject.toml requirements.txt requirements-dev.txt | $(STAMPS)/apt-demo
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

# A launcher, not a copy: it runs this checkout's .venv, so `lockscope` works in any new
# shell and follows rebuilds. A file there that is not our launcher is left alone.
install: $(STAMPS)/venv bins
	@mkdir -p $(dir $(LAUNCHER))
	@if [ -e $(LAUNCHER) ] && ! grep -q '^# lockscope launcher' $(LAUNCHER); then \
		echo "make install: $(LAUNCHER) exists and is not a lockscope launcher; left as it is" >&2; \
		exit 2; \
	fi
	@printf '#!/bin/sh\n# lockscope launcher (make install) for the checkout %s\nexec %s "$$@"\n' \
		"$(CURDIR)" "$(CURDIR)/$(VENV)/bin/lockscope" > $(LAUNCHER).tmp
	@chmod 755 $(LAUNCHER).tmp && mv $(LAUNCHER).tmp $(LAUNCHER)
	@echo "lockscope is on PATH: $(LAUNCHER) -> $(CURDIR)/$(VENV)/bin/lockscope"

# The main job: the default sweep (ext4 vs XFS, threads 1,2,4,8) on loop images.
demo: deps bins install
	$(VENV)/bin/lockscope doctor >/dev/null || $(VENV)/bin/lockscope doctor
	$(VENV)/bin/lockscope sweep --out results/sweep-$$(date +%Y%m%d-%H%M%S)

# Lint and type checks (settings in pyproject.toml): the analysis is checked strictly.
check: $(STAMPS)/venv proto
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# The tests by folder (tests/README.md): first the kernel tests marked alone, one at a
# time: the recorder's budget, rates and scaling, which other work beside them would move
# (CI starts its background work once they are done: .ci/run); then tests/unit in
# parallel (one process per CPU); then tests/kernel three at a time, a module to a worker
# (its shared filesystems and servers stay one; they wait on disks, timers and servers
# more than they compute).
# Each phase says how long it took (tools/ci/timed: "phase: NAME: N s").
KERNEL_TEST_WORKERS ?= 3
TIMED := tools/ci/timed

test:
	@$(TIMED) set-up $(MAKE) --no-print-directory test-deps bins install
	@$(TIMED) check $(MAKE) --no-print-directory check
	@$(TIMED) kernel-tests-alone $(PY) -m pytest tests/kernel -m alone
	@$(TIMED) unit-tests $(PY) -m pytest tests/unit -n auto
	@$(TIMED) kernel-tests $(PY) -m pytest tests/kernel -m "not alone" -n $(KERNEL_TEST_WORKERS) --dist loadfile

unit-test: check
	$(PY) -m pytest tests/unit -n auto

# The release artifact: dist/lockscope-VERSION-x86_64-linux.tar.gz (docs/install.md).
dist: $(STAMPS)/apt-dist deps bins proto
	tools/dist/make-dist

# The host matrix: each pinned kernel booted with its own Debian release's root filesystem
# (cached), the release artifact installed there, the results judged (docs/kernels.md).
test-kernels:
	@$(TIMED) dist $(MAKE) --no-print-directory deps bins dist
	@$(TIMED) matrix $(PY) tools/kernels/run-matrix $(MATRIX_ARGS)

clean:
	$(MAKE) -C bpf clean
	$(MAKE) -C workloads clean
	rm -rf build/bin build/bpf build/workloads
	rm -f $(PROTO_DIR)/profile_pb2.py $(PROTO_DIR)/profile_pb2.pyi

distclean: clean
	rm -rf build dist $(VENV) *.egg-info analyzer/*.egg-info
