#!/usr/bin/env bash
# Creates the two virtualenvs of the peer benchmarks under .venv-peers/ (at the repository root):
#   .venv-peers/openfhe   CPython 3.10 (the openfhe wheel imports only there), pins in requirements-openfhe.txt
#   .venv-peers/seal      CPython >= 3.11 (tenseal needs it),                  pins in requirements-seal.txt
# Idempotent: a stamp file keyed on the content of the requirements file skips a venv that is up to date.
#
# Override the interpreters with PYTHON310=/path/to/python3.10 and PYTHON311=/path/to/python3.11+.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venvs="$root/.venv-peers"
export PIP_DISABLE_PIP_VERSION_CHECK=1

die() { echo "bench/peers/setup.sh: error: $*" >&2; exit 1; }

# The first python that reports the wanted (major, minor) range.
#   find_python MIN_MINOR MAX_MINOR candidate...
find_python() {
    local lo="$1" hi="$2"; shift 2
    local c
    for c in "$@"; do
        [[ -n "$c" && -x "$(command -v "$c" 2>/dev/null || true)" ]] || continue
        if "$c" -c "import sys, venv; v = sys.version_info; sys.exit(not (v[0] == 3 and $lo <= v[1] <= $hi))" 2>/dev/null; then
            command -v "$c"
            return 0
        fi
    done
    return 1
}

pyenv_root="$( (command -v pyenv >/dev/null && pyenv root) 2>/dev/null || echo "$HOME/.pyenv")"

# shellcheck disable=SC2086
py310="$(find_python 10 10 "${PYTHON310:-}" $(ls -d "$pyenv_root"/versions/3.10*/bin/python3.10 2>/dev/null | sort -rV) python3.10)" \
    || die "no CPython 3.10 found (needed by the openfhe wheel). Install one (e.g. 'pyenv install 3.10') or set PYTHON310=/path/to/python3.10."
# shellcheck disable=SC2086
py311="$(find_python 11 99 "${PYTHON311:-}" python3 $(ls -d "$pyenv_root"/versions/3.1[1-9]*/bin/python3 2>/dev/null | sort -V) python3.11 python3.12)" \
    || die "no CPython >= 3.11 found (needed by tenseal). Install one or set PYTHON311=/path/to/python3.11."

make_venv() {
    local name="$1" python="$2" req="$here/$3"
    local dir="$venvs/$name"
    local hash; hash="$(sha256sum "$req" | cut -c1-16)"
    local stamp="$dir/.requirements-$hash"
    if [[ -f "$stamp" && -x "$dir/bin/python" ]]; then
        echo "bench/peers: $dir is up to date ($("$dir/bin/python" -V 2>&1))"
        return 0
    fi
    echo "bench/peers: creating $dir with $python ($("$python" -V 2>&1)) from $(basename "$req")"
    [[ -x "$dir/bin/python" ]] || "$python" -m venv "$dir"
    "$dir/bin/python" -m pip install --quiet -r "$req"
    rm -f "$dir"/.requirements-*
    touch "$stamp"
}

mkdir -p "$venvs"
make_venv openfhe "$py310" requirements-openfhe.txt
make_venv seal "$py311" requirements-seal.txt

# Smoke check: both libraries import.
OMP_NUM_THREADS=1 "$venvs/openfhe/bin/python" -c "import openfhe; print('bench/peers: openfhe', openfhe.__version__)"
"$venvs/seal/bin/python" -c "import tenseal, tenseal.sealapi; print('bench/peers: tenseal', tenseal.__version__)"
