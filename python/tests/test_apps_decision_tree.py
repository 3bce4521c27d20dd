"""Private decision trees (PEGASUS Section V.B) from Python: a scikit-learn tree on Iris end to end at the
small insecure parameters, the errors that name the parameters' limits, and what must not be pickled."""

import pickle

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from rnsfhe import apps


@pytest.fixture(scope="module")
def client():
    return apps.TreeClient("InsecureTest", allow_insecure=True, seed=1)


@pytest.fixture(scope="module")
def iris_tree():
    data = load_iris()
    x_train, x_test, y_train, y_test = train_test_split(
        data.data, data.target, test_size=0.2, random_state=0, stratify=data.target
    )
    clf = DecisionTreeClassifier(random_state=0).fit(x_train, y_train)
    return clf, x_train, x_test, y_test


def _far_from_thresholds(tree, clf, x):
    """Whether every mapped feature of x is farther than the comparison resolution from every mapped
    threshold of the tree's nodes on that feature."""
    g = tree.scaling.normalize(list(x))
    t = clf.tree_
    for node in range(t.node_count):
        f = t.feature[node]
        if t.children_left[node] == -1:
            continue
        probe = list(x)
        probe[f] = t.threshold[node]
        if abs(g[f] - tree.scaling.normalize(probe)[f]) <= tree.comparison_resolution:
            return False
    return True


def test_iris_end_to_end(client, iris_tree):
    clf, x_train, x_test, _ = iris_tree
    tree = apps.EncryptedTree.from_sklearn(clf, client.server_key, apps.TreeScaling.ranges(x_train))
    assert tree.internal_nodes + tree.leaves == clf.tree_.node_count
    assert tree.tables_per_query == tree.internal_nodes + tree.leaves + 1
    assert tree.depth == clf.get_depth()
    expected = clf.predict(x_test)
    checked = 0
    for i, x in enumerate(x_test[:12]):
        assert tree.predict_plain(list(x)) == expected[i]
        query = client.encrypt(tree.scaling, list(x), seed=i)
        label = tree.predict(query, seed=100 + i)
        assert label.classes == 3
        assert query.wire_size > 0 and label.wire_size > 0
        got = client.decrypt(label)
        if _far_from_thresholds(tree, clf, x):
            assert clf.classes_[got] == expected[i], (i, x)
            checked += 1
    assert checked >= 8


def test_limits_and_errors(client, iris_tree):
    clf, x_train, _, _ = iris_tree
    scaling = apps.TreeScaling.ranges(x_train)
    tree = apps.EncryptedTree.from_sklearn(clf, client.server_key, scaling)
    # A scaling of another width than the tree's features, a non-tree, a query of another width.
    with pytest.raises(ValueError, match="feature"):
        apps.EncryptedTree.from_sklearn(
            clf, client.server_key, apps.TreeScaling.ranges(np.zeros((2, 3)) + np.arange(3))
        )
    with pytest.raises(TypeError, match="DecisionTreeClassifier"):
        apps.EncryptedTree.from_sklearn(object(), client.server_key, scaling)
    with pytest.raises(ValueError):
        client.encrypt(scaling, [1.0, 2.0])
    small = apps.TreeScaling([[0.0, 1.0]])
    with pytest.raises(ValueError, match="features"):
        tree.predict(client.encrypt(small, [0.5]))
    # More features than one query packs (n_lwe = 64 here): the message names the limit.
    wide = apps.TreeScaling([[0.0, 1.0]] * 65)
    with pytest.raises(ValueError, match="limit 64"):
        apps.EncryptedTree([-2], [-2.0], [-1], [-1], [0], 2, wide, client.server_key)
    # A chain deeper than the leaf tables resolve: the message names the depth limit.
    depth = 400
    feature, threshold, left, right, labels = [], [], [], [], []
    for i in range(depth):
        feature += [0, -2]
        threshold += [0.5, -2.0]
        left += [2 * i + 1, -1]
        right += [2 * i + 2, -1]
        labels += [0, i % 2]
    feature.append(-2)
    threshold.append(-2.0)
    left.append(-1)
    right.append(-1)
    labels.append(1)
    with pytest.raises(ValueError, match="depth is 400, beyond the limit"):
        apps.EncryptedTree(feature, threshold, left, right, labels, 2, small, client.server_key)
    with pytest.raises(ValueError, match="unknown preset"):
        apps.TreeClient("Table9")
    with pytest.raises(ValueError, match="128"):
        apps.TreeClient("InsecureTest")
    for obj in (client, client.server_key, tree, scaling):
        with pytest.raises(TypeError, match="pickled"):
            pickle.dumps(obj)
