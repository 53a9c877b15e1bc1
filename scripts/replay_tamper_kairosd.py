#!/usr/bin/env python3
"""A kairosd that computes a different app hash from one block on: the "NEW" that shows
scripts/replay_check.sh detects a difference (no rebuild needed).

`replay_tamper_kairosd.py start --abci-address tcp://H:P ...` runs the real kairosd
($REPLAY_TAMPER_KAIROSD) on another loopback port and relays CometBFT's ABCI connections to it
unchanged, except one request: the REPLAY_TAMPER_AT-th (default 20) request that carries a tx with
the memo "replay s0" (replay_check.py's first bank sender) gets one memo byte changed ("replay s0"
becomes "replay s9", same length, so every protobuf length stays valid). The tx's signature then
fails, the tx is refused in the block instead of applied, and kairosd's state and app hash differ
from that block on, as a NEW build whose state machine changed would. Every other command
(`init`, ...) runs the real kairosd as it is. Not for anything but this demonstration.

  REPLAY_TAMPER_KAIROSD=/path/to/kairosd scripts/replay_check.sh OLD \\
      scripts/replay_tamper_kairosd.py 200
"""

import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading

MARKER, TAMPERED = b"replay s0", b"replay s9"


def die_with_parent():
    ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def read_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def read_frame(sock):
    """One ABCI socket frame: a uvarint length, then that many bytes of a Request."""
    prefix, length, shift = b"", 0, 0
    while True:
        b = read_exact(sock, 1)
        prefix += b
        length |= (b[0] & 0x7F) << shift
        shift += 7
        if not b[0] & 0x80:
            return prefix, read_exact(sock, length)


class Tamper:
    def __init__(self, at):
        self.at, self.seen, self.lock = at, 0, threading.Lock()

    def requests(self, src, dst):
        """CometBFT -> kairosd, frame by frame, changing the at-th frame with the marker."""
        try:
            while True:
                prefix, body = read_frame(src)
                if MARKER in body:
                    with self.lock:
                        self.seen += 1
                        if self.seen == self.at:
                            body = body.replace(MARKER, TAMPERED, 1)
                            print(f"replay_tamper: changed a tx of request {self.seen} carrying "
                                  f"{MARKER.decode()!r}", flush=True)
                dst.sendall(prefix + body)
        except (EOFError, OSError):
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def responses(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass


def main():
    real = os.environ.get("REPLAY_TAMPER_KAIROSD")
    if not real:
        sys.exit("replay_tamper_kairosd: set REPLAY_TAMPER_KAIROSD to the real kairosd")
    argv = sys.argv[1:]
    if not argv or argv[0] != "start":
        os.execv(real, [real] + argv)
    i = argv.index("--abci-address")
    host, port = argv[i + 1].removeprefix("tcp://").rsplit(":", 1)
    listener = socket.create_server((host, int(port)))
    inner = socket.socket()
    inner.bind(("127.0.0.1", 0))
    inner_port = inner.getsockname()[1]
    inner.close()
    child_argv = [real] + argv
    child_argv[i + 2] = f"tcp://127.0.0.1:{inner_port}"
    child = subprocess.Popen(child_argv, preexec_fn=die_with_parent)
    signal.signal(signal.SIGTERM, lambda *_: child.send_signal(signal.SIGTERM))
    tamper = Tamper(int(os.environ.get("REPLAY_TAMPER_AT", "20")))

    def accept():
        while True:
            conn, _ = listener.accept()
            up = socket.create_connection(("127.0.0.1", inner_port))
            threading.Thread(target=tamper.requests, args=(conn, up), daemon=True).start()
            threading.Thread(target=responses, args=(up, conn), daemon=True).start()

    for _ in range(300):  # announce the address only once the real kairosd listens
        try:
            socket.create_connection(("127.0.0.1", inner_port)).close()
            break
        except OSError:
            threading.Event().wait(0.1)
    threading.Thread(target=accept, daemon=True).start()
    # The line test/e2e/harness.py waits for, about the address CometBFT dials.
    print(f"replay_tamper: ABCI server listening on {argv[i + 1]} (relaying to kairosd on "
          f"{inner_port})", flush=True)
    sys.exit(child.wait())


if __name__ == "__main__":
    main()
