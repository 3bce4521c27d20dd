# rnsfhe: build, demo and tests.
#
#   make demo   build everything (release) and run the demo
#   make test   check formatting, clippy and rustdoc (warnings denied), then run every test: Rust (unit,
#               integration, doc tests) and Python (pytest)
#
# Both install what they need by themselves: the Rust crates come from crates.io through cargo, the Python
# tools (pinned in python/requirements-dev.txt, Ray for rnsfhe.distributed in python/requirements-distributed.txt)
# go into the virtualenv $(VENV), created from $(PYTHON).
# Needs: a Rust toolchain (cargo) and Python >= 3.10 with the venv module.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# rustup installs cargo in ~/.cargo/bin, which a non-login shell may not have on its PATH.
export PATH := $(HOME)/.cargo/bin:$(PATH)
export PIP_DISABLE_PIP_VERSION_CHECK := 1

CARGO ?= cargo
PYTHON ?= python3
VENV ?= .venv
VENV_PY := $(VENV)/bin/python
REQUIREMENTS := python/requirements-dev.txt python/requirements-distributed.txt
# The stamp is keyed on the content of the requirements: changing a pin reinstalls, nothing else does.
REQUIREMENTS_HASH := $(shell cat $(REQUIREMENTS) | sha256sum | cut -c1-16)
VENV_STAMP := $(VENV)/.requirements-$(REQUIREMENTS_HASH)
RNSFHE := target/release/rnsfhe

.PHONY: help demo test lint fmt-check clippy doc-check test-rust test-python build python-ext venv bench bench-kernels clean check-tools check-lint-tools

help:
	@echo "make demo    build everything in release mode and run the demo"
	@echo "make test    check fmt, clippy and rustdoc, then run the Rust and Python tests (creates $(VENV) on first use)"
	@echo "make lint    only the checks of make test: cargo fmt --check, clippy and rustdoc, warnings denied"
	@echo "make bench   regenerate the NTT benchmark table (bench-results/ntt.json)"
	@echo "make bench-kernels   criterion micro-benchmarks of the hot kernels (cargo bench -p rnsfhe-bench)"
	@echo "make clean   remove build outputs, $(VENV) and bench-results/"

check-tools:
	@command -v $(CARGO) >/dev/null || { echo "error: cargo not found; install Rust (https://rustup.rs)" >&2; exit 1; }
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; install Python >= 3.10" >&2; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { echo "error: $(PYTHON) is older than 3.10" >&2; exit 1; }

