# agentrt: the single entry point.
#
#   make test                    pytest on every installed CPython 3.11 / 3.12 / 3.13, one after another
#   make test PY=3.12            ... on one of them (PY="3.11 3.13" for two)
#   make test PYTEST_ARGS='-k foo -x'
#   make demo                    examples/crash_demo.py: SIGKILL an agent mid-run, finish it with agentrt resume
#   make demo DEMO_EXECUTOR=offline   ... with the in-process model executor instead of the HTTP one
#   make test-roundtrip           the suite under the --agentrt-roundtrip plugin (CI runs it)
#   make bench [BENCH_ARGS=...]  benchmarks/step, coldstart, trap, checkpoint, resume, llm, workers -> summary.md
#   make bench-smoke             ... each with --quick (proves they run; no timing ratio is asserted)
#   make lint                    ruff check, ruff format --check, mypy (3.12 venv with .[dev])
#   make fuzz [SEEDS=N] [START=S] [PY=3.12]   differential fuzzer: N random agents per interpreter
#   make clean
#
# Each interpreter gets its own venv, .venv-3.1X, created on first use and re-installed
# (pip install -e) whenever pyproject.toml is newer than the venv's stamp file.
# Interpreters are looked up in $(HOME)/.pyenv/versions/3.1X*/bin/python, then as
# python3.1X on PATH; free-threaded builds are skipped.
#
# `make test` ends with one line per interpreter, which .ci/run reads:
#   test-summary: python3.12 (3.12.1) PASSED -- 41 passed, 2 skipped in 3.10s
# statuses: PASSED, FAILED, NO-TESTS (pytest exit 5), INTERRUPTED / INTERNAL-ERROR / USAGE-ERROR
# (pytest exit 2 / 3 / 4), INSTALL-FAILED, NOT-FOUND.  After `--` comes pytest's closing line.
# It fails if any interpreter FAILED or could not be installed, if an interpreter named
# explicitly with PY= is missing, or if no interpreter ran any test at all.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.ONESHELL:
.DELETE_ON_ERROR:
.NOTPARALLEL:
MAKEFLAGS += --no-builtin-rules

VERSIONS := 3.11 3.12 3.13
# `:=` so a stray PY in the environment is ignored; `make test PY=3.12` still overrides it.
PY := $(VERSIONS)
PYTEST_ARGS ?=
BENCH_ARGS ?=
SEEDS ?= 500
START ?= 0
# The model behind `make demo`: openai (the OpenAI-compatible executor over HTTP, against a local
# stand-in server) or offline (a deterministic in-process executor).
DEMO_EXECUTOR ?= openai
# The venv used by demo, bench and lint (falls back to the first interpreter found).
MAIN_PY ?= 3.12
PIP_INSTALL := python -m pip install --quiet --disable-pip-version-check --progress-bar off

export PIP_DISABLE_PIP_VERSION_CHECK := 1

# Shell helpers pasted at the top of recipes (.ONESHELL runs a recipe in one bash).
define SHELL_LIB
# find_python 3.12 -> path of a working, GIL-enabled CPython 3.12, or fail.
find_python() {
  local want=$$1 candidate
  for candidate in $$(ls -d $(HOME)/.pyenv/versions/$$want*/bin/python 2>/dev/null | sort -rV) \
                   $$(command -v python$$want 2>/dev/null || true); do
    if "$$candidate" -c "import sys, sysconfig; sys.exit(sys.implementation.name != 'cpython' \
        or '%d.%d' % sys.version_info[:2] != '$$want' or bool(sysconfig.get_config_var('Py_GIL_DISABLED')))" \
        >/dev/null 2>&1; then
      echo "$$candidate"; return 0
    fi
  done
  return 1
}
# main_version -> MAIN_PY if it is installed, else the first of VERSIONS that is.
main_version() {
  local v
  for v in $(MAIN_PY) $(VERSIONS); do
    if find_python $$v >/dev/null; then echo $$v; return 0; fi
  done
  echo "make: no CPython $(VERSIONS) found (looked in $(HOME)/.pyenv/versions and on PATH)" >&2
  return 1
}
endef

.PHONY: help test test-roundtrip demo bench bench-smoke lint fuzz clean

help:
	@sed -n '3,13s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))

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

$(VERSIONS:%=.venv-%/.stamp-dev): .venv-%/.stamp-dev: pyproject.toml .venv-%/bin/python
	@echo "installing agentrt[dev] into .venv-$*"
	.venv-$*/bin/$(PIP_INSTALL) -e '.[dev]'
	touch $@

# ----------------------------------------------------------------------------- test

