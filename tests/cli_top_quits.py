"""memlake top on a terminal reads single keys and exits (status 0) when 'q' is
pressed. Runs the command under a pseudo-terminal (pty).
    python3 cli_top_quits.py MEMLAKE_BINARY"""
import os
import pty
import select
import sys
import termios
import time

binary = sys.argv[1]
pid, fd = pty.fork()
if pid == 0:
    os.execv(binary, [binary, "top", "--interval", "30"])
before = None
out = b""
deadline = time.monotonic() + 60  # a bound for a hung run, not a timing assertion
while b"q quits" not in out and time.monotonic() < deadline:
    if select.select([fd], [], [], 1)[0]:
        try:
            out += os.read(fd, 4096)
        except OSError:
            break
assert b"q quits" in out, out
assert not termios.tcgetattr(fd)[3] & termios.ICANON, "top should read single keys"
os.write(fd, b"q")
status = None
while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    if select.select([fd], [], [], 1)[0]:
        try:
            os.read(fd, 4096)
        except OSError:
            pass
else:
    os.kill(pid, 9)
    sys.exit("memlake top did not exit on q")
assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
print("memlake top quit on q, exit 0")
