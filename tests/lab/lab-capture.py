#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""lab-capture: every IP packet a lab namespace sees, one line each.

Run inside a namespace of the lab (tests/lab/lab.sh, lab_capture_start):

    lab-capture.py --log FILE --ready FILE [--marker BYTES]...

An AF_PACKET socket of ETH_P_ALL sees each frame on each link of the
namespace, in and out (lo twice: out, then in), before any filter of the
namespace's own has a say: what reaches a link is logged, whether or not
the namespace then drops it. One line per IPv4 or IPv6 packet:

    if=lh0 dir=in proto=udp src=198.18.0.1 dst=198.18.1.53 sport=40000 dport=53 len=61 markers=-

proto is udp, tcp (then flags=S, SA, ...), icmp or icmpv6 (then type=N
code=N), or the protocol number. markers lists each --marker found
anywhere in the packet's bytes (an ICMP error quotes the packet it is
about, so its marker shows there too), or "-"; a UDP packet that carries
one ends with payload=HEX, its UDP payload whole. The ready file is
written once the socket is open. Stops at SIGTERM.
"""
import argparse
import ipaddress
import os
import signal
import socket
import struct
import sys

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def transport(proto, data, off):
    """Fields of the transport header at off; a UDP payload as payload=HEX (the last field)."""
    if proto in (6, 17) and len(data) >= off + 4:
        sport, dport = struct.unpack_from("!HH", data, off)
        fields = ["proto=" + ("tcp" if proto == 6 else "udp"), "sport=%d" % sport, "dport=%d" % dport]
        if proto == 17:
            fields.append("payload=" + data[off + 8 :].hex())
        if proto == 6 and len(data) >= off + 14:
            bits = data[off + 13]
            flags = "".join(c for c, b in (("F", 1), ("S", 2), ("R", 4), ("P", 8), ("A", 16)) if bits & b)
            fields.append("flags=" + (flags or "-"))
        return fields
    if proto in (1, 58) and len(data) >= off + 2:
        return ["proto=" + ("icmp" if proto == 1 else "icmpv6"), "type=%d" % data[off], "code=%d" % data[off + 1]]
    return ["proto=%d" % proto]


def describe(data):
    """None for what is not IP; else the fields of the packet."""
    if not data:
        return None
    version = data[0] >> 4
    if version == 4 and len(data) >= 20:
        ihl = (data[0] & 0xF) * 4
        src = ipaddress.IPv4Address(data[12:16])
        dst = ipaddress.IPv4Address(data[16:20])
        return ["src=%s" % src, "dst=%s" % dst, "ttl=%d" % data[8]] + transport(data[9], data, ihl)
    if version == 6 and len(data) >= 40:
        src = ipaddress.IPv6Address(data[8:24])
        dst = ipaddress.IPv6Address(data[24:40])
        proto, off = data[6], 40
        # Hop-by-hop, routing, destination options: skip to what they carry.
        while proto in (0, 43, 60) and len(data) >= off + 2:
            proto, off = data[off], off + (data[off + 1] + 1) * 8
        return ["src=%s" % src, "dst=%s" % dst, "ttl=%d" % data[7]] + transport(proto, data, off)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--ready", required=True)
    ap.add_argument("--marker", action="append", default=[])
    args = ap.parse_args()
    markers = [(m, m.encode()) for m in args.marker]

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    # Cooked: the frame from its network header on, whatever the link.
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_ALL))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    log = open(args.log, "a", buffering=1)
    with open(args.ready + ".tmp", "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(args.ready + ".tmp", args.ready)
    while True:
        data, addr = sock.recvfrom(65535)
        fields = describe(data)
        if fields is None:
            continue
        found = [name for name, b in markers if b in data]
        payload = [f for f in fields if f.startswith("payload=")]
        fields = [f for f in fields if not f.startswith("payload=")]
        log.write(
            " ".join(
                ["if=%s" % addr[0], "dir=%s" % ("out" if addr[2] == PACKET_OUTGOING else "in")]
                + fields
                + ["len=%d" % len(data), "markers=%s" % (",".join(found) or "-")]
                # The bytes of what carries a marker, to compare them whole.
                + (payload if found else [])
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
