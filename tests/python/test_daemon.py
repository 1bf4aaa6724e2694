"""The memory daemon from Python, on the host backend (memfd pages and
descriptor passing are real): two processes, one copy."""
import ctypes
import os
import subprocess
import sys
import tempfile
import time

import pytest

import memlake

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, "build", "memlake")


@pytest.fixture
def daemon():
    if not os.path.exists(CLI):
        pytest.skip("build/memlake not built")
    d = tempfile.mkdtemp(prefix="memlake_pyd_")
    sock = os.path.join(d, "daemon.sock")
    p = subprocess.Popen([CLI, "daemon", "--backend", "host", "--pool", "256M", "--chunk", "4M", "--socket", sock],
                         stderr=subprocess.PIPE)
    for _ in range(200):
        if os.path.exists(sock):
            break
        time.sleep(0.01)
    yield sock
    p.terminate()
    p.wait(timeout=10)
    subprocess.run(["rm", "-rf", d])


CHILD = r"""
import ctypes, sys
sys.path.insert(0, sys.argv[1])
import memlake
a = memlake.Allocator(backend="host", daemon_socket=sys.argv[2])
buf = memlake.attach(sys.argv[3], allocator=a)
print(buf.nbytes, ctypes.string_at(buf.address, 8).hex(), flush=True)
sys.stdin.readline()
buf.close()
"""


def test_two_processes_share_one_copy(daemon):
    a = memlake.Allocator(backend="host", daemon_socket=daemon)
    n = 3 << 20
    p = a.alloc(n)
    ctypes.memmove(p, b"weights!" * (n // 8), n)
    cid = memlake.content_id(p, n, allocator=a)
    assert len(cid) == 64
    buf = memlake.share(p, n, allocator=a)
    assert buf.id == cid and buf.nbytes == n
    a.free(p)
    assert ctypes.string_at(buf.address, 8) == b"weights!"
    child = subprocess.Popen([sys.executable, "-c", CHILD, os.path.join(ROOT, "python"), daemon, cid],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = child.stdout.readline().split()
    assert line == [str(n), b"weights!".hex()]
    st = memlake.daemon_status(daemon)
    [b] = st["buffers"]
    assert b["holders"] == 2 and st["shared_bytes"] == 4 << 20 and st["saved_bytes"] == 4 << 20
    child.communicate("\n", timeout=30)
    assert child.returncode == 0
    buf.close()
    for _ in range(200):
        if memlake.daemon_status(daemon)["used_bytes"] == 0:
            break
        time.sleep(0.01)
    assert memlake.daemon_status(daemon)["used_bytes"] == 0
    a.close()


def test_unknown_ids_and_a_missing_daemon_are_clear_errors(daemon):
    a = memlake.Allocator(backend="host", daemon_socket=daemon)
    with pytest.raises(memlake.UnavailableError, match="nothing is published"):
        memlake.attach("0" * 64, allocator=a)
    with pytest.raises(memlake.InvalidArgumentError, match="64 hexadecimal"):
        memlake.attach("zz", allocator=a)
    with pytest.raises(memlake.UnavailableError, match="no memlake daemon"):
        memlake.daemon_status(daemon + ".absent")
    a.close()
