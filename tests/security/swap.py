#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# swap.py A B: exchange the names A and B (renameat2 RENAME_EXCHANGE) in a
# loop until killed, as a hostile user swapping a checked directory with
# a symlink while cordon sets a sandbox up (sec-paths.sh). Prints
# "swapping" once the first exchange succeeded.
import ctypes
import os
import sys

AT_FDCWD = -100
RENAME_EXCHANGE = 2

libc = ctypes.CDLL(None, use_errno=True)
renameat2 = libc.renameat2
renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                      ctypes.c_uint]
a, b = (os.fsencode(p) for p in sys.argv[1:3])
first = True
while True:
    if renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        e = ctypes.get_errno()
        sys.exit("swap.py: renameat2: " + os.strerror(e))
    if first:
        print("swapping", flush=True)
        first = False