# rustfmt and clippy are rustup components that a minimal toolchain lacks: add them when rustup manages the
# toolchain, otherwise say what is missing. Only `make test` needs them (`make demo` does not).
check-lint-tools: check-tools
	@for c in fmt:rustfmt clippy:clippy; do \
	  sub=$${c%%:*}; comp=$${c#*:}; \
	  $(CARGO) $$sub --version >/dev/null 2>&1 && continue; \
	  if command -v rustup >/dev/null; then \
	    echo "cargo $$sub missing: rustup component add $$comp"; rustup component add $$comp; \
	  else \
	    echo "error: cargo $$sub not found and no rustup to add it; install the $$comp component of your Rust toolchain" >&2; exit 1; \
	  fi; \
	  $(CARGO) $$sub --version >/dev/null 2>&1 || { echo "error: cargo $$sub still not available after rustup component add $$comp" >&2; exit 1; }; \
	done

# ---- demo -------------------------------------------------------------------------------------------------

demo: build python-ext
	$(RNSFHE) demo
	@echo
	$(RNSFHE) bench ntt --quick
	@echo
	$(VENV_PY) python/examples/demo.py

build: check-tools
	$(CARGO) build --release --workspace --exclude rnsfhe-python

bench: check-tools
	$(CARGO) run --release -p rnsfhe-cli -- bench ntt

# NTT, basis conversion, HPS scaling and key switching under criterion (target/criterion/); a few minutes.
bench-kernels: check-tools
	$(CARGO) bench -p rnsfhe-bench

# ---- tests ------------------------------------------------------------------------------------------------

test: lint test-rust test-python

# The habits, checked before the tests (cheapest first): formatting, clippy with every warning an error
# (the workspace lints in Cargo.toml deny unwrap, expect and panic in library code) and rustdoc with every
# warning an error (broken or private intra-doc links and rustdoc's other lints).
lint: fmt-check clippy doc-check

fmt-check: check-lint-tools
	$(CARGO) fmt --all --check

# --release like the tests: the build scripts and proc macros (serde_derive, clap_derive, pyo3's build
# script, ...) are then compiled once for both, and `doc-check` reuses the dependencies clippy checked.
clippy: check-lint-tools
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings

# The extension crate is left out: rustdoc crashes on it (an internal compiler error resolving an intra-doc
# link of numpy 0.23, `ToPyArray::to_pyarray`, which it documents through its numpy types). It has no Rust
# API of its own to document: its API is the Python package.
doc-check: check-tools
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --release --no-deps --workspace --exclude rnsfhe-python

# Unit, integration and doc tests of every crate except the extension module (it links only into Python);
# the Rust code blocks of README.md run as doc tests of the facade crate (`ReadmeDoctests`).
test-rust: check-tools
	$(CARGO) test --release --workspace --exclude rnsfhe-python

test-python: python-ext
	$(VENV_PY) -m pytest python/tests

# ---- Python -----------------------------------------------------------------------------------------------

venv: $(VENV_STAMP)

$(VENV_STAMP): $(REQUIREMENTS) | check-tools
	@test -x $(VENV_PY) || $(PYTHON) -m venv $(VENV)
	$(VENV_PY) -m pip install --quiet $(foreach r,$(REQUIREMENTS),-r $(r))
	@rm -f $(VENV)/.requirements-*
	@touch $@

# Builds the extension (release) and installs the package `rnsfhe` into the virtualenv (editable).
python-ext: $(VENV_STAMP)
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release --manifest-path python/Cargo.toml

clean:
	$(CARGO) clean
	rm -rf $(VENV) bench-results python/rnsfhe/*.so python/rnsfhe/__pycache__ python/tests/__pycache__

# ---- peers: our CKKS against OpenFHE and SEAL (bench/peers/README.md) --------------------------------------

# make bench-peers                          the three Table 1 presets, 15 interleaved rounds each
# make bench-peers PRESET=PaperTable1L5     one preset (or several, space-separated); ROUNDS=5 for fewer rounds; PEERS_ARGS=... for more flags
PRESET ?=
ROUNDS ?= 15
PEERS_ARGS ?=

.PHONY: bench-peers
bench-peers: check-tools
	bash bench/peers/setup.sh
	$(CARGO) build --release -p rnsfhe-cli
	$(PYTHON) bench/peers/compare_table1.py --rounds $(ROUNDS) $(foreach p,$(PRESET),--preset $(p)) $(PEERS_ARGS)

# ---- peers: our BFV against OpenFHE BFVRNS (bench/peers/README.md, "BFV") ---------------------------------

# make bench-peers-bfv                               t = 65537, depths 1, 5, 10, 20, 15 interleaved rounds each
# make bench-peers-bfv BFV_PRESET=BfvT65537L10      one preset (or several); ROUNDS=5 for fewer rounds;
#                                                    PEERS_ARGS="--native --depth30" for OpenFHE's own parameters and depth 30
BFV_PRESET ?=

.PHONY: bench-peers-bfv
bench-peers-bfv: check-tools
	bash bench/peers/setup.sh
	$(CARGO) build --release -p rnsfhe-cli
	$(PYTHON) bench/peers/compare_bfv.py --rounds $(ROUNDS) $(foreach p,$(BFV_PRESET),--preset $(p)) $(PEERS_ARGS)

# ---- peers: CKKS functions and statistics against OpenFHE (RNS-CKKS Tables 2 and 3; bench/peers/README.md) ---

# make bench-peers-functions                 sigmoid, exp, 1/x (Chebyshev, degrees 7 to 59), mean and variance;
#                                            15 interleaved rounds per row
# make bench-peers-functions ROUNDS=5        fewer rounds; PEERS_ARGS="--quick" (degrees 7 and 15, 3 rounds) or
#                                            PEERS_ARGS="--same-depth" (both sides at the larger depth)

.PHONY: bench-peers-functions
bench-peers-functions: check-tools
	bash bench/peers/setup.sh
	$(CARGO) build --release -p rnsfhe-cli
	$(PYTHON) bench/peers/compare_functions.py --rounds $(ROUNDS) $(PEERS_ARGS)

# ---- the Python API against the same calls from Rust (bench/peers/README.md, "Python overhead") -----------

# make bench-python                          the Table 1 operations of the three presets, Python / Rust, 15 rounds
# make bench-python PRESET=PaperTable1L5     one preset; ROUNDS=5 for fewer rounds
# make bench-python SCHEME=bfv THREADS=2     the BFV operations (presets_bfv.json), both sides on 2 threads

.PHONY: bench-python
bench-python: check-tools python-ext
	$(CARGO) build --release -p rnsfhe-cli
	$(PYTHON) bench/peers/compare_python.py --rounds $(ROUNDS) $(foreach p,$(PRESET),--preset $(p)) \
		$(if $(SCHEME),--scheme $(SCHEME)) $(if $(THREADS),--threads $(THREADS)) $(PEERS_ARGS)

# ---- peers: PEGASUS look-up tables against OpenFHE binfhe (docs/bench/pegasus-peers.md) ---------------------

# make bench-peers-pegasus                   pegasus-table5 first, then LUTs, key switches, EvalSign and CKKS -> FHEW,
#                                            15 interleaved rounds per row (about 10 minutes here)
# make bench-peers-pegasus PEERS_ARGS=--quick   3 rounds, the cheap rows (about a minute); ROUNDS=5 for 5 rounds;
#                                            PEERS_ARGS="--ap --fhew-to-ckks" adds OpenFHE's AP and FHEW -> CKKS rows

.PHONY: bench-peers-pegasus
bench-peers-pegasus: check-tools python-ext
	bash bench/peers/setup.sh
	$(CARGO) build --release -p rnsfhe-cli
	$(PYTHON) bench/peers/compare_pegasus.py $(if $(filter-out file,$(origin ROUNDS)),--rounds $(ROUNDS)) $(PEERS_ARGS)

# ---- peers: CKKS bootstrapping against OpenFHE's EvalBootstrap (bench/peers/README.md, "CKKS bootstrapping") ---

# make bench-peers-bootstrap                 N = 2^16, 2^15 and 2^12 slots, 128-bit, 3 interleaved rounds each
#                                            (OpenFHE holds about 13 GB at 2^15 slots; check `free -g` first)
# make bench-peers-bootstrap PEERS_ARGS=--quick   the insecure smoke set-up (N = 2^12, seconds); ROUNDS=5 for
#                                            5 rounds; PEERS_ARGS="--sequential" for one key set in memory at a time

.PHONY: bench-peers-bootstrap
bench-peers-bootstrap: check-tools
	bash bench/peers/setup.sh
	$(CARGO) build --release -p rnsfhe-cli
	$(PYTHON) bench/peers/compare_bootstrap.py $(if $(filter-out file,$(origin ROUNDS)),--rounds $(ROUNDS)) $(PEERS_ARGS)

# Qu-Xu Figures 1 and 2 as PNG from docs/bench/figure*.csv (written by `rnsfhe bench exact-conversion`):
# make plots                                 creates .venv-plot (matplotlib, pinned in
#                                            docs/bench/requirements-plot.txt) and writes docs/bench/figure*.png

.PHONY: plots
plots:
	test -x .venv-plot/bin/python || $(PYTHON) -m venv .venv-plot
	.venv-plot/bin/pip install -q -r docs/bench/requirements-plot.txt
	.venv-plot/bin/python docs/bench/plot_figures.py
