"""Qu-Xu Figures 1 and 2 as PNG, from the CSV files `rnsfhe bench exact-conversion` writes.

Figure 1: the lower bound on eta of Theorem 1 (failure rate r = 0.001) versus the number l of source primes.
Figure 2: the largest eta of Algorithm 2 and the failure bound L 2^-eta / (1 - 2^-eta) versus the depth L, for
N = 2^14 and q = 2^50.

    make plots            # creates .venv-plot from docs/bench/requirements-plot.txt, then runs this script
"""

import csv
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent


def read(name):
    """The rows of a CSV file next to this script, as dicts of floats."""
    with open(HERE / name, newline="", encoding="utf-8") as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def figure1(out):
    rows = read("figure1.csv")
    l = [r["l"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(l, [r["eta_lower_bound_r0.001"] for r in rows], label="log2((r + l) / r)")
    ax.step(l, [r["smallest_integer_eta"] for r in rows], where="mid", label="smallest integer eta")
    ax.set_xlabel("number of source primes l")
    ax.set_ylabel("eta")
    ax.set_title("Qu-Xu Figure 1: eta needed for failure rate r = 0.001")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def figure2(out):
    rows = read("figure2.csv")
    depth = [r["L"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.step(depth, [r["eta_max"] for r in rows], where="mid", color="tab:blue", label="largest eta (Algorithm 2)")
    ax.set_xlabel("depth L")
    ax.set_ylabel("eta", color="tab:blue")
    other = ax.twinx()
    other.semilogy(depth, [r["failure_bound"] for r in rows], color="tab:red", label="L 2^-eta / (1 - 2^-eta)")
    other.set_ylabel("failure bound", color="tab:red")
    ax.set_title("Qu-Xu Figure 2: N = 2^14, q = 2^50")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main():
    figure1(HERE / "figure1.png")
    figure2(HERE / "figure2.png")
    print(f"wrote {HERE / 'figure1.png'} and {HERE / 'figure2.png'}", file=sys.stderr)


if __name__ == "__main__":
    main()
