"""Private decision trees (PEGASUS Section V.B) through bytes: the client and the server share nothing but
bytes (parameters and server key once, then one query up and one label down per prediction), as two
processes would. Small insecure parameters. Hostile bytes of each object raise rnsfhe.DecodeError
(test_serialization.py's test_truncations_and_byte_flips)."""

import pytest

import rnsfhe
from rnsfhe import apps


def _tree_arrays():
    """x0 <= 0.5 ? 0 : (x1 <= 0.3 ? 1 : 2), as scikit-learn's tree_ arrays."""
    feature = [0, -2, 1, -2, -2]
    threshold = [0.5, -2.0, 0.3, -2.0, -2.0]
    left = [1, -1, 3, -1, -1]
    right = [2, -1, 4, -1, -1]
    labels = [0, 0, 0, 1, 2]
    return feature, threshold, left, right, labels


@pytest.fixture(scope="module")
def exchange():
    # Client process: keys; what it publishes is bytes.
    client = apps.TreeClient("InsecureTest", allow_insecure=True, seed=11)
    params = client.params_bytes()
    key = client.server_key.to_bytes()
    assert len(key) == client.server_key.serialized_size()
    # Server process: the parameters and keys from bytes (the reader's own opt-in for the insecure
    # test set), its secret tree, and the public scaling.
    server_key = apps.TreeServerKey.from_bytes(key, params, allow_insecure=True)
    assert server_key.to_bytes() == key
    scaling = apps.TreeScaling([[0.0, 1.0], [0.0, 1.0]])
    tree = apps.EncryptedTree(*_tree_arrays(), 3, scaling, server_key)
    return client, server_key, tree, scaling, params, key


def test_two_process_exchange_through_bytes(exchange):
    client, server_key, tree, scaling, _, _ = exchange
    for x, want in [([0.2, 0.9], 0), ([0.8, 0.1], 1), ([0.9, 0.7], 2)]:
        query = client.encrypt(scaling, x, seed=5)
        up = query.to_bytes()                                      # client -> server
        assert len(up) == query.wire_size
        received = apps.EncryptedQuery.from_bytes(up, server_key)
        assert received.to_bytes() == up
        answer = tree.predict(received, seed=6)
        down = answer.to_bytes()                                   # server -> client
        assert len(down) == answer.wire_size
        label = apps.EncryptedLabel.from_bytes(down, client)
        assert label.to_bytes() == down
        assert client.decrypt(label) == want == tree.predict_plain(x)
    # The kinds, for a server that dispatches on headers; nothing the server holds is secret.
    assert rnsfhe.read_header(up).kind == "encrypted decision-tree query"
    assert rnsfhe.read_header(down).kind == "encrypted decision-tree label"
    assert not rnsfhe.read_header(exchange[5]).is_secret


def test_macs_and_insecure_parameters(exchange):
    client, server_key, tree, scaling, params, key = exchange
    mac = bytes(range(32))
    query = client.encrypt(scaling, [0.1, 0.1], seed=7)
    sealed = query.to_bytes(mac_key=mac)
    assert apps.EncryptedQuery.from_bytes(sealed, server_key, mac_key=mac).features == 2
    with pytest.raises(rnsfhe.DecodeError) as e:
        apps.EncryptedQuery.from_bytes(sealed, server_key)
    assert e.value.field == "digest"
    # The reader does not accept the insecure test set unless it opts in itself.
    with pytest.raises(rnsfhe.DecodeError):
        apps.TreeServerKey.from_bytes(key, params)
    # A key of other parameters (a preset name gives the reader's parameters directly).
    with pytest.raises(rnsfhe.DecodeError) as e:
        apps.TreeServerKey.from_bytes(key, "PegasusTable4", allow_insecure=True)
    assert e.value.field == "header.fingerprint"


def test_a_short_label_is_a_value_error_naming_the_digest(exchange):
    # Hostile bytes of every decision-tree object: test_serialization.py's test_truncations_and_byte_flips.
    client, server_key, tree, scaling, _, _ = exchange
    up = client.encrypt(scaling, [0.4, 0.6], seed=8).to_bytes()
    down = tree.predict(apps.EncryptedQuery.from_bytes(up, server_key), seed=9).to_bytes()
    # A DecodeError is a ValueError with the field and the offset.
    with pytest.raises(ValueError) as e:
        apps.EncryptedLabel.from_bytes(down[:40], client)
    assert e.value.field == "digest" and e.value.offset == 40  # shorter than a header and digest
