"""Documentation that runs: the package docstring's examples, the Python blocks of README.md and docs/*.md,
the links between those pages, docstrings."""

import inspect
import pathlib
import re

import pytest

import rnsfhe
from conftest import assert_doctests_pass

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]


def test_package_docstring_examples():
    assert_doctests_pass(rnsfhe)


def code_blocks(page, language):
    text = page.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)


def python_blocks():
    """(page, index, code) of every Python block of the README and of docs/."""
    return [
        (page, index, code)
        for page in PAGES
        for index, code in enumerate(code_blocks(page, "python"))
    ]


def test_readme_has_python_examples():
    assert code_blocks(README, "python"), "README.md shows the Python API"


@pytest.mark.parametrize(
    "page, index, code",
    python_blocks(),
    ids=[f"{page.relative_to(ROOT)}-{index + 1}" for page, index, _ in python_blocks()],
)
def test_python_block_runs(page, index, code):
    name = f"{page.relative_to(ROOT)} python block {index + 1}"
    exec(compile(code, name, "exec"), {"__name__": "__docs__"})


def test_rust_blocks_run_as_doc_tests():
    """Every page with Rust blocks is included as a doc test of the facade crate (crates/rnsfhe/src/lib.rs)."""
    lib = (ROOT / "crates" / "rnsfhe" / "src" / "lib.rs").read_text(encoding="utf-8")
    included = {ROOT / "crates" / "rnsfhe" / "src" / path for path in re.findall(r'=> "([^"]+\.md)"', lib)}
    included = {path.resolve() for path in included}
    missing = [str(page.relative_to(ROOT)) for page in PAGES if code_blocks(page, "rust") and page not in included]
    assert not missing, f"pages whose Rust blocks are not doc tests: {missing}"


def relative_links(page):
    """The relative link targets of a markdown page, outside code blocks (anchors and URLs left out)."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    return [t.split("#")[0] for t in targets if not re.match(r"[a-z]+:", t) and not t.startswith("#")]


LINKED_PAGES = sorted(
    page
    for page in {*PAGES, ROOT / "SECURITY.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("*/*/README.md"), *ROOT.glob("*/README.md")}
    if not any(part.startswith(".") or part == "target" for part in page.relative_to(ROOT).parts)
)


@pytest.mark.parametrize("page", LINKED_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    broken = [t for t in relative_links(page) if not (page.parent / t).exists()]
    assert not broken, f"{page.relative_to(ROOT)} links to missing files: {broken}"


def test_docs_name_no_issue_numbers_or_outside_files():
    for page in LINKED_PAGES:
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"\bissues? \d", text, flags=re.I), page
        assert "../shared" not in text, page


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
