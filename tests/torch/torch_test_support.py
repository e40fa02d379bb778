"""What the PyTorch checks (test_*.py here) share: a free port for a rendezvous, and the
verdict a ctest reads (exit status 0 and "ok", or every failure listed and 1)."""

import socket


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def verdict(failures):
    if failures:
        print("FAIL:\n" + "\n".join(failures))
        return 1
    print("ok")
    return 0
