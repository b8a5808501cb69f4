#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The network lab's HTTP server (tests/lab/lab.sh starts it, never a test).

One dual-stack listening socket on [::]:PORT, so every address of the
network namespace it runs in answers. Each answer names the address the
request came in on, from a map file of "ADDRESS NAME" lines, so a test can
tell where a connection landed:

    GET /anything   ->  "NAME\\n"            (header X-Lab-Server: NAME)
    GET /peer       ->  "CLIENT-ADDRESS\\n"   what this side saw as the source

An address missing from the map answers "DEFAULT ADDRESS". Every request
is logged, one line flushed at once: "NAME LOCAL-ADDRESS PEER-ADDRESS PATH".
The file named by --ready is created once the socket listens.

usage: lab-httpd.py --port N --map FILE --default NAME --log FILE --ready FILE
"""

import argparse
import http.server
import os
import socket
import socketserver
import sys


def plain(addr):
    """An IPv4 address as itself, not in its IPv4-mapped IPv6 form."""
    if addr.startswith("::ffff:") and "." in addr:
        return addr[len("::ffff:"):]
    return addr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--map", required=True)
    ap.add_argument("--default", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--ready", required=True)
    args = ap.parse_args()

    names = {}
    with open(args.map) as f:
        for line in f:
            words = line.split()
            if len(words) == 2:
                names[words[0]] = words[1]
    log = open(args.log, "a", buffering=1)

    class Handler(http.server.BaseHTTPRequestHandler):
        server_version = "cordon-lab"
        sys_version = ""

        def do_GET(self):
            local = plain(self.request.getsockname()[0])
            peer = plain(self.client_address[0])
            name = names.get(local, args.default + " " + local)
            body = (peer if self.path == "/peer" else name) + "\n"
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("X-Lab-Server", name.replace(" ", "_"))
            self.end_headers()
            self.wfile.write(data)
            log.write("%s %s %s %s\n" % (name.replace(" ", "_"), local, peer, self.path))

        do_HEAD = do_GET

        def log_message(self, fmt, *a):
            pass

    class Server(http.server.ThreadingHTTPServer):
        address_family = socket.AF_INET6
        daemon_threads = True
        request_queue_size = 128

        def server_bind(self):
            # Not HTTPServer.server_bind: its socket.getfqdn() would ask a resolver.
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            socketserver.TCPServer.server_bind(self)
            self.server_name = "lab"
            self.server_port = args.port

    srv = Server(("::", args.port), Handler)
    with open(args.ready + ".tmp", "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(args.ready + ".tmp", args.ready)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
