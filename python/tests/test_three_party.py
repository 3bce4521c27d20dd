"""The three-party example (examples/three_party/) end to end: the server started as its own process on
127.0.0.1, the client and the decryptor as processes too. Checks the decrypted statistics against numpy, that
the server never received secret material (object kinds in its audit trail, and the secret key's bytes in
none of the request bodies it recorded), the bytes on the wire per request, and that the server refuses
secret keys, oversized, malformed and misdirected requests with the right status."""

import http.client
import json
import pathlib
import subprocess
import sys
import threading
import urllib.parse

import numpy as np
import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "three_party"
sys.path.insert(0, str(EXAMPLE))
import protocol  # noqa: E402 (the example's module, importable only after the path is set)

STARTUP_SECONDS = 60
#: Length of the header of an rnsfhe wire object; the payload follows (CKKS parameters: u32 log_n first).
HEADER_LEN = 16


def _start_server(record: pathlib.Path, *extra: str):
    """Starts server.py on a free port of 127.0.0.1 (with the ``extra`` arguments); returns (process, base
    URL)."""
    proc = subprocess.Popen(
        [sys.executable, str(EXAMPLE / "server.py"), "--host", "127.0.0.1", "--port", "0", "--record",
         str(record), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    line = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(STARTUP_SECONDS)
    if not line or not line[0].startswith("listening on "):
        proc.kill()
        pytest.fail(f"server did not start: {line!r}")
    return proc, line[0].split()[-1]


def _run(script: str, *args: str) -> str:
    out = subprocess.run([sys.executable, str(EXAMPLE / script), *args], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, f"{script} failed:\n{out.stderr}"
    return out.stdout


def _request(url: str, method: str, path: str, body: bytes = b"", headers=None):
    """(status, body) of one request; ``headers`` may override Content-Length."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
    try:
        conn.putrequest(method, path)
        hdrs = {"Content-Length": str(len(body))}
        hdrs.update(headers or {})
        for k, v in hdrs.items():
            conn.putheader(k, v)
        conn.endheaders()
        if body:
            conn.send(body)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory):
    """Server up, client and decryptor run once; yields what the checks need, stops the server."""
    root = tmp_path_factory.mktemp("three_party")
    record, state = root / "record", root / "state"
    proc, url = _start_server(record)
    try:
        client_out = _run("client.py", "--server", url, "--state", str(state))
        result = json.loads(_run("decryptor.py", "--state", str(state), "--json"))
        status, metrics = _request(url, "GET", "/metrics")
        assert status == 200
        yield {"url": url, "state": state, "record": record, "client_out": client_out, "result": result,
               "metrics": json.loads(metrics)["requests"]}
    finally:
        proc.terminate()
        proc.wait(30)


def test_statistics_match_numpy(round_trip):
    x = np.loadtxt(round_trip["state"] / "data.txt")
    assert len(x) == 1000
    assert abs(round_trip["result"]["mean"] - np.mean(x)) < 1e-5
    assert abs(round_trip["result"]["variance"] - np.var(x)) < 1e-3


def test_server_never_receives_secret_material(round_trip):
    uploads = [m for m in round_trip["metrics"] if m["method"] == "POST"]
    assert len(uploads) == 2  # the key upload and the ciphertext
    kinds = {k for m in uploads for k in m["kinds"]}
    assert kinds == {"CKKS parameters", "relinearization key", "Galois keys", "CKKS ciphertext"}
    # The secret key's coefficients (its payload after the header) appear in no body the server received.
    secret = (round_trip["state"] / "secret.key").read_bytes()
    payload = secret[HEADER_LEN:]
    windows = [payload[i:i + 32] for i in range(0, len(payload) - 32, max(1, len(payload) // 16))]
    bodies = [p.read_bytes() for p in sorted(round_trip["record"].iterdir())]
    assert len(bodies) == len(uploads)
    for body in bodies:
        assert secret[:HEADER_LEN] not in body
        assert not any(w in body for w in windows)


def test_bytes_on_the_wire_are_recorded(round_trip):
    by_path = {}
    for m in round_trip["metrics"]:
        if m["method"] == "POST" and m["status"] < 300:
            by_path[m["path"].split("/")[-1]] = m
    session, stats = by_path["sessions"], by_path["mean-variance"]
    # Keys dominate the first request; one ciphertext up, two down.
    assert session["bytes_in"] > stats["bytes_in"] > 100_000
    assert stats["bytes_out"] > stats["bytes_in"] // 2
    # The client's table reports the same numbers.
    assert f"{session['bytes_in']:,}" in round_trip["client_out"]
    assert f"{stats['bytes_out']:,}" in round_trip["client_out"]


def test_server_refuses_bad_requests(round_trip):
    from rnsfhe import ckks, reseal

    url, state = round_trip["url"], round_trip["state"]
    params = (state / "params.bin").read_bytes()
    secret = (state / "secret.key").read_bytes()
    # A secret key anywhere in an upload: 403, before anything is parsed.
    status, body = _request(url, "POST", "/sessions", protocol.pack([params, secret, secret]))
    assert status == 403 and b"secret" in body
    # Bodies above the limit are refused from their Content-Length alone.
    status, _ = _request(url, "POST", "/sessions", b"", {"Content-Length": str(1 << 40)})
    assert status == 413
    # A working session, then a ciphertext with a residue above its modulus: 400 naming the field and the byte.
    ctx = ckks.Context.from_bytes(params)
    keys = ctx.keygen(sum_slots=True)
    evaluation_keys = [keys.relin.to_bytes(), keys.galois.to_bytes()]
    # Parameters above the server's ring-degree limit are refused before the context is built (sealed
    # again: an edit without a new digest stops at the digest).
    big = bytearray(params)
    big[HEADER_LEN:HEADER_LEN + 4] = (17).to_bytes(4, "little")
    status, body = _request(url, "POST", "/sessions", protocol.pack([bytes(big), *evaluation_keys]))
    assert status == 400 and b"digest" in body, body
    status, body = _request(url, "POST", "/sessions", protocol.pack([reseal(big), *evaluation_keys]))
    assert status == 400 and b"max_log_n = 15" in body, body
    status, body = _request(url, "POST", "/sessions", protocol.pack([params, *evaluation_keys]))
    assert status == 201, body
    info = json.loads(body)
    sid = info["session"]
    ct = bytearray(ctx.encryptor(keys.public).encrypt(np.ones(8)).to_bytes())
    ct[-96:-32] = b"\xff" * 64
    status, body = _request(url, "POST", f"/sessions/{sid}/mean-variance?n=8", protocol.pack([bytes(ct)]))
    assert status == 400 and b"field `digest`" in body, body
    status, body = _request(url, "POST", f"/sessions/{sid}/mean-variance?n=8", protocol.pack([reseal(ct)]))
    assert status == 400 and b"at byte" in body and b"ciphertext.parts" in body, body
    # Truncated frame, wrong kind, bad count, unknown session, oversized ciphertext.
    status, _ = _request(url, "POST", f"/sessions/{sid}/mean-variance?n=8", protocol.pack([params])[:-3])
    assert status == 400
    status, body = _request(url, "POST", f"/sessions/{sid}/mean-variance?n=8", protocol.pack([params]))
    assert status == 400 and b"expected a CKKS ciphertext" in body
    status, _ = _request(url, "POST", f"/sessions/{sid}/mean-variance?n=0", protocol.pack([bytes(ct)]))
    assert status == 400
    status, _ = _request(url, "POST", "/sessions/nope/mean-variance?n=8", protocol.pack([bytes(ct)]))
    assert status == 404
    too_big = str(info["max_ciphertext_bytes"] + 1)
    status, _ = _request(url, "POST", f"/sessions/{sid}/mean-variance?n=8", b"", {"Content-Length": too_big})
    assert status == 413
    status, _ = _request(url, "DELETE", f"/sessions/{sid}")
    assert status == 204


def test_mac_mode_authenticates_every_object(tmp_path):
    """With ``--mac-key`` the three parties share a key: the round trip works, and an upload without the
    MAC, or under another key, or changed and sealed again with a plain digest, is refused."""
    from rnsfhe import ckks, reseal

    key_file = tmp_path / "mac.key"
    proc, url = _start_server(tmp_path / "record", "--mac-key", str(key_file))
    try:
        assert len(key_file.read_bytes()) == protocol.MAC_KEY_LEN  # made by the server, mode 0600
        assert key_file.stat().st_mode & 0o777 == 0o600
        state = tmp_path / "state"
        _run("client.py", "--server", url, "--state", str(state), "--mac-key", str(key_file))
        result = json.loads(_run("decryptor.py", "--state", str(state), "--json", "--mac-key", str(key_file)))
        x = np.loadtxt(state / "data.txt")
        assert abs(result["mean"] - np.mean(x)) < 1e-5
        # The answers carry the MAC: without the key they do not load.
        out = subprocess.run([sys.executable, str(EXAMPLE / "decryptor.py"), "--state", str(state)],
                             capture_output=True, text=True, timeout=600)
        assert out.returncode != 0 and "digest" in out.stderr, out.stderr
        # Uploads without the MAC (plain digests, a reseal, another key) are refused before parsing.
        ctx = ckks.Context.from_bytes((state / "params.bin").read_bytes())
        keys = ctx.keygen(sum_slots=True)
        other = bytes(32)
        for frames in (
            [ctx.to_bytes(), keys.relin.to_bytes(), keys.galois.to_bytes()],
            [reseal(ctx.to_bytes(mac_key=key_file.read_bytes())), keys.relin.to_bytes(),
             keys.galois.to_bytes()],
            [ctx.to_bytes(mac_key=other), keys.relin.to_bytes(mac_key=other),
             keys.galois.to_bytes(mac_key=other)],
        ):
            status, body = _request(url, "POST", "/sessions", protocol.pack(frames))
            assert status == 400 and b"MAC does not match" in body, body
    finally:
        proc.terminate()
        proc.wait(30)
