"""PEGASUS Figure 8 (Lu et al., IEEE S&P 2021, Section VI.C.3): test accuracy of k-means used as a
classifier against the closest-assignment ratio rho, by plaintext simulation as the paper does it: in each
centroid update a proportion 1 - rho of the training points, chosen at random, goes to a random centroid
other than its closest one (rnsfhe_apps::kmeans::plain::perturbed_assignment is the same rule in Rust).

k-means as a classifier: K = the number of classes, features standardized on the training fold, each
cluster labelled by the majority label of its training points, a test point by its closest centroid. The
baseline is scikit-learn's KMeans (k-means++, 10 initializations) as in the paper; the simulated k-means
starts from K random training points and runs ITERATIONS updates. Everything is averaged over RUNS seeded
runs of 10-fold stratified cross-validation (the paper: 20 runs).

    .venv/bin/python docs/bench/kmeans_figure8.py            # writes kmeans-figure8.md and .csv here
    .venv/bin/python docs/bench/kmeans_figure8.py --runs 2   # a quick look

Needs scikit-learn (python/requirements-dev.txt); a PNG is drawn too when matplotlib can be imported.
"""

import argparse
import csv
import pathlib

import numpy as np
from sklearn import datasets
from sklearn.cluster import KMeans
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler

HERE = pathlib.Path(__file__).resolve().parent
RHOS = [1.0, 0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5]
ITERATIONS = 10
DATASETS = {
    "iris": datasets.load_iris,
    "wine": datasets.load_wine,
    "breast_cancer": datasets.load_breast_cancer,
}


def perturbed_lloyd(x, k, rho, rng):
    """k-means from k random points; each update assigns a proportion 1 - rho of the points to a random
    centroid other than the closest (PEGASUS Section VI.C.3)."""
    c = x[rng.choice(len(x), size=k, replace=False)].copy()
    for _ in range(ITERATIONS):
        closest = np.argmin(((x[:, None, :] - c[None]) ** 2).sum(2), axis=1)
        moved = rng.random(len(x)) >= rho
        other = rng.integers(0, k - 1, size=len(x))
        other = other + (other >= closest)
        a = np.where(moved, other, closest)
        c = np.array([x[a == j].mean(0) if np.any(a == j) else c[j] for j in range(k)])
    return c


def accuracy(centers, x_train, y_train, x_test, y_test):
    """Majority label per cluster on the training fold, closest centroid on the test fold."""
    def closest(x):
        return np.argmin(((x[:, None, :] - centers[None]) ** 2).sum(2), axis=1)

    train = closest(x_train)
    labels = {j: np.bincount(y_train[train == j]).argmax() if np.any(train == j) else -1
              for j in range(len(centers))}
    return float(np.mean([labels[c] == t for c, t in zip(closest(x_test), y_test)]))


def study(runs):
    rows = []
    for name, load in DATASETS.items():
        x, y = load(return_X_y=True)
        k = len(np.unique(y))
        scores = {rho: [] for rho in RHOS}
        baseline = []
        for run in range(runs):
            folds = StratifiedKFold(n_splits=10, shuffle=True, random_state=run)
            for fold, (tr, te) in enumerate(folds.split(x, y)):
                scaler = StandardScaler().fit(x[tr])
                xtr, xte = scaler.transform(x[tr]), scaler.transform(x[te])
                km = KMeans(n_clusters=k, n_init=10, random_state=1000 * run + fold).fit(xtr)
                baseline.append(accuracy(km.cluster_centers_, xtr, y[tr], xte, y[te]))
                for rho in RHOS:
                    rng = np.random.default_rng([run, fold, int(rho * 1000)])
                    c = perturbed_lloyd(xtr, k, rho, rng)
                    scores[rho].append(accuracy(c, xtr, y[tr], xte, y[te]))
        rows.append({"dataset": name, "rho": "scikit-learn", "accuracy": np.mean(baseline),
                     "std_error": np.std(baseline) / np.sqrt(len(baseline))})
        for rho in RHOS:
            s = scores[rho]
            rows.append({"dataset": name, "rho": rho, "accuracy": np.mean(s),
                         "std_error": np.std(s) / np.sqrt(len(s))})
        print(f"{name}: baseline {np.mean(baseline):.4f}, rho 0.8: {np.mean(scores[0.8]):.4f}", flush=True)
    return rows


def write(rows, runs):
    with open(HERE / "kmeans-figure8.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["dataset", "rho", "accuracy", "std_error"])
        w.writeheader()
        w.writerows(rows)
    names = list(DATASETS)
    lines = [
        "# PEGASUS Figure 8: k-means test accuracy against the closest-assignment ratio rho",
        "",
        f"Plaintext simulation (`docs/bench/kmeans_figure8.py`): {runs} seeded runs of 10-fold stratified "
        f"cross-validation, {ITERATIONS} updates from K random training points, a proportion 1 - rho of the "
        "points sent to a random non-closest centroid in each update; K = the number of classes; "
        "accuracy in %, standard error in parentheses. Baseline: scikit-learn's KMeans (k-means++, 10 "
        "initializations).",
        "",
        "| rho | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for rho in ["scikit-learn"] + RHOS:
        cells = []
        for n in names:
            r = next(r for r in rows if r["dataset"] == n and r["rho"] == rho)
            cells.append(f"{100 * r['accuracy']:.2f} ({100 * r['std_error']:.2f})")
        lines.append(f"| {rho} | " + " | ".join(cells) + " |")
    (HERE / "kmeans-figure8.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no PNG")
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for n in names:
        pts = [(r["rho"], r["accuracy"]) for r in rows if r["dataset"] == n and r["rho"] != "scikit-learn"]
        base = next(r["accuracy"] for r in rows if r["dataset"] == n and r["rho"] == "scikit-learn")
        line, = ax.plot([p[0] for p in pts], [100 * p[1] for p in pts], marker="o", label=n)
        ax.axhline(100 * base, color=line.get_color(), linestyle=":", linewidth=1)
    ax.set_xlabel("closest-assignment ratio rho")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title("k-means accuracy vs rho (dotted: scikit-learn)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(HERE / "kmeans-figure8.png", dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="seeded runs of 10-fold CV (default 20)")
    args = parser.parse_args()
    write(study(args.runs), args.runs)


if __name__ == "__main__":
    main()
