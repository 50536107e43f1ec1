# agentrt: the single entry point.
#
#   make demo                    examples/crash_demo.py: SIGKILL an agent mid-run, finish it with agentrt resume
#   make demo DEMO_EXECUTOR=offline   ... with the in-process model executor instead of the HTTP one
#   make fleet-demo              examples/fleet_demo.py: a throwaway PostgreSQL, two workers, one SIGKILLed, all runs finish
#   make test                    the whole suite on one interpreter (the newest installed), on every core
#   make test PY=3.12            ... on another one
#   make test PYTEST_ARGS='-k foo -x'   (JOBS=1 runs it in one process)
#   make test-all                what CI runs: the whole suite on the newest interpreter, the
#                                interpreter-dependent tests on the others, then the round-trip pass
#   make test-roundtrip          the tests that drive Machines in-process, each Machine checkpointed and
#                                restored at every suspension (the --agentrt-roundtrip plugin)
#   make test-adapters           the adapters' whole kill corpus (every agent killed at every call)
#   make bench-quick             < 6 min, offline: one table, each ratio against its target, met or missed
#   make bench [BENCH_ARGS=...]  peers installed first, then every benchmark in full -> benchmarks/results/local/
#                                (BENCH_ARGS=--update-results rewrites the committed benchmarks/results/)
#   make bench-smoke             each benchmark with --quick: proves they run, judges no ratio (CI)
#   make bench-setup             only install the benchmark peers (online, once)
#   make lint                    ruff check, ruff format --check, mypy
#   make fuzz [SEEDS=N] [START=S] [PY=3.12]   differential fuzzer: N random agents per interpreter
#   make clean
#
# Each interpreter gets its own venv, .venv-3.1X, created on first use and re-installed (pip install
# -e) whenever pyproject.toml is newer than the venv's stamp file; `.venv` links to the one the last
# demo/test used, so `source .venv/bin/activate` always finds the `agentrt` command.  Interpreters
# are looked up in pyenv's versions (under $PYENV_ROOT, `pyenv root`, the root of a pyenv shims
# directory on PATH, or ~/.pyenv), then as python3.1X on PATH; free-threaded builds are skipped.
#
# `make test` and `make test-all` end with one line per stage, which .ci/run reads:
#   test-summary: full python3.13 (3.13.0) PASSED -- 1944 passed, 4 skipped in 300.10s
# stages: full, interpreter (the interpreter-dependent tests), roundtrip; statuses: PASSED, FAILED,
# NO-TESTS (pytest exit 5), INTERRUPTED / INTERNAL-ERROR / USAGE-ERROR (pytest exit 2 / 3 / 4),
# INSTALL-FAILED, NOT-FOUND.  After `--` comes pytest's closing line.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.ONESHELL:
.DELETE_ON_ERROR:
.NOTPARALLEL:
MAKEFLAGS += --no-builtin-rules

VERSIONS := 3.11 3.12 3.13
# `:=` so a stray PY in the environment is ignored; `make test PY=3.12` still overrides it.
# Empty: the newest installed of VERSIONS.
PY :=
# pytest-xdist workers.  More than the two cores: much of the suite waits on subprocesses,
# servers and timers rather than computing.
JOBS ?= 4
PYTEST_ARGS ?=
BENCH_ARGS ?=
SEEDS ?= 500
START ?= 0
# The model behind `make demo`: openai (the OpenAI-compatible executor over HTTP, against a local
# stand-in server) or offline (a deterministic in-process executor).
DEMO_EXECUTOR ?= openai
PIP_INSTALL := python -m pip install --quiet --disable-pip-version-check --progress-bar off

export PIP_DISABLE_PIP_VERSION_CHECK := 1

