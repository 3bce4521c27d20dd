"""Documentation that runs: the package docstring's examples, the README's Python blocks, docstrings."""

import inspect
import pathlib
import re

import pytest

import rnsfhe
from conftest import assert_doctests_pass

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_package_docstring_examples():
    assert_doctests_pass(rnsfhe)


def readme_python_blocks():
    text = README.read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_readme_has_python_examples():
    assert readme_python_blocks(), "README.md shows the Python API"


@pytest.mark.parametrize("index", range(len(readme_python_blocks())))
def test_readme_python_block_runs(index):
    code = readme_python_blocks()[index]
    exec(compile(code, f"README.md python block {index + 1}", "exec"), {"__name__": "__readme__"})


@pytest.mark.parametrize("name", rnsfhe.__all__)
def test_public_names_have_docstrings(name):
    obj = getattr(rnsfhe, name)
    if name == "__version__":
        assert re.fullmatch(r"\d+\.\d+\.\d+.*", obj)
        return
    assert inspect.getdoc(obj), f"{name} has no docstring"


def test_ntt_plan_methods_have_docstrings():
    for member in ("forward", "inverse", "n", "p", "psi", "uses_ifma"):
        assert inspect.getdoc(getattr(rnsfhe.NttPlan, member)), member


def test_example_demo_runs(run_example):
    assert "negacyclic shift of a: True" in run_example("demo")


def test_example_ckks_quickstart_runs(run_example):
    out = run_example("ckks_quickstart")
    assert "variance: encrypted" in out and "precision:" in out


def test_example_ckks_functions_runs(run_example):
    out = run_example("ckks_functions")
    assert "max |decrypted - tanh(x)|" in out and "encrypted" in out


def test_example_logistic_regression_runs(capsys):
    # --short: the "PaperTable4" chain at N = 2^13 (insecure, about 3 s); the default runs the preset itself.
    from conftest import EXAMPLES

    path = EXAMPLES / "logistic_regression.py"
    namespace = {"__name__": "example"}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    namespace["main"](["--short"])
    out = capsys.readouterr().out
    assert "INSECURE" in out and "RNS-CKKS Table 4 (the paper)            69.73%   0.620" in out
    encrypted = [line for line in out.splitlines() if line.startswith("trained encrypted (rnsfhe)")]
    plain = [line for line in out.splitlines() if line.startswith("same procedure in plaintext (numpy)")]
    assert len(encrypted) == len(plain) == 1 and encrypted[0].split()[-2:] == plain[0].split()[-2:]