test:
	@$(SHELL_LIB)
	for v in $(PY); do
	  case " $(VERSIONS) " in *" $$v "*) ;; *)
	    echo "make: PY=$$v is not a supported interpreter (choose from: $(VERSIONS))" >&2; exit 2;;
	  esac
	done
	strict_py=$(if $(filter command line,$(origin PY)),1,0)
	summary=(); ran=0; passed=0; bad=0
	main=$$(main_version)
	for v in $(PY); do
	  echo "==================== python$$v ===================="
	  if ! py=$$(find_python $$v); then
	    echo "python$$v not found, skipped"
	    summary+=("test-summary: python$$v (-) NOT-FOUND")
	    if [ "$$strict_py" = 1 ]; then bad=$$((bad + 1)); fi
	    continue
	  fi
	  full=$$("$$py" -c 'import platform; print(platform.python_version())')
	  if ! $(MAKE) -s --no-print-directory .venv-$$v/.stamp-test; then
	    summary+=("test-summary: python$$v ($$full) INSTALL-FAILED")
	    bad=$$((bad + 1)); continue
	  fi
	  full=$$(.venv-$$v/bin/python -c 'import platform; print(platform.python_version())')
	  ran=$$((ran + 1))
	  log=.venv-$$v/pytest-last.log
	  set +e
	  # Whole-system tests (fleets, HTTP load, the browser) exercise no interpreter-specific code:
	  # they run on the main interpreter only ($(MAIN_PY), or the first one found).
	  only_main=()
	  if [ "$$v" != "$$main" ]; then only_main=(-m "not system"); fi
	  .venv-$$v/bin/python -m pytest -q -p no:cacheprovider "$${only_main[@]}" $(PYTEST_ARGS) 2>&1 | tee "$$log"
	  rc=$${PIPESTATUS[0]}
	  set -e
	  closing=$$(grep -v '^[[:space:]]*$$' "$$log" | tail -n 1 | sed -e 's/\x1b\[[0-9;]*m//g' -e 's/^=* *//' -e 's/ *=*$$//')
	  case $$rc in
	    0) status=PASSED; passed=$$((passed + 1));;
	    5) status=NO-TESTS;;
	    1) status=FAILED; bad=$$((bad + 1));;
	    2) status=INTERRUPTED; bad=$$((bad + 1));;
	    3) status=INTERNAL-ERROR; bad=$$((bad + 1));;
	    4) status=USAGE-ERROR; bad=$$((bad + 1));;
	    *) status=EXIT-$$rc; bad=$$((bad + 1));;
	  esac
	  summary+=("test-summary: python$$v ($$full) $$status -- $$closing")
	done
	echo "==================== summary ===================="
	printf '%s\n' "$${summary[@]}"
	if [ $$ran -eq 0 ]; then
	  echo "make test: no interpreter could run the tests (need one of CPython $(VERSIONS))" >&2; exit 1
	fi
	if [ $$bad -gt 0 ]; then echo "make test: FAILED" >&2; exit 1; fi
	if [ $$passed -eq 0 ]; then echo "make test: FAILED: no test ran on any interpreter" >&2; exit 1; fi
	echo "make test: OK"

# ----------------------------------------------------------------------------- round trip

# The suite with every Machine checkpointed and restored before each resume.
test-roundtrip:
	@$(SHELL_LIB)
	v=$$(main_version)
	$(MAKE) -s --no-print-directory .venv-$$v/.stamp-test
	.venv-$$v/bin/python -m pytest -q -p no:cacheprovider -p agentrt.testing.pytest_plugin --agentrt-roundtrip -m "not system" $(PYTEST_ARGS)

# ----------------------------------------------------------------------------- demo, bench

demo:
	@$(SHELL_LIB)
	v=$$(main_version)
	$(MAKE) -s --no-print-directory .venv-$$v/.stamp-test
	.venv-$$v/bin/python examples/crash_demo.py --executor $(DEMO_EXECUTOR)

bench bench-smoke:
	@$(SHELL_LIB)
	if [ ! -f benchmarks/checkpoint.py ]; then
	  echo "make $@: benchmarks/checkpoint.py does not exist yet" >&2; exit 1
	fi
	v=$$(main_version)
	$(MAKE) -s --no-print-directory .venv-$$v/.stamp-test
	quick=$(if $(filter bench-smoke,$@),--quick)
	.venv-$$v/bin/python benchmarks/step.py $$quick
	.venv-$$v/bin/python benchmarks/coldstart.py $$quick
	.venv-$$v/bin/python benchmarks/trap.py $$quick
	.venv-$$v/bin/python benchmarks/checkpoint.py $$quick $(BENCH_ARGS)
	.venv-$$v/bin/python benchmarks/resume.py $$quick
	.venv-$$v/bin/python benchmarks/llm.py $$quick
	.venv-$$v/bin/python benchmarks/workers.py $$quick
	.venv-$$v/bin/python benchmarks/summary.py $$quick

# ----------------------------------------------------------------------------- fuzz

# Random agents run uninterrupted, with get/set at every suspension and restored in a fresh
# process (tests/fuzz); failures are reduced and printed.  One line per interpreter at the end.
fuzz:
	@$(SHELL_LIB)
	bad=0
	for v in $(PY); do
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
	rm -rf .venv-3.* build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
	rm -f benchmarks/results/*.tmp
	find . -path ./.git -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +
