"""rnsfhe.pegasus.Session(lut_log_n=...): the look-up tables in a larger ring, for the extra bit of PEGASUS
Fig. 7 (Section VI.C.1: a larger n, a finer table grid, a longer table time).

On "InsecureTest" (N = 2^11, q0 = 1 mod 2^12, tables in degree 2^10 by default) the ring can double once,
to n = 2^11 = N (2n still divides q0 - 1). The grid step ``q / (2 n Delta)`` halves, and with it the index
error of the modulus switch to 2n, ``sqrt((1 + ||s||^2) / 12)`` grid steps in standard deviation: the
tables' error halves (the Rust test ``crates/rnsfhe-pegasus/tests/lut_ring_degree.rs`` checks the factor
against its prediction on 512 values; here 256 values of tanh show the gain through the whole round trip).
"""

import pickle
import warnings

import numpy as np
import pytest

from rnsfhe import pegasus

SLOTS = 256
VALUES = np.random.default_rng(17).uniform(-8.0, 8.0, SLOTS)


def make_session(**options):
    with pytest.warns(UserWarning, match="not established as 128-bit secure"):
        return pegasus.Session("InsecureTest", slots=SLOTS, allow_insecure=True, **options)


@pytest.fixture(scope="module")
def sessions():
    """The preset's ring (2^10) and the doubled one (2^11), the same seed."""
    return make_session(seed=5), make_session(seed=5, lut_log_n=11)


def test_the_ring_degree_is_the_sessions_choice(sessions):
    small, large = sessions
    assert (small.lut_log_n, small.lut_dimension) == (10, 1024)
    assert (large.lut_log_n, large.lut_dimension) == (11, 2048)
    assert large.pipeline.lwe_params.lut_log_n == 11
    assert "lut_log_n=11" in repr(large.pipeline)
    # Only the ring changes: the CKKS chain, q0, the LWE side's inputs.
    assert large.pipeline.q0 == small.pipeline.q0
    assert large.lwe_dimension == small.lwe_dimension == 64
    assert large.pipeline.lwe_input_scale == small.pipeline.lwe_input_scale
    assert large.grid_step == pytest.approx(small.grid_step / 2, rel=1e-12)
    # The preset's own degree, asked for explicitly, is the default.
    with pytest.warns(UserWarning):
        same = pegasus.Session("InsecureTest", slots=8, allow_insecure=True, lut_log_n=10)
    assert same.lut_dimension == 1024


def test_the_larger_ring_halves_the_error_of_the_round_trip(sessions):
    errors = []
    for s in sessions:
        table = s.table(np.tanh)
        got = s.decrypt(s.encrypt(VALUES).lut(table), real=True)
        err = np.abs(got - np.tanh(VALUES))
        # Every value within the table's Eq. (3) bound (tanh is 1-Lipschitz) plus the repacking's 2^-12.
        assert float(np.max(err)) <= s.error_bound(1.0, table) + 2**-12
        errors.append(float(np.mean(err)))
    # The mean error of tanh on [-8, 8] is mean |tanh'| (1/8) times sqrt(2 / pi) sigma of the index
    # error, 2.33 grid steps: 2^-8.0 at n = 2^10 (measured: 2^-7.9) and half that at 2^11. tanh' is
    # concentrated near 0, so 256 values weigh like (E|f'|)^2 / E f'^2 = 0.19 of them, 48: each mean has
    # a standard error of 0.755 / sqrt(48) = 11 %, their ratio 15 %; the ratio is 2 within three of them.
    small, large = errors
    assert 2 * (1 - 3 * 0.15) < small / large < 2 * (1 + 3 * 0.15), (small, large)


def test_tables_and_parameters_of_the_larger_ring_pickle(sessions):
    _, large = sessions
    table = large.table(np.tanh)
    back = pickle.loads(pickle.dumps(table))
    assert back.to_bytes() == table.to_bytes()
    params = pickle.loads(pickle.dumps(large.pipeline.lwe_params))
    assert (params.lut_log_n, params.q0) == (11, large.pipeline.q0)
    # Blind rotation is deterministic: the loaded table gives the same outputs (a few of them).
    lwes = large.encrypt(VALUES).to_lwe()[:4]
    outs = [large.decrypt_lwe(large.lut_lwe(lwes, t), t) for t in (back, table)]
    assert np.array_equal(*outs)


def test_a_table_of_the_other_ring_is_refused(sessions):
    small, large = sessions
    with pytest.raises(ValueError, match="not made for the session's pipeline"):
        large.encrypt(VALUES).lut(small.table(np.tanh))


def test_unsupported_degrees_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        # Above N = 2^11, below n_lwe = 64: the degree's range, named.
        for log_n in [12, 5]:
            with pytest.raises(ValueError, match="look-up-table ring degree.*n_lwe = 64"):
                pegasus.Session("InsecureTest", slots=8, allow_insecure=True, lut_log_n=log_n)
        # 2^8 is in range but too small for the tables' input margin.
        with pytest.raises(ValueError, match="more margin than the pipeline's input scale leaves"):
            pegasus.Session("InsecureTest", slots=8, allow_insecure=True, lut_log_n=8)
        with pytest.raises((ValueError, OverflowError)):
            pegasus.Session("InsecureTest", slots=8, allow_insecure=True, lut_log_n=-1)
        with pytest.raises(TypeError):
            pegasus.Session("InsecureTest", slots=8, allow_insecure=True, lut_log_n=11.5)
