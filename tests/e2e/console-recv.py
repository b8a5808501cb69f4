#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A --console-socket receiver for the e2e tests (runc's recvtty, reduced).

console-recv.py SOCKET OUT [INPUT]

Listens on the unix socket SOCKET, accepts one connection, receives the
pty master sent with SCM_RIGHTS, writes INPUT (with a newline) to it,
then copies everything the terminal prints into OUT until the last slave
is closed (EIO) or 20 s pass. OUT's first line is "winsize ROWS COLS" of
the terminal as received; OUT.name holds the name sent with the fd.
"""
import fcntl
import os
import select
import socket
import struct
import sys
import termios
import time


def main():
    path, out_path = sys.argv[1], sys.argv[2]
    text = sys.argv[3] if len(sys.argv) > 3 else None
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    srv.settimeout(20)
    conn, _ = srv.accept()
    name, fds, _, _ = socket.recv_fds(conn, 1024, 1)
    if len(fds) != 1:
        sys.exit("no fd received")
    master = fds[0]
    with open(out_path + ".name", "wb") as f:
        f.write(name)
    rows, cols, _, _ = struct.unpack("HHHH", fcntl.ioctl(master, termios.TIOCGWINSZ, b"\0" * 8))
    out = open(out_path, "wb")
    out.write(b"winsize %d %d\n" % (rows, cols))
    out.flush()
    if text is not None:
        os.write(master, text.encode() + b"\n")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 0.5)
        if not r:
            continue
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: every slave is closed
            break
        if not data:
            break
        out.write(data)
        out.flush()
    out.close()


main()