# Shell helpers pasted at the top of recipes (.ONESHELL runs a recipe in one bash).
define SHELL_LIB
# pyenv_roots -> every directory that may hold pyenv's versions/ (HOME may not be the one pyenv
# was installed under, and pyenv itself may be on PATH only through its shims).
pyenv_roots() {
  [ -n "$${PYENV_ROOT:-}" ] && echo "$$PYENV_ROOT"
  command -v pyenv >/dev/null 2>&1 && pyenv root 2>/dev/null || true
  local dir
  local IFS=:
  for dir in $$PATH; do case $$dir in */shims) echo "$${dir%/shims}";; esac; done
  echo "$(HOME)/.pyenv"
}
# find_python 3.12 -> path of a working, GIL-enabled CPython 3.12, or fail.
find_python() {
  local want=$$1 candidate root
  for candidate in $$(for root in $$(pyenv_roots | awk '!seen[$$0]++'); do
                        ls -d "$$root"/versions/$$want*/bin/python 2>/dev/null | sort -rV; done) \
                   $$(command -v python$$want 2>/dev/null || true); do
    if "$$candidate" -c "import sys, sysconfig; sys.exit(sys.implementation.name != 'cpython' \
        or '%d.%d' % sys.version_info[:2] != '$$want' or bool(sysconfig.get_config_var('Py_GIL_DISABLED')))" \
        >/dev/null 2>&1; then
      echo "$$candidate"; return 0
    fi
  done
  return 1
}
# installed_versions -> the installed ones of VERSIONS, newest first.
installed_versions() {
  local v
  for v in $$(printf '%s\n' $(VERSIONS) | sort -rV); do
    if find_python $$v >/dev/null; then echo $$v; fi
  done
}
# main_version -> PY if given (it must be installed), else the newest installed of VERSIONS; says
# on stderr which one it picked and how to pick another.
main_version() {
  local v
  if [ -n "$(PY)" ]; then
    case " $(VERSIONS) " in *" $(PY) "*) ;; *)
      echo "make: PY=$(PY) is not a supported interpreter (choose from: $(VERSIONS))" >&2; return 2;;
    esac
    if ! find_python $(PY) >/dev/null; then
      echo "make: PY=$(PY): no CPython $(PY) found (looked in pyenv's versions and for python$(PY) on PATH)" >&2
      return 1
    fi
    echo $(PY); return 0
  fi
  v=$$(installed_versions | head -n 1)
  if [ -z "$$v" ]; then
    echo "make: no CPython $(VERSIONS) found (looked in pyenv's versions and on PATH)" >&2
    return 1
  fi
  echo "make: using CPython $$v, the newest installed of $(VERSIONS) (PY=3.1X picks another)" >&2
  echo $$v
}
# run_stage STAGE VERSION PYTEST_ARGS... -> runs pytest in .venv-VERSION, appends one
# `test-summary:` line to $$summary_file; returns pytest's exit status.
run_stage() {
  local stage=$$1 v=$$2 log full rc status closing started=$$SECONDS
  shift 2
  echo "==================== $$stage: python$$v ===================="
  if ! $(MAKE) -s --no-print-directory .venv-$$v/.stamp-test; then
    echo "test-summary: $$stage python$$v (-) INSTALL-FAILED" >> "$$summary_file"; return 1
  fi
  full=$$(.venv-$$v/bin/python -c 'import platform; print(platform.python_version())')
  log=.venv-$$v/pytest-$$stage.log
  set +e
  .venv-$$v/bin/python -m pytest -q -p no:cacheprovider $$(xdist_args) "$$@" $(PYTEST_ARGS) 2>&1 | tee "$$log"
  rc=$${PIPESTATUS[0]}
  set -e
  closing=$$(grep -v '^[[:space:]]*$$' "$$log" | tail -n 1 | sed -e 's/\x1b\[[0-9;]*m//g' -e 's/^=* *//' -e 's/ *=*$$//')
  case $$rc in
    0) status=PASSED;; 5) status=NO-TESTS;; 1) status=FAILED;; 2) status=INTERRUPTED;;
    3) status=INTERNAL-ERROR;; 4) status=USAGE-ERROR;; *) status=EXIT-$$rc;;
  esac
  echo "test-summary: $$stage python$$v ($$full) $$status -- $$closing" >> "$$summary_file"
  echo "stage-time: $$stage python$$v $$((SECONDS - started))s" >> "$$summary_file"
  return $$rc
}
xdist_args() {
  if [ "$(JOBS)" -gt 1 ]; then echo "-n $(JOBS) --dist worksteal"; else echo "-p no:xdist"; fi
}
# finish_summary -> prints the stage lines; fails unless every stage passed.
finish_summary() {
  echo "==================== summary ===================="
  cat "$$summary_file"
  local bad
  bad=$$(grep '^test-summary:' "$$summary_file" | awk '$$5 != "PASSED"' | wc -l)
  rm -f "$$summary_file"
  if [ "$$bad" -gt 0 ]; then echo "make $$1: FAILED" >&2; return 1; fi
  echo "make $$1: OK"
}
link_venv() { ln -sfn .venv-$$1 .venv; }
endef

