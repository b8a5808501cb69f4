#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Run a command on a terminal of its own, as a person at a shell would.

Usage: ptyrun.py [--rows N --cols N] [--owner UID] [--log FILE]
                 [STEP...] -- CMD [ARG...]

The command runs in a new session whose controlling terminal is the
slave of a fresh pty (its stdin, stdout and stderr); --owner gives the
slave to UID, as login gives a user their terminal. Everything it writes
to the terminal goes to stdout (or --log FILE, flushed as it comes),
unchanged. The steps run in order while it runs:

  expect:TEXT   wait until TEXT appears in the output after the last match
  send:TEXT     type TEXT (Python escapes: \\x03 is ^C, \\x1a is ^Z, \\r)
  mark:PATH     create the file PATH (tell the test a point was reached)
  wait:PATH     wait until the file PATH exists (the test's go-ahead)
  winch:R:C     resize the terminal to R rows, C columns (SIGWINCH)

Exit status: the command's (128+N for signal N); 90 when a step did not
complete within 60 seconds (the command's session is then killed).
"""
import fcntl
import os
import select
import signal
import struct
import sys
import termios
import time

STEP_TIMEOUT = 60.0


def main():
    args = sys.argv[1:]
    rows, cols, owner, log = 24, 80, None, None
    steps = []
    while args and args[0] != "--":
        a = args.pop(0)
        if a == "--rows":
            rows = int(args.pop(0))
        elif a == "--cols":
            cols = int(args.pop(0))
        elif a == "--owner":
            owner = int(args.pop(0))
        elif a == "--log":
            log = args.pop(0)
        else:
            kind, _, arg = a.partition(":")
            if kind not in ("expect", "send", "mark", "wait", "winch"):
                sys.exit(f"ptyrun: unknown step {a!r}")
            steps.append((kind, arg))
    if not args or len(args) < 2:
        sys.exit("ptyrun: no command")
    cmd = args[1:]

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    if owner is not None:
        os.fchown(slave, owner, -1)
    pid = os.fork()
    if pid == 0:
        os.close(master)
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        for fd in range(3):
            os.dup2(slave, fd)
        if slave > 2:
            os.close(slave)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        os.execvp(cmd[0], cmd)
    os.close(slave)

    out = open(log, "wb", buffering=0) if log else sys.stdout.buffer
    seen = b""
    pos = 0
    status = None
    deadline = time.monotonic() + STEP_TIMEOUT
    eof = False

    def pump(timeout):
        nonlocal seen, eof
        if eof:
            time.sleep(timeout)
            return
        r, _, _ = select.select([master], [], [], timeout)
        if not r:
            return
        try:
            data = os.read(master, 65536)
        except OSError:
            data = b""
        if not data:
            eof = True
            return
        seen += data
        out.write(data)
        out.flush()

    for kind, arg in steps:
        deadline = time.monotonic() + STEP_TIMEOUT
        while True:
            if kind == "expect":
                i = seen.find(arg.encode(), pos)
                if i >= 0:
                    pos = i + len(arg)
                    break
            elif kind == "send":
                os.write(master, arg.encode().decode("unicode_escape").encode("latin-1"))
                break
            elif kind == "mark":
                open(arg, "w").close()
                break
            elif kind == "wait":
                if os.path.exists(arg):
                    break
            elif kind == "winch":
                r, c = arg.split(":")
                fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", int(r), int(c), 0, 0))
                break
            if time.monotonic() > deadline:
                sys.stderr.write(f"ptyrun: step {kind}:{arg} did not complete\n")
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
                os.waitpid(pid, 0)
                sys.exit(90)
            pump(0.05)

    # The rest of the output, until every writer closed the terminal.
    deadline = time.monotonic() + STEP_TIMEOUT
    while not eof and time.monotonic() < deadline:
        pump(0.2)
        if status is None:
            p, st = os.waitpid(pid, os.WNOHANG)
            if p:
                status = st
    if status is None:
        _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sys.exit(128 + os.WTERMSIG(status))
    sys.exit(os.WEXITSTATUS(status))


if __name__ == "__main__":
    main()
