"""The server of the three-party example: computes on ciphertexts with public evaluation keys only.

One command starts it (from the repository root, with the virtualenv of ``make test``):

    .venv/bin/python examples/three_party/server.py --port 8000

It prints ``listening on http://HOST:PORT`` once it accepts connections (``--port 0`` picks a free port).
The HTTP API (bodies are frames of rnsfhe wire objects, see ``protocol.py``):

``POST /sessions``
    frames: CKKS parameters, relinearization key, Galois keys. The server rebuilds the context from the
    parameters (it never trusts moduli it did not derive), checks that the keys belong to them, and answers
    JSON ``{"session": ID, "slots": ..., "max_ciphertext_bytes": ...}``.
``POST /sessions/ID/mean-variance?n=COUNT``
    frame: one CKKS ciphertext of COUNT values (the rest of the slots zero). Answers two frames: the
    ciphertexts of the mean and of the variance of the COUNT values (in every slot).
``DELETE /sessions/ID``
    forgets a session and its keys.
``GET /metrics``
    JSON: for every request so far, the method, the path, the status, the bytes received and sent, and
    the kinds of the objects received (the audit trail of what the server was given).

With ``--ray-address HOST:PORT`` the server hands its computations to the workers of that Ray cluster
(``rnsfhe.distributed``, docs/distributed.md): each session's evaluation keys go to the cluster once and
every worker loads them once; a ciphertext goes as its wire bytes. The HTTP API and the client are the
same, so a job larger than one machine needs no change on the client's side.

What it enforces on every request: a ``Content-Length`` (no chunked bodies), a size limit known before
the body is read (``--max-key-bytes`` for key uploads, ``--max-log-n`` for the ring degree; for ciphertexts, the size of a full-level
ciphertext of the session's parameters), the object kinds it expects in the order it expects them, a
secret key refused outright (status 403, before anything is parsed), fingerprints that match the session's
parameters, the digest of every object (with ``--mac-key FILE``: a MAC under the key the three parties
share, so that objects changed or made by anyone without the key are refused; the answers carry one too),
and full validation of every object by ``from_bytes`` (residues below their moduli, lengths and levels from
the parameters). Parameters not established as 128-bit secure are refused by the loader itself unless the
server runs with ``--allow-insecure``: a client cannot switch the check off. Malformed input is answered with
status 400 and the decoder's message (field and byte offset); nothing a client sends can make the server
allocate more than the limit.
"""

from __future__ import annotations

import argparse
import http.server
import json
import pathlib
import secrets
import sys
import threading
import urllib.parse
from collections import OrderedDict
from typing import Dict, List, Optional, Tuple

import protocol
from rnsfhe import DecodeError, ckks, distributed, read_header

#: Length of the header that opens every rnsfhe wire object.
HEADER_LEN = 16
#: Default limit of a key upload (parameters + relinearization key + Galois keys): 512 MiB holds the
#: seeded Galois keys of every rotation a mean needs at N = 2^15.
DEFAULT_MAX_KEY_BYTES = 512 << 20
#: The object kinds (``rnsfhe.read_header(...).kind``) of a key upload, in order, and of a ciphertext.
SESSION_KINDS = ("CKKS parameters", "relinearization key", "Galois keys")
CKKS_CIPHERTEXT = "CKKS ciphertext"
#: Seconds a connection may stay silent before the server drops it (slow clients cannot pin a thread).
SOCKET_TIMEOUT = 60