.PHONY: help test test-all test-roundtrip test-adapters demo fleet-demo bench bench-quick bench-smoke bench-setup lint fuzz clean

help:
	@sed -n '3,21s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))

# ----------------------------------------------------------------------------- venvs

VENV_PYTHONS := $(VERSIONS:%=.venv-%/bin/python)

# A missing or broken (dangling symlink) venv interpreter means: (re)create the venv.
$(VENV_PYTHONS): .venv-%/bin/python:
	@$(SHELL_LIB)
	py=$$(find_python $*) || {
	  echo "make: no CPython $* found (looked in $(HOME)/.pyenv/versions/$**/bin/python and for python$* on PATH)" >&2
	  exit 1
	}
	rm -rf .venv-$*
	echo "creating .venv-$* with $$py ($$("$$py" -c 'import platform; print(platform.python_version())'))"
	"$$py" -m venv .venv-$*

$(VERSIONS:%=.venv-%/.stamp-test): .venv-%/.stamp-test: pyproject.toml .venv-%/bin/python
	@echo "installing agentrt[test] into .venv-$*"
	.venv-$*/bin/$(PIP_INSTALL) -e '.[test]'
	touch $@

# The demo needs the OpenAI-compatible executor's extra only; a venv the tests set up has it too.
$(VERSIONS:%=.venv-%/.stamp-demo): .venv-%/.stamp-demo: pyproject.toml .venv-%/bin/python
	@if [ .venv-$*/.stamp-test -nt pyproject.toml ]; then touch $@; exit 0; fi
	echo "installing agentrt[openai] into .venv-$*"
	.venv-$*/bin/$(PIP_INSTALL) -e '.[openai]'
	touch $@

# The fleet demo needs the PostgreSQL store's extra only; a venv the tests set up has it too.
$(VERSIONS:%=.venv-%/.stamp-fleet): .venv-%/.stamp-fleet: pyproject.toml .venv-%/bin/python
	@if [ .venv-$*/.stamp-test -nt pyproject.toml ]; then touch $@; exit 0; fi
	echo "installing agentrt[postgres] into .venv-$*"
	.venv-$*/bin/$(PIP_INSTALL) -e '.[postgres]'
	touch $@

$(VERSIONS:%=.venv-%/.stamp-dev): .venv-%/.stamp-dev: pyproject.toml .venv-%/bin/python
	@echo "installing agentrt[dev] into .venv-$*"
	.venv-$*/bin/$(PIP_INSTALL) -e '.[dev]'
	touch $@

# ----------------------------------------------------------------------------- test

test:
	@$(SHELL_LIB)
	v=$$(main_version)
	summary_file=$$(mktemp)
	link_venv $$v
	run_stage full $$v || true
	finish_summary test

# The matrix CI runs: the whole suite on the newest interpreter; the tests marked `interpreter` (see
# tests/conftest.py) on each other one; the round-trip pass on the oldest, so the tests that run once
# also drive their Machines on a second interpreter.  A missing interpreter fails it.
test-all:
	@$(SHELL_LIB)
	summary_file=$$(mktemp)
	newest=$$(printf '%s\n' $(VERSIONS) | sort -rV | head -n 1)
	oldest=$$(printf '%s\n' $(VERSIONS) | sort -V | head -n 1)
	for v in $(VERSIONS); do
	  if ! find_python $$v >/dev/null; then
	    echo "test-summary: - python$$v (-) NOT-FOUND" >> "$$summary_file"
	  fi
	done
	if find_python $$newest >/dev/null; then link_venv $$newest; run_stage full $$newest || true; fi
	for v in $$(printf '%s\n' $(VERSIONS) | sort -rV | tail -n +2); do
	  if find_python $$v >/dev/null; then run_stage interpreter $$v -m interpreter || true; fi
	done
	if find_python $$oldest >/dev/null; then
	  run_stage roundtrip $$oldest -p agentrt.testing.pytest_plugin --agentrt-roundtrip -m "machine and not system" || true
	fi
	finish_summary test-all

