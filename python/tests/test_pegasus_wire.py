"""The PEGASUS pipeline's parameters, options and evaluation keys as bytes (PEGASUS Fig. 6): what a client
sends a server, checked by the server. Small insecure parameters. Hostile bytes (truncations, flips, huge
lengths resealed) of each raise rnsfhe.DecodeError: test_serialization.py's test_truncations_and_byte_flips."""

import warnings

import pytest

import rnsfhe
from rnsfhe import pegasus


@pytest.fixture(scope="module")
def sent():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        session = pegasus.Session("InsecureTest", slots=16, seed=3, allow_insecure=True)
    p = session.pipeline
    return p.params_to_bytes(), p.options_to_bytes(), p.keys_to_bytes()


def test_the_server_checks_what_the_client_sent(sent):
    params, options, keys = sent
    kinds = [rnsfhe.read_header(b).kind for b in sent]
    assert kinds == ["PEGASUS pipeline parameters", "PEGASUS pipeline options", "PEGASUS keys"]
    assert not any(rnsfhe.read_header(b).is_secret for b in sent)
    checked = pegasus.Pipeline.validate_key_bytes(params, options, keys, allow_insecure=True)
    assert checked == len(params) + len(options) + len(keys)
    # The reader's own opt-in is needed for the insecure test set.
    with pytest.raises(rnsfhe.DecodeError):
        pegasus.Pipeline.validate_key_bytes(params, options, keys)
    # A MAC.
    mac = bytes(32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        session = pegasus.Session("InsecureTest", slots=16, seed=3, allow_insecure=True)
    sealed = session.pipeline.keys_to_bytes(mac_key=mac)
    with pytest.raises(rnsfhe.DecodeError) as e:
        pegasus.Pipeline.validate_key_bytes(params, options, sealed, allow_insecure=True)
    assert e.value.field == "digest"
    with pytest.raises(rnsfhe.DecodeError) as e:
        pegasus.Pipeline.validate_key_bytes(params, options, sealed, allow_insecure=True, mac_key=mac)
    # Parameters and options were sealed with the plain digest, the keys with the MAC: the reader in
    # MAC mode refuses the plain digests.
    assert e.value.field == "digest"


def test_pipeline_server_from_bytes_runs_the_stages():
    """A server with the client's bytes only (no secret) runs extraction, tables and repacking: the
    ciphertext of session.lut, bit for bit (PEGASUS Fig. 6)."""
    import numpy as np

    from rnsfhe import ckks, lwe

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        session = pegasus.Session("InsecureTest", slots=8, seed=4, allow_insecure=True)
    p = session.pipeline
    sent = p.params_to_bytes(), p.options_to_bytes(), p.keys_to_bytes()
    server = pegasus.PipelineServer.from_bytes("InsecureTest", *sent, allow_insecure=True)
    assert server.slots == 8
    ct = session.encrypt(np.linspace(-7.0, 7.0, 8))
    table = session.table(np.tanh)
    received = lwe.LookupTable.from_bytes(table.to_bytes(), server.lwe_params)
    lwes = server.to_lwe(ct.to_bytes())
    assert [c.to_bytes() for c in lwes] == [c.to_bytes() for c in p.to_lwe(ct)]
    out = server.repack(server.lut_lwe(lwes, received), received)
    assert out == ct.lut(table).to_bytes()
    assert ckks.Ciphertext.from_bytes(out, session.context).level == ct.lut(table).level
    # The loader's checks: the reader's opt-in for insecure sets, and ciphertexts of another context.
    with pytest.raises(rnsfhe.DecodeError):
        pegasus.PipelineServer.from_bytes("InsecureTest", *sent)
    other = ckks.Session("Rec128N13").encrypt(np.zeros(4)).to_bytes()
    with pytest.raises(rnsfhe.DecodeError):
        server.to_lwe(other)