class HttpError(Exception):
    """A request the server refuses: an HTTP status and a message for the client."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Session:
    """What the server holds for one client: a context and an evaluator with the evaluation keys."""

    def __init__(self, context: "ckks.Context", fingerprint: int, evaluator: "ckks.Evaluator",
                 keys: Optional[distributed.Keys] = None) -> None:
        self.context = context
        self.fingerprint = fingerprint
        self.evaluator = evaluator
        #: The evaluation keys as a bundle for the Ray workers (only with --ray-address).
        self.keys = keys
        self.max_ciphertext_bytes = max_ciphertext_bytes(context)


def max_ciphertext_bytes(context: "ckks.Context") -> int:
    """The largest body a ciphertext request of ``context`` may have: one frame holding a ciphertext of two
    parts at the top level, residues packed at their moduli's widths, plus room for the fixed fields."""
    packed = sum((context.n * q.bit_length() + 7) // 8 for q in context.q_moduli)
    return protocol.PREFIX_LEN + HEADER_LEN + 256 + 2 * packed


class Server(http.server.ThreadingHTTPServer):
    """The HTTP server and its state: sessions (at most ``max_sessions``, oldest evicted first), limits,
    and the per-request metrics."""

    daemon_threads = True

    def __init__(self, address, *, max_key_bytes: int, max_log_n: int, max_sessions: int,
                 allow_insecure: bool, record_dir: Optional[pathlib.Path],
                 mac_key: Optional[bytes] = None, executor: Optional[distributed.Executor] = None) -> None:
        super().__init__(address, Handler)
        self.mac_key = mac_key
        self.executor = executor
        self.max_key_bytes = max_key_bytes
        self.max_log_n = max_log_n
        self.max_sessions = max_sessions
        self.allow_insecure = allow_insecure
        self.record_dir = record_dir
        self.sessions: "OrderedDict[str, Session]" = OrderedDict()
        self.metrics: List[dict] = []
        self.lock = threading.Lock()

    def session(self, sid: str) -> Session:
        """The session ``sid``; 404 if there is none."""
        with self.lock:
            found = self.sessions.get(sid)
        if found is None:
            raise HttpError(404, f"no session {sid!r} (create one with POST /sessions)")
        return found

    def add_session(self, session: Session) -> str:
        """Stores ``session`` under a fresh random id, evicting the oldest beyond ``max_sessions``."""
        sid = secrets.token_hex(16)
        with self.lock:
            self.sessions[sid] = session
            while len(self.sessions) > self.max_sessions:
                self.sessions.popitem(last=False)
        return sid

    def record(self, entry: dict, body: bytes) -> None:
        """Adds ``entry`` to the metrics and, with ``--record``, writes the request body to a file."""
        with self.lock:
            index = len(self.metrics)
            self.metrics.append(entry)
        if self.record_dir is not None and body:
            name = f"{index:04d}-{entry['method']}-{entry['path'].strip('/').replace('/', '_')}.bin"
            (self.record_dir / name).write_bytes(body)


def expect_kinds(frames: List[bytes], kinds: Tuple[str, ...], fingerprint: Optional[int]) -> List[str]:
    """Checks the header of every frame (``rnsfhe.read_header``): no secret material anywhere (403), then
    the expected kinds in order and one fingerprint: ``fingerprint``, or the first frame's when it is None
    (400). Returns the kind names, for the metrics."""
    headers = [read_header(f) for f in frames]
    for i, h in enumerate(headers):
        if h.is_secret:
            raise HttpError(403, f"frame {i} is a {h.kind}: the server never accepts secret material")
    if fingerprint is None and headers:
        fingerprint = headers[0].fingerprint
    for i, (h, want) in enumerate(zip(headers, kinds)):
        if h.kind != want:
            raise HttpError(400, f"frame {i} is a {h.kind}, expected a {want}")
        if h.fingerprint != fingerprint:
            raise HttpError(
                400,
                f"frame {i} ({h.kind}) belongs to parameters with fingerprint {h.fingerprint:#018x}, "
                f"not this session's {fingerprint:#018x}",
            )
    return [h.kind for h in headers]


class Handler(http.server.BaseHTTPRequestHandler):
    """One request: routing, limits, validation, and the metrics line."""

    server: Server
    timeout = SOCKET_TIMEOUT
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args) -> None:  # noqa: A002 (the base class's signature)
        sys.stderr.write(f"server: {self.address_string()} {format % args}\n")

    # -- plumbing ----------------------------------------------------------------------------------------

    def _handle(self, method: str) -> None:
        url = urllib.parse.urlsplit(self.path)
        entry = {"method": method, "path": url.path, "status": 0, "bytes_in": 0, "bytes_out": 0,
                 "kinds": []}
        body = b""
        try:
            route, limit = self._route(method, url.path)
            body = self._read_body(limit)
            entry["bytes_in"] = len(body)
            status, content_type, payload = route(body, urllib.parse.parse_qs(url.query), entry)
        except HttpError as e:
            status, content_type, payload = e.status, "application/json", _json({"error": str(e)})
        except (protocol.ProtocolError, DecodeError) as e:  # bad framing, or bytes rnsfhe refused
            status, content_type, payload = 400, "application/json", _json({"error": str(e)})
        except ValueError as e:  # the library's errors on valid objects (missing key, levels, ...)
            status, content_type, payload = 422, "application/json", _json({"error": str(e)})
        entry["status"] = status
        entry["bytes_out"] = len(payload)
        self.server.record(entry, body)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        if status >= 400 and entry["bytes_in"] == 0 and int(self.headers.get("Content-Length") or 0) > 0:
            self.send_header("Connection", "close")  # the unread body must not be taken as a request
            self.close_connection = True
        self.end_headers()
        self.wfile.write(payload)

    def _read_body(self, limit: int) -> bytes:
        """The request body, refused before it is read if it has no length or a length above ``limit``."""
        if self.headers.get("Transfer-Encoding"):
            raise HttpError(411, "chunked bodies are not accepted: send a Content-Length")
        raw = self.headers.get("Content-Length")
        if raw is None:
            if limit == 0:
                return b""
            raise HttpError(411, "a Content-Length is required")
        try:
            length = int(raw)
        except ValueError:
            raise HttpError(400, f"Content-Length {raw!r} is not a number") from None
        if length < 0 or length > limit:
            raise HttpError(413, f"a body of {length} bytes exceeds the limit of {limit} bytes for this request")
        body = self.rfile.read(length)
        if len(body) != length:
            raise HttpError(400, f"body ended after {len(body)} of {length} bytes")
        return body

    def _route(self, method: str, path: str):
        """The handler and the body limit of ``method path``; 404 / 405 otherwise."""
        parts = [p for p in path.split("/") if p]
        if parts == ["metrics"] and method == "GET":
            return self._metrics, 0
        if parts == ["sessions"] and method == "POST":
            return self._create_session, self.server.max_key_bytes
        if len(parts) == 2 and parts[0] == "sessions" and method == "DELETE":
            return (lambda body, query, entry: self._delete_session(parts[1])), 0
        if len(parts) == 3 and parts[0] == "sessions" and parts[2] == "mean-variance" and method == "POST":
            session = self.server.session(parts[1])
            return (lambda body, query, entry: self._mean_variance(session, body, query, entry),
                    session.max_ciphertext_bytes)
        if parts and parts[0] in ("metrics", "sessions"):
            raise HttpError(405, f"{method} is not allowed on {path}")
        raise HttpError(404, f"no such resource {path}")

    def do_GET(self) -> None:  # noqa: N802 (the base class's naming)
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    def do_DELETE(self) -> None:  # noqa: N802
        self._handle("DELETE")

    def do_PUT(self) -> None:  # noqa: N802
        self._handle("PUT")

    # -- the API -----------------------------------------------------------------------------------------

    def _metrics(self, body: bytes, query: Dict, entry: dict):
        with self.server.lock:
            snapshot = list(self.server.metrics)
        return 200, "application/json", _json({"requests": snapshot})

    def _create_session(self, body: bytes, query: Dict, entry: dict):
        frames = protocol.unpack(body, 3)
        entry["kinds"] = expect_kinds(frames, SESSION_KINDS, None)
        # The context derives its own fingerprint from the parameters: the header's must be the same.
        fingerprint = read_header(frames[0]).fingerprint
        # Building a context searches primes and tables for N = 2^log_n: max_log_n refuses larger rings
        # before any of that work, so a hostile upload cannot ask for the largest; insecure parameters are
        # refused by the loader unless this server allows them.
        key = self.server.mac_key
        try:
            context = ckks.Context.from_bytes(frames[0], max_log_n=self.server.max_log_n,
                                              allow_insecure=self.server.allow_insecure, mac_key=key)
        except ValueError as e:  # malformed, or refused (ring too large): the client's parameters at fault
            raise HttpError(400, str(e)) from None
        relin = ckks.RelinKey.from_bytes(frames[1], context, mac_key=key)
        galois = ckks.GaloisKeys.from_bytes(frames[2], context, mac_key=key)
        evaluator = context.evaluator(relin_key=relin, galois_keys=galois)
        keys = None
        if self.server.executor is not None:
            keys = distributed.evaluator_keys(context, relin_key=relin, galois_keys=galois)
        session = Session(context, fingerprint, evaluator, keys)
        sid = self.server.add_session(session)
        return 201, "application/json", _json({
            "session": sid,
            "slots": context.slots,
            "max_ciphertext_bytes": session.max_ciphertext_bytes,
        })

    def _delete_session(self, sid: str):
        with self.server.lock:
            found = self.server.sessions.pop(sid, None)
        if found is None:
            raise HttpError(404, f"no session {sid!r}")
        return 204, "application/json", b""

    def _mean_variance(self, session: Session, body: bytes, query: Dict, entry: dict):
        n = _count(query, session.context.slots)
        frames = protocol.unpack(body, 1)
        ctx = session.context
        entry["kinds"] = expect_kinds(frames, (CKKS_CIPHERTEXT,), session.fingerprint)
        ev = session.evaluator
        key = self.server.mac_key
        ct = ckks.Ciphertext.from_bytes(frames[0], ctx, mac_key=key)
        if self.server.executor is not None:  # on a worker of the Ray cluster, with the session's keys
            results = distributed.run_jobs(self.server.executor, mean_variance_job, [(ct, n)],
                                           keys=session.keys)[0]
        else:
            results = mean_variance(ev, ct, n)
        return 200, "application/octet-stream", protocol.pack([r.to_bytes(mac_key=key) for r in results])


