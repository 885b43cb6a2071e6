# One command to see it, one to test it. Both create .venv on first use.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo check test lint typecheck bench clean browser dist image accuracy

$(STAMP): requirements-dev.txt pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements-dev.txt
	$(BIN)/pip install -q --no-deps -e .
	touch $(STAMP)

# The demo cluster has a fault on purpose: exit code 1 ("failures found") is success here.
demo: $(STAMP)
	$(BIN)/gpunode demo; code=$$?; test $$code -eq 0 -o $$code -eq 1

# Tests run in parallel worker processes (pytest-xdist); WORKERS=0 runs them in this one.
# One worker more than the cores: some tests wait on a clock (a stalled server, a time-out, a
# subprocess) rather than compute, and the extra worker keeps every core busy while one waits.
# `make check` is the quick loop: lint, types and every test not marked slow (pyproject's
# markers); `make test` is everything, the browser included. Times: README, "Two commands".
WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
PYTEST := $(BIN)/pytest -n $(WORKERS) --dist worksteal

# The tests write Python's bytecode caches (__pycache__, git-ignored) even where the environment
# sets PYTHONDONTWRITEBYTECODE: without them every test worker rewrites the asserts of every test
# module again at collection (6.4 s of CPU per worker instead of 2.5 s) and every gpunode the
# tests start as a subprocess compiles the package again (about 0.3 s of CPU each).
check test accuracy: export PYTHONDONTWRITEBYTECODE :=

# The tests' temporary files (bundles of many small files, logs, reports) go to /dev/shm where it
# is a tmpfs and both it and the memory have more than 4 GiB free: writing and deleting them on
# the disk cost system CPU and waits (tests/sim and tests/real: 15 to 18 s of CPU there, 13.4 to
# 14 s on the tmpfs). There a passing test's folder is removed as it ends
# (tmp_path_retention_policy=failed): a whole make test writes about 3 GB, which memory should not
# keep. TEST_TMPDIR= keeps the system's temporary folder; TEST_TMPDIR=DIR picks another.
TEST_TMPDIR ?= $(shell awk '/^MemAvailable:/ {exit !($$2 > 4194304)}' /proc/meminfo 2>/dev/null && df -Pk -t tmpfs /dev/shm 2>/dev/null | awk 'NR == 2 && $$4 > 4194304 {print "/dev/shm"}')
ifneq ($(TEST_TMPDIR),)
check test accuracy: export TMPDIR := $(TEST_TMPDIR)
PYTEST += -o tmp_path_retention_policy=failed
endif

# mypy runs beside the tests rather than before them: cold (a clean clone has no .mypy_cache) it
# takes 10 to 15 s of wall time for about 6 s of CPU, and the tests' last minute, when one
# worker finishes the longest tests while the others are done, leaves a core to it. Its output
# is held until the tests end and printed whole; the target fails if ruff, mypy or the tests do.
WITH_MYPY = out=$$(mktemp); $(BIN)/mypy >$$out 2>&1 & pid=$$!; \
	$(1); tests=$$?; wait $$pid; types=$$?; \
	echo "$(BIN)/mypy (beside the tests):"; cat $$out; rm -f $$out; \
	test $$tests -eq 0 && test $$types -eq 0

check: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(call WITH_MYPY,$(PYTEST) -m "not slow")

test: $(STAMP) browser
	$(BIN)/ruff check src tests bench
	$(call WITH_MYPY,$(PYTEST))

# The field corpus (tests/field/cases): expected vs reported top root cause per case.
accuracy: $(STAMP)
	$(BIN)/python tests/field/scoreboard.py

# The HTML report tests render the report in headless Chromium. One line says what happens:
# chromium found, or Debian's chromium (about 115 packages with its libraries) installed
# with apt-get when we run as root, or loudly that those tests will be skipped.
browser:
	@if command -v chromium >/dev/null 2>&1; then \
		echo "make browser: chromium found ($$(command -v chromium)); the HTML report tests render in it"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "make browser: installing Debian's chromium (apt-get, about 115 packages): the HTML report tests render the report in it"; \
		(apt-get update -qq && apt-get install -y -qq chromium) >/dev/null 2>&1 || true; \
	fi
	@command -v chromium >/dev/null 2>&1 || echo "!!! chromium unavailable: HTML report tests will be SKIPPED (apt-get install -y chromium) !!!" >&2

lint: $(STAMP)
	$(BIN)/ruff check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

# Quick benchmarks by default; `make bench BENCH=--full` for the issue-11 sizes (bench/README.md).
bench: $(STAMP)
	$(BIN)/python bench/run.py $(BENCH)

# Wheel (pip/pipx install dist/gpunode-*.whl) and the krew archive + manifest.
dist: $(STAMP)
	rm -rf dist build
	$(BIN)/pip wheel -q --no-deps -w dist .
	$(BIN)/python deploy/krew/package.py dist

# The agent image, with the first of buildah, podman or docker found (Containerfile);
# IMAGE_TOOL=docker (or podman, buildah) picks one.
IMAGE ?= gpunode:$(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
IMAGE_TOOL ?= $(firstword $(foreach t,buildah podman docker,$(if $(shell command -v $(t) 2>/dev/null),$(t))))
image:
	@case "$(IMAGE_TOOL)" in \
	buildah) buildah bud -t $(IMAGE) -f Containerfile . ;; \
	podman|docker) $(IMAGE_TOOL) build -t $(IMAGE) -f Containerfile . ;; \
	"") echo "make image: none of buildah, podman or docker found" >&2; exit 2 ;; \
	*) echo "make image: IMAGE_TOOL=$(IMAGE_TOOL): expected buildah, podman or docker" >&2; exit 2 ;; \
	esac

clean:
	rm -rf $(VENV) build dist src/*.egg-info
