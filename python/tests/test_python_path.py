"""The Python path against the Rust path: the same result bytes, in-place sums, the public-key choice.

* The Python operators and Evaluator methods run the Rust operations the Rust benchmark times (the fused
  multiply + relinearize + rescale, one rescaling after a plaintext product): their results are compared
  byte for byte with those Rust calls made directly (``_rnsfhe.ckks._rust_reference``) on the same inputs.
* ``a += b`` and ``a -= b`` update a CKKS ciphertext in place with ``Evaluator::add_assign`` and its family,
  giving the bytes of ``a + b``; ``a + b`` still makes a new ciphertext.
* ``keygen(public_key=...)``: the extended public key (over Q and the first special prime; the default) and
  the key over Q; both serialize and pickle with their kind. The extended key's fresh
  CKKS ciphertexts are more precise (expected gap at N = 2^13: log2 of sigma sqrt(2N/3 + 1 + h) over the
  rounding's error, several bits; asserted: at least 2 bits of mean precision); for BFV and dense messages
  it gives more fresh noise budget at a small t only.
"""

import copy
import pickle
import threading
import warnings

import numpy as np
import pytest

from rnsfhe import _rnsfhe, bfv, ckks

_rust_reference = _rnsfhe.ckks._rust_reference


@pytest.fixture(scope="module")
def session():
    return ckks.Session("Rec128N13", rotations=[1, -3])


@pytest.fixture(scope="module")
def inputs(session):
    r = np.random.default_rng(5)
    x = r.uniform(-1, 1, session.slots)
    y = r.uniform(-1, 1, session.slots)
    c = r.uniform(-1, 1, session.slots)
    return x, y, c


def test_python_operators_give_the_rust_bytes(session, inputs):
    x, y, c = inputs
    ev = session.evaluator
    a, b = session.encrypt(x), session.encrypt(y)
    pt = session.context.encode(c)
    pairs = [
        (ev.add(a, b), _rust_reference(ev, "add", a, b)),
        (a + b, _rust_reference(ev, "add", a, b)),
        (ev.multiply(a, b), _rust_reference(ev, "mult_rs", a, b)),
        (a * b, _rust_reference(ev, "mult_rs", a, b)),
        (ev.multiply(a, pt), _rust_reference(ev, "cmult", a, pt)),
        (a * pt, _rust_reference(ev, "cmult", a, pt)),
        (ev.rotate(a, 1), _rust_reference(ev, "rotate", a, 1)),
        (a.rotate(-3), _rust_reference(ev, "rotate", a, -3)),
    ]
    for got, want in pairs:
        assert got.level == want.level and got.scale == want.scale
        assert got.to_bytes() == want.to_bytes()
    # And the Rust calls compute what they should (so equal bytes are not equal garbage).
    dec = session.decryptor
    assert ckks.precision(x * y, dec.decrypt(_rust_reference(ev, "mult_rs", a, b), real=True)).min_bits > 20
    with pytest.raises(ValueError, match="unknown operation"):
        _rust_reference(ev, "divide", a, b)


def test_rotate_many_is_the_rotations(session, inputs):
    x, _, _ = inputs
    ev = session.evaluator
    a = session.encrypt(x)
    many = ev.rotate_many(a, [1, -3])
    for got, k in zip(many, [1, -3]):
        want = session.decryptor.decrypt(ev.rotate(a, k), real=True)
        # Hoisted rotations share the decomposition; their results decrypt to the same rotation.
        assert ckks.precision(np.roll(x, -k), session.decryptor.decrypt(got, real=True)).min_bits > 20
        assert ckks.precision(want, session.decryptor.decrypt(got, real=True)).min_bits > 20


def test_iadd_updates_in_place_with_the_bytes_of_add(session, inputs):
    x, y, c = inputs
    ev = session.evaluator
    a, b = session.encrypt(x), session.encrypt(y)
    want = (a + b).to_bytes()
    alias = a
    a += b
    assert a is alias, "+= updates the object in place"
    assert a.to_bytes() == want
    a -= b
    assert a.to_bytes() == ((session.encrypt(x) * 0 + a)).to_bytes()  # still a valid ciphertext
    dec = session.decryptor
    assert ckks.precision(x, dec.decrypt(a, real=True)).min_bits > 20
    # The operand may be the target itself; plaintexts, arrays and numbers are accepted as by +.
    a2 = copy.copy(a)
    assert a2 is not a and a2.to_bytes() == a.to_bytes()
    a2 += a2
    assert ckks.precision(2 * x, dec.decrypt(a2, real=True)).min_bits > 19
    assert ckks.precision(x, dec.decrypt(a, real=True)).min_bits > 20, "the copy is independent"
    pt = session.context.encode(c)
    a3 = copy.deepcopy(a)
    want = (a3 + pt).to_bytes()
    a3 += pt
    assert a3.to_bytes() == want
    a3 -= c
    a3 += 0.5
    assert ckks.precision(x + 0.5, dec.decrypt(a3, real=True)).min_bits > 19
    # Different levels: aligned as by +, the target moves down.
    low = ev.multiply(session.encrypt(y), 1.0)
    a4 = session.encrypt(x)
    want = a4 + low
    a4 += low
    assert a4.level == low.level and a4.to_bytes() == want.to_bytes()
    with pytest.raises(TypeError, match=r"\+="):
        a4 += "text"


def test_iadd_drops_the_seed_of_a_fresh_encryption(session, inputs):
    x, y, _ = inputs
    ctx = session.context
    enc = ctx.encryptor(session.keys.secret, evaluator=session.evaluator)
    a = enc.encrypt(x)
    seeded = len(a.to_bytes())
    a += session.encrypt(y)
    data = a.to_bytes()
    assert len(data) > seeded, "the sum has no seed"
    back = ckks.Ciphertext.from_bytes(data, ctx)
    assert ckks.precision(x + y, session.decryptor.decrypt(back, real=True)).min_bits > 19
    assert pickle.loads(pickle.dumps(a)).to_bytes() == data


def test_operations_release_the_gil_on_two_threads(session, inputs):
    x, y, _ = inputs
    ev = session.evaluator
    a, b = session.encrypt(x), session.encrypt(y)
    want = ev.multiply(a, b).to_bytes()
    out = [None, None]

    def work(i):
        out[i] = ev.multiply(a, b).to_bytes()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == [want, want]


def fresh_mean_bits(ctx, keys, x):
    enc, dec = ctx.encryptor(keys.public), ctx.decryptor(keys.secret)
    errors = np.concatenate([np.abs(dec.decrypt(enc.encrypt(x), real=True) - x) for _ in range(3)])
    return -np.log2(errors.mean())


def test_ckks_public_key_keyword(session, inputs):
    x, _, _ = inputs
    ctx = session.context
    extended = ctx.keygen()
    over_q = ctx.keygen(public_key="over_q")
    assert extended.public.is_extended and not over_q.public.is_extended
    assert ctx.keygen(public_key="extended").public.is_extended
    assert "extended=True" in repr(extended.public)
    with pytest.raises(ValueError, match="over_q"):
        ctx.keygen(public_key="over_p")
    for keys in (extended, over_q):
        for back in (ckks.PublicKey.from_bytes(keys.public.to_bytes(), ctx), pickle.loads(pickle.dumps(keys.public))):
            assert back.is_extended == keys.public.is_extended
            assert back.to_bytes() == keys.public.to_bytes()
            ct = ctx.encryptor(back).encrypt(x)
            assert ckks.precision(x, ctx.decryptor(keys.secret).decrypt(ct, real=True)).min_bits > 20
    assert fresh_mean_bits(ctx, extended, x) > fresh_mean_bits(ctx, over_q, x) + 2


def small_bfv(t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return bfv.Context(10, t, q_count=3, allow_insecure=True)


@pytest.mark.parametrize("t", [2, 65537])
def test_bfv_public_key_keyword(t):
    ctx = small_bfv(t)
    x = np.arange(ctx.n, dtype=np.int64) % t
    extended = ctx.keygen()
    over_q = ctx.keygen(public_key="over_q")
    assert extended.public.is_extended and not over_q.public.is_extended
    with pytest.raises(ValueError, match="extended"):
        ctx.keygen(public_key="")
    budgets = {}
    for name, keys in (("extended", extended), ("over_q", over_q)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the insecure test context, loaded again
            back = pickle.loads(pickle.dumps(keys.public))
        assert back.is_extended == keys.public.is_extended
        assert bfv.PublicKey.from_bytes(keys.public.to_bytes(), ctx).to_bytes() == keys.public.to_bytes()
        dec = ctx.decryptor(keys.secret)
        ct = ctx.encryptor(back).encrypt(x)
        assert np.array_equal(dec.decrypt(ct), x)
        budgets[name] = dec.noise_budget(ct)
    # Dividing by p_0 removes the key's noise: at t = 2 it dominates the fresh noise (about 4 bits of budget
    # expected); at t = 65537 the rounding term (Q mod t) m dominates and the budgets are about equal.
    if t == 2:
        assert budgets["extended"] > budgets["over_q"] + 2
    else:
        assert abs(budgets["extended"] - budgets["over_q"]) < 1


def test_bfv_public_key_is_over_q_where_the_bound_has_no_room():
    # Depth 1: log2 Q = 109 at N = 2^12, the 128-bit bound itself; a key over Q p_0 would be an RLWE
    # sample of 165 bits there.
    ctx = bfv.Context.generate(65537, 1)
    assert not ctx.extended_public_key and ctx.log_key_modulus == ctx.log_q
    keys = ctx.keygen()
    assert not keys.public.is_extended
    x = np.arange(ctx.n, dtype=np.int64) % 65537
    assert np.array_equal(ctx.decryptor(keys.secret).decrypt(ctx.encryptor(keys.public).encrypt(x)), x)
    deep = bfv.Context.generate(65537, 20)
    assert deep.extended_public_key and deep.log_key_modulus > deep.log_q + 55


def test_sessions_pass_the_public_key_keyword():
    assert not ckks.Session("Rec128N13", public_key="over_q").keys.public.is_extended
    ctx = small_bfv(65537)
    assert not bfv.Session(ctx, public_key="over_q").keys.public.is_extended
    assert bfv.Session(ctx).keys.public.is_extended


def test_add_many_is_the_chained_sum(session, inputs):
    x, y, c = inputs
    ev = session.evaluator
    a, b = session.encrypt(x), session.encrypt(y)
    low = ev.multiply(session.encrypt(c), 1.0)
    for cts in ([a, b], [a, b, low], [low, a, b]):
        want = cts[0]
        for ct in cts[1:]:
            want = want + ct
        assert ev.add_many(cts).to_bytes() == want.to_bytes()
    # The inputs are left as they were (the accumulator is a copy of the first).
    a_bytes = a.to_bytes()
    ev.add_many([a, b])
    assert a.to_bytes() == a_bytes
    with pytest.raises(ValueError):
        ev.add_many([])