# The adapters' whole kill corpus: every agent of tests/adapters killed at every call (in-process
# runtime, the HTTP stand-in), where `make test` and CI kill a representative few.
test-adapters:
	@$(SHELL_LIB)
	v=$$(main_version)
	summary_file=$$(mktemp)
	AGENTRT_ADAPTER_KILLS=all run_stage adapters $$v tests/adapters || true
	finish_summary test-adapters

# ----------------------------------------------------------------------------- round trip

# The tests that drive Machines in-process (marker `machine`, see tests/conftest.py) with every
# Machine checkpointed and restored before each resume.
test-roundtrip:
	@$(SHELL_LIB)
	v=$$(main_version)
	summary_file=$$(mktemp)
	run_stage roundtrip $$v -p agentrt.testing.pytest_plugin --agentrt-roundtrip -m "machine and not system" || true
	finish_summary test-roundtrip

# ----------------------------------------------------------------------------- demo, bench

demo:
	@$(SHELL_LIB)
	v=$$(main_version)
	$(MAKE) -s --no-print-directory .venv-$$v/.stamp-demo
	link_venv $$v
	.venv-$$v/bin/python examples/crash_demo.py --executor $(DEMO_EXECUTOR)

# PostgreSQL's server binaries (Debian: apt-get install postgresql); the demo stops its server and
# removes its directory however it ends (Ctrl-C and SIGTERM included).
fleet-demo:
	@$(SHELL_LIB)
	v=$$(main_version)
	$(MAKE) -s --no-print-directory .venv-$$v/.stamp-fleet
	link_venv $$v
	.venv-$$v/bin/python examples/fleet_demo.py

# One driver for every benchmark mode (benchmarks/run.py): results in benchmarks/results/local/,
# never a timing ratio judged as a failure.
bench bench-quick bench-smoke bench-setup:
	@$(SHELL_LIB)
	v=$$(main_version)
	$(MAKE) -s --no-print-directory .venv-$$v/.stamp-test
	case $@ in
	  bench)       mode=--full ;;
	  bench-quick) mode=--quick ;;
	  bench-smoke) mode=--smoke ;;
	  bench-setup) mode=--set-up ;;
	esac
	.venv-$$v/bin/python benchmarks/run.py $$mode $(BENCH_ARGS)

# ----------------------------------------------------------------------------- fuzz

# Random agents run uninterrupted, with get/set at every suspension and restored in a fresh
# process (tests/fuzz); failures are reduced and printed.  One line per interpreter at the end.
fuzz:
	@$(SHELL_LIB)
	bad=0
	for v in $(or $(PY),$(VERSIONS)); do
	  if ! find_python $$v >/dev/null; then echo "python$$v not found, skipped"; continue; fi
	  $(MAKE) -s --no-print-directory .venv-$$v/.stamp-test
	  .venv-$$v/bin/python -m tests.fuzz --seeds $(SEEDS) --start $(START) || bad=$$((bad + 1))
	done
	if [ $$bad -gt 0 ]; then echo "make fuzz: FAILED" >&2; exit 1; fi
	echo "make fuzz: OK"

# ----------------------------------------------------------------------------- lint

lint:
	@$(SHELL_LIB)
	v=$$(main_version)
	$(MAKE) -s --no-print-directory .venv-$$v/.stamp-dev
	bin=.venv-$$v/bin
	failed=()
	echo "---- ruff check";          $$bin/ruff check .          || failed+=("ruff check")
	echo "---- ruff format --check"; $$bin/ruff format --check . || failed+=("ruff format")
	echo "---- mypy agentrt";        $$bin/mypy agentrt          || failed+=("mypy")
	if [ $${#failed[@]} -gt 0 ]; then echo "make lint: FAILED: $${failed[*]}" >&2; exit 1; fi
	echo "make lint: OK"

# ----------------------------------------------------------------------------- clean

clean:
	rm -rf .venv .venv-3.* build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
	rm -f benchmarks/results/*.tmp
	find . -path ./.git -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +
