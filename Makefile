# Two promises: `make book` builds the HTML book, `make test` runs every test.
# Both create the virtual environment and install the pinned requirements first.

VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
HTML   := _build/html
NB     ?= notebooks/*.ipynb
PORT   ?= 8000

export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
export PYDEVD_DISABLE_FILE_VALIDATION := 1

BOOK_BUILD := jupyter-book build . --all -W -n --keep-going
# make test builds from the outputs stored in the notebooks, which its strict nbval passes have just
# shown equal to a fresh run (tools/notebooks/stored_config.py); make book, for readers, executes every chapter.
STORED_CONFIG := .config-stored-outputs.yml
NBVAL      := --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout=600
# pytest workers: one per core, at most 4 (each runs notebooks and Chromium); JOBS=1 runs in order.
JOBS       ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 4 ] && n=4; echo $$n)
# A test file runs on one worker: a notebook's cells share a kernel, a module its fixtures.
PARALLEL   := -n $(JOBS) --dist loadfile
# Another x86-64 CPU, emulated: numpy without AVX/AVX2/FMA kernels, OpenBLAS's oldest SSE3 kernels.
OTHER_CPU  := NPY_DISABLE_CPU_FEATURES="AVX2 FMA3 F16C AVX" OPENBLAS_CORETYPE=Prescott

.PHONY: all venv book pdf lint check test test-registry fixtures FORCE unit test-other-cpu bench browser execute serve clean screenshots student dist wheels check-wheels pageweight

all: book

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	touch $@

## The book is rebuilt only when something it is built from changed since the last `make book`
## (BOOK_STAMP): so `make dist` after `make book` reuses it (tests/test_workflow_make.py checks with
## `make -n`). `make book FORCE=1` builds it anyway.
BOOK_SOURCES := _config.yml _toc.yml references.bib $(wildcard book/* notebooks/*.ipynb _static/* \
                _static/scripts/* data/* data/published/*) $(shell find lib tools -name '*.py' 2>/dev/null)
BOOK_STAMP   ?= _build/.book-built

book: $(BOOK_STAMP)
	@echo "The book is at $(CURDIR)/$(HTML)/index.html"

$(BOOK_STAMP): $(STAMP) $(BOOK_SOURCES) $(if $(FORCE),FORCE)
	$(BOOK_BUILD)
	@mkdir -p $(dir $@) && touch $@

## The book as one PDF, _build/pdf/twice-the-devices.pdf: Jupyter Book's single-page build
## (after `make book` it reuses the executed notebooks), printed by the system Chromium.
pdf: $(STAMP)
	$(PY) -m tools.pdf

## Three tiers (the README gives each one's time):
##   make check  ruff, then the unit tests and doctests of lib and tools but those marked slow: the inner loop.
##   make test   every test once: unit, doctest, property, book and release tests; strict nbval over
##               every chapter; the same chapters and every test marked `stored` (a float computed
##               here compared with a committed value) again on an emulated older CPU; the book from
##               the stored outputs nbval has just checked; the browser tests while the PDF prints
##               beside them (they mostly wait on pages, it computes); then the PDF's tests.
##               Each part is timed (tools/timed.py) and the log ends with the table.
##   .ci/run     make test, then what may need the package registry (make test-registry: the offline
##               install under every supported Python, and make check-wheels).
## Without Chromium (and not in CI) the PDF is skipped, and its tests with it.
LINTED     := lib tools tests conftest.py
DURATIONS  := --durations=25
TIMED      := $(PY) -m tools.timed

lint: $(STAMP)
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)

check: lint
	$(PY) -m pytest $(PARALLEL) -m "not slow" lib tools tests/unit

test: $(STAMP)
	@$(TIMED) --start
	@$(TIMED) lint $(MAKE) --no-print-directory lint
	@$(TIMED) tests $(PY) -m pytest $(PARALLEL) $(DURATIONS) -m "not browser and not pdf and not registry" lib tools tests
	@$(TIMED) nbval $(PY) -m pytest $(PARALLEL) $(DURATIONS) notebooks $(NBVAL)
	@$(TIMED) other-cpu $(MAKE) --no-print-directory test-other-cpu
	@$(TIMED) book sh -c '$(PY) -m tools.notebooks.stored_config _config.yml $(STORED_CONFIG) && \
	    $(BOOK_BUILD) --config $(STORED_CONFIG)'
	@$(TIMED) --together browser '$(PY) -m pytest $(PARALLEL) $(DURATIONS) -m "browser and not pdf" tests' \
	    pdf '$(PY) -m tools.pdf --config $(STORED_CONFIG) --skip-without-chromium'
	@$(TIMED) pdf-tests $(PY) -m pytest $(PARALLEL) $(DURATIONS) -m pdf tests
	@$(TIMED) --summary

unit: $(STAMP)
	$(PY) -m pytest $(PARALLEL) -m "not browser and not pdf and not registry" lib tools tests

## What may need the package registry: the participants' offline install under every supported
## Python (its wheels are downloaded once into _build/offline-wheels), then make check-wheels.
test-registry: $(STAMP)
	$(PY) -m pytest $(PARALLEL) $(DURATIONS) -m registry tests
	$(MAKE) --no-print-directory check-wheels

## The chapters and every test marked `stored`, on an emulated older x86-64 CPU: a float that only
## one CPU reproduces, compared exactly in a test or a stored output, fails here, not on a
## reader's laptop. (nbval's cells and lib's doctests count as stored: tools/notebooks/nbval_rules.py.)
test-other-cpu: $(STAMP)
ifeq ($(shell uname -m),x86_64)
	$(OTHER_CPU) $(PY) -m pytest $(PARALLEL) -p no:cacheprovider -m stored lib tests notebooks $(NBVAL)
else
	@echo "test-other-cpu: not run; the CPU emulation ($(OTHER_CPU)) needs x86-64, this is $(shell uname -m)"
endif


browser: $(STAMP)
	$(PY) -m pytest -m browser tests

## The planner's golden cases (tests/browser/golden/): lib's answers for the seeded scenarios and every
## call to a mirrored function. Rerun after changing lib (a unit test says when); review the diff.
fixtures: $(STAMP)
	$(PY) -m tools.site.planner_golden

execute: $(STAMP)
	$(PY) -m tools.notebooks.execute $(NB)

serve: $(STAMP)
	$(PY) -m http.server --bind 127.0.0.1 --directory $(HTML) $(PORT)

FORCE:

clean:
	rm -rf _build .pytest_cache .hypothesis .jupyter_cache $(STORED_CONFIG)

## Speed goals live in benchmarks that print their figures (tests never assert timings).
bench: $(STAMP)
	$(PY) -m tools.bench_plan
	$(PY) -m tools.site.bench_page $(HTML)

## Extras for readers and teachers.
screenshots: $(STAMP)
	$(PY) -m tools.site.screenshots $(HTML) _build/screenshots

pageweight: $(STAMP)
	$(PY) -m tools.site.pageweight $(HTML)

## Student notebooks (no solutions, plain Markdown) and the teacher's reading
## copies of the full chapters (solutions and outputs, plain Markdown).
student: $(STAMP)
	$(PY) -m tools.teaching.student notebooks _build/student
	$(PY) -m tools.teaching.student --full notebooks _build/full

## Two zips: twice-the-devices-workshop.zip (participants: no solutions, no
## answer sheet, no teacher's guide) and twice-the-devices-teacher.zip (everything, the PDF
## included). It reuses the book of `make book` (BOOK_STAMP; not the stored-outputs build of `make
## test`), and prints the PDF from it only if the book is newer than the PDF; without Chromium the
## PDF is skipped with a message (in CI it is an error).
PDF_FILE ?= _build/pdf/twice-the-devices.pdf

$(PDF_FILE): $(BOOK_STAMP)
	$(PY) -m tools.pdf --skip-without-chromium

dist: $(BOOK_STAMP) student $(PDF_FILE)
	$(PY) -m tools.release.dist _build/dist

## Every package the participant commands install, for every laptop of an offline room (Linux
## x86-64, macOS arm64 and x86-64, Windows x86-64; Python 3.11, 3.12, 3.13), into _build/wheels,
## outside the bundle; copy its files into the unzipped bundle's wheels/. TORCH=1 adds CPU torch.
## It needs only Python with pip and packaging (a participant's environment will do), not the
## book's toolchain; without make: python -m tools.release.wheels _build/wheels [--torch].
WHEEL_PY := $(if $(wildcard $(PY)),$(PY),python3)

wheels:
	$(WHEEL_PY) -m tools.release.wheels _build/wheels $(if $(TORCH),--torch)

## The participant pins (and torch's, where the registry serves its CPU wheels) resolve for every
## platform and Python, with everything they need pinned. Needs the package registry, so it is
## not part of `make test`; .ci/run runs it.
check-wheels:
	$(WHEEL_PY) -m tools.release.wheel_check
	$(WHEEL_PY) -m tools.release.wheel_check --torch