def mean_variance(ev: "ckks.Evaluator", ct: "ckks.Ciphertext", n: int) -> List["ckks.Ciphertext"]:
    """The mean and the variance of the first ``n`` slots of ``ct`` (the others zero), in every slot."""
    ct = ev.attach(ct)
    # mean = sum(x) / n and variance = sum(x^2) / n - mean^2, over the n values of the request (the other
    # slots are zero); the sums put the total in every slot. Three levels.
    mean = ev.sum(ct) * (1.0 / n)
    variance = ev.sum(ct * ct) * (1.0 / n) - mean * mean
    # The mean is one level above the variance: dropping its extra prime (exact) shrinks the answer. Not
    # lower: with Rec128N13's 45-bit q0 and scale 2^40, level 1 holds only values below 2^4.
    return [ev.drop_to_level(mean, variance.level), variance]


def mean_variance_job(ev: "ckks.Evaluator", job: Tuple["ckks.Ciphertext", int]) -> List["ckks.Ciphertext"]:
    """:func:`mean_variance` as a job of ``rnsfhe.distributed.run_jobs`` (the evaluator is the worker's)."""
    return mean_variance(ev, *job)


def _count(query: Dict, slots: int) -> int:
    """The ``n`` query parameter: an integer in ``1..=slots``."""
    values = query.get("n")
    if not values:
        raise HttpError(400, "the query parameter n (number of values) is required")
    try:
        n = int(values[0])
    except ValueError:
        raise HttpError(400, f"n={values[0]!r} is not an integer") from None
    if not 1 <= n <= slots:
        raise HttpError(400, f"n={n} is outside 1..{slots} (the slots of the parameters)")
    return n


