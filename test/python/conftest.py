"""Shared fixtures of the Python module's tests: a fresh default graph per test, free ports,
and the paths of the troupe binary and the examples."""

import os
import socket

import pytest

import troupe as tf

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(REPO, "examples", "python")
TROUPE_CLI = os.environ.get("TROUPE_CLI", os.path.join(REPO, "build", "apps", "troupe"))


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield


def free_ports(count):
    """`count` ports free on 127.0.0.1 now (each bound once, then released)."""
    sockets, ports = [], []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        sockets.append(s)
        ports.append(s.getsockname()[1])
    for s in sockets:
        s.close()
    return ports


@pytest.fixture
def insecure(monkeypatch):
    """Servers in this test listen without TLS."""
    for name in ("TROUPE_TLS_CERT", "TROUPE_TLS_KEY", "TROUPE_TLS_CA"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TROUPE_INSECURE", "1")