def _json(obj) -> bytes:
    return json.dumps(obj).encode()


def main(argv: Optional[List[str]] = None) -> None:
    """Parses the command line and serves until interrupted."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    ap.add_argument("--port", type=int, default=8000, help="port (0: any free port; default 8000)")
    ap.add_argument("--max-key-bytes", type=int, default=DEFAULT_MAX_KEY_BYTES,
                    help="largest key upload in bytes (default 512 MiB)")
    ap.add_argument("--max-log-n", type=int, default=15,
                    help="largest ring degree accepted, as log2 N (default 15)")
    ap.add_argument("--max-sessions", type=int, default=8, help="sessions kept (oldest evicted; default 8)")
    ap.add_argument("--allow-insecure", action="store_true",
                    help="accept parameters below 128-bit security (tests only)")
    ap.add_argument("--record", type=pathlib.Path, metavar="DIR",
                    help="write every request body to DIR (to audit what the server received)")
    ap.add_argument("--mac-key", type=pathlib.Path, metavar="FILE",
                    help="require a MAC under the 32-byte key in FILE on every object, and seal the answers "
                         "with it (FILE is created with a fresh key if missing; give the other parties a copy)")
    ap.add_argument("--ray-address", metavar="HOST:PORT",
                    help="run the computations on the Ray cluster at this address (rnsfhe.distributed; "
                         "docs/distributed.md); the client needs no change")
    ap.add_argument("--ray-timeout", type=float, default=30.0,
                    help="seconds to wait for the Ray cluster to answer (default 30)")
    args = ap.parse_args(argv)
    if args.max_sessions < 1 or args.max_key_bytes < 1:
        ap.error("--max-sessions and --max-key-bytes must be positive")
    executor = None
    if args.ray_address:
        try:
            executor = distributed.connect(args.ray_address, timeout=args.ray_timeout)
        except (ImportError, distributed.DistributedError, ValueError) as e:
            sys.exit(f"server: {e}")
    if args.record is not None:
        args.record.mkdir(parents=True, exist_ok=True)
    server = Server((args.host, args.port), max_key_bytes=args.max_key_bytes, max_log_n=args.max_log_n,
                    max_sessions=args.max_sessions, allow_insecure=args.allow_insecure,
                    record_dir=args.record, mac_key=protocol.mac_key(args.mac_key, create=True),
                    executor=executor)
    host, port = server.server_address[:2]
    print(f"listening on http://{host}:{port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        if executor is not None:
            executor.close()


if __name__ == "__main__":
    main()
