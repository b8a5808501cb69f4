#!/usr/bin/env python3
# Seed scripts for fuzz-dnsproxy (tests/fuzz/corpus/dnsproxy): each one a
# scene the harness's byte code can play, written with the operations of
# tests/fuzz/fuzz-dnsproxy.c (enum op, and the operands each one reads).
import os, struct, sys

out = sys.argv[1]

(CONNECT, QUEUE_QUERY, QUEUE_RAW, SEND, READ, RESET, SHUTDOWN, CLOSE, UDP_SEND, UDP_READ,
 UPSTREAM, SPOOF, ADMIT, STATS, HANGUP, DRIVE, WAIT, SPURIOUS) = range(18)

# The first byte: the proxy's set-up.
DIRECT, QPS, INFLIGHT, ADDRS2, TWO_UP, REVERSE, SYNC_ADMIT, ADMIT_FAILS = (1 << i for i in range(8))

# build_query: names and types by index
N_ALLOWED, N_ALLOWED_CASE, N_WILD_A, N_WILD_B, N_TWO_BELOW, N_DENIED = range(6)
T_A, T_AAAA, T_CNAME, T_TXT, T_HTTPS = range(5)


def query(qid, name=N_ALLOWED, qtype=T_A, rd=True, edns=False):
    f = (1 if rd else 0) | (0x20 if edns else 0)
    return bytes([qid >> 8, qid & 0xff, f, name | qtype << 4])


def frame_query(qid, name=N_ALLOWED, qtype=T_A, rd=True):
    """The wire bytes of a plain query, as build_query makes it (for QUEUE_RAW)."""
    labels = {N_ALLOWED: 'allowed.test', N_DENIED: 'denied.test', N_WILD_A: 'a.wild.test'}[name]
    b = struct.pack('>HHHHHH', qid, 0x0100 if rd else 0, 1, 0, 0, 0)
    for l in labels.split('.'):
        b += bytes([len(l)]) + l.encode()
    b += b'\0' + struct.pack('>HH', [1, 28, 5, 16, 65][qtype], 1)
    return struct.pack('>H', len(b)) + b


# build_answer operands
A, AAAA, CNAME, HTTPS, TXT = 0, 2, 3, 4, 5
ANSWER, TC, RAW, ERROR, DROP = 0, 4, 5, 6, 7
WHOLE, SPLIT, THEN_CLOSE, CLOSE_ONLY, RESET_ONLY = range(5)


def rec(kind, sel=0, ttl=3, extra=b''):
    """sel: owner in the high nibble (0: the question), address index in the low."""
    b = bytes([sel, kind])
    if kind % 8 in (A, 1, AAAA, 7):
        b += bytes([ttl]) + extra
    elif kind % 8 == CNAME:
        b += bytes([ttl])
    elif kind % 8 in (TXT, 6):
        b += extra or b'\x08'
    return b


def answer(pick=0, kind=ANSWER, how=WHOLE, records=(), rcode=3, raw=b'', part=None):
    b = bytes([pick, kind, how])
    if kind % 8 < 4:
        b += bytes([len(records)]) + b''.join(records)
    elif kind == RAW:
        b += bytes([len(raw)]) + raw
    elif kind == ERROR:
        b += bytes([rcode])
    if how == SPLIT:
        b += bytes([part if part is not None else 7])
    return b


VET, ALL_OK, VERDICTS, FAIL, NO_VERDICTS, SHORT = range(6)


def admit(pick=1, how=VET, operands=b''):
    return bytes([ADMIT, pick, how]) + operands


def write(name, cfg, *ops):
    with open(os.path.join(out, name), 'wb') as f:
        f.write(bytes([cfg]) + b''.join(o if isinstance(o, bytes) else bytes([o]) for o in ops))


D = bytes([DRIVE, DRIVE])  # accepting is a turn of its own, reading the next

# The plain path: a query over TCP, the upstream's address, the supervisor's vetting, the reply.
write('tcp-allowed', 0,
      bytes([CONNECT, 0, QUEUE_QUERY, 0]), query(0x1234), bytes([SEND, 0, 0]), D,
      bytes([UPSTREAM]), answer(records=[rec(A, 0x00), rec(A, 0x01)]), D,
      admit(), D, bytes([READ, 0, 0]))
write('udp-allowed', 0,
      bytes([UDP_SEND, 0, 0]), query(0x4242), D,
      bytes([UPSTREAM]), answer(records=[rec(A, 0x00)]), D, admit(), D, bytes([UDP_READ]))
write('udp-v6-aaaa', 0,
      bytes([UDP_SEND, 1, 0]), query(0x0606, N_WILD_A, T_AAAA, edns=True), D,
      bytes([UPSTREAM]), answer(records=[rec(AAAA, 0x00), rec(AAAA, 0x01)]), D,
      admit(how=ALL_OK), D, bytes([UDP_READ]))
# A CNAME chain with refused addresses on it and an address off it.
write('cname-chain', 0,
      bytes([CONNECT, 0, QUEUE_QUERY, 0]), query(7, N_WILD_B), bytes([SEND, 0, 0]), D,
      bytes([UPSTREAM]), answer(records=[rec(CNAME | 1 << 3, 0x00), rec(A, 0x12), rec(A, 0x13),
                                         rec(A, 0x14), rec(7, 0x00), rec(HTTPS, 0)]), D,
      admit(), D, bytes([READ, 0, 0]))
# Denied names, pipelined in one write, then a reset while they are answered.
write('pipelined-reset', 0,
      bytes([CONNECT, 0, DRIVE]),
      bytes([QUEUE_RAW, 0, 0]),  # an empty raw write
      bytes([QUEUE_QUERY, 0]), query(1, N_DENIED), bytes([QUEUE_QUERY, 0]), query(2, N_DENIED),
      bytes([QUEUE_QUERY, 0]), query(3, N_DENIED), bytes([SEND, 0, 0, RESET, 0]), D, D)
# A length prefix split across writes, one byte at a time, with a loop turn between.
q = frame_query(0x0b0b, N_DENIED)
write('split-prefix', 0,
      bytes([CONNECT, 0, QUEUE_RAW, 0, len(q)]), q,
      *[bytes([SEND, 0, 1, DRIVE]) for _ in range(len(q))], bytes([READ, 0, 0]))
# Garbage, a response, a zero length, and a short frame.
garbage = b'\x00\x02\xff\xff' + b'\x00\x00' + b'\x00\x0c' + bytes([0, 1, 0x80]) + bytes(9) + b'\x00\x05hello'
write('garbage', 0,
      bytes([CONNECT, 0, QUEUE_RAW, 0, len(garbage)]), garbage, bytes([SEND, 0, 0]), D, D,
      bytes([READ, 0, 0]))
# The upstream says TC: the query goes again over TCP, answered in two parts.
write('tc-then-tcp', 0,
      bytes([UDP_SEND, 0, 0]), query(0x7c7c), D,
      bytes([UPSTREAM]), answer(kind=TC), D, D,
      bytes([UPSTREAM]), answer(records=[rec(A, 0x00), rec(TXT, 0x00)], how=SPLIT, part=9), D,
      bytes([UPSTREAM]), answer(kind=DROP), D, admit(), D, bytes([UDP_READ]))
# A client that does not read while nearly 64 KiB answers pile up (small receive buffer).
big = [rec(TXT | 0x80, 0x00, extra=bytes([229]))]
scene = [bytes([CONNECT, 4])]
for i in range(6):
    scene += [bytes([QUEUE_QUERY, 0]), query(0x100 + i, N_WILD_A)]
scene += [bytes([SEND, 0, 0]), D]
for i in range(6):
    scene += [bytes([UPSTREAM]), answer(kind=TC), D, D, bytes([UPSTREAM]), answer(records=big), D]
scene += [D, D, bytes([READ, 0, 1]), D, bytes([SPURIOUS, 0, 0, 0]), D, bytes([READ, 0, 0])]
write('backlog-big-answers', 0, *scene)
# The admit answered inside the callback, and one the callback could not ask.
write('direct-sync-admit', DIRECT | SYNC_ADMIT,
      bytes([UDP_SEND, 0, 0]), query(0x5151), D,
      bytes([UPSTREAM]), answer(records=[rec(A, 0x00), rec(A, 0x01)]), bytes([DRIVE]),
      bytes([1]), D, bytes([UDP_READ]))
write('direct-admit-fails', DIRECT | ADMIT_FAILS,
      bytes([UDP_SEND, 0, 0]), query(0x5252), D,
      bytes([UPSTREAM]), answer(records=[rec(A, 0x00)]), bytes([DRIVE, 1]), D, bytes([UDP_READ]))
# The supervisor's other answers: verdicts of its own, an error, none, short, stale.
for i, (how, operands) in enumerate([(VERDICTS, bytes([2, 0, 5] + [0] * 14)),
                                     (FAIL, bytes([0])), (NO_VERDICTS, b''), (SHORT, b''),
                                     (VERDICTS | 0x40, bytes([2, 0, 0] + [0] * 14 + [3])),
                                     (VERDICTS | 0x40 | 0x20, bytes([2, 0, 0] + [0] * 14 + [3])),
                                     (VERDICTS, bytes([40, 200, 0] + [0] * 14))]):
    write('admit-%d' % i, ADDRS2 if i == 3 else 0,
          bytes([CONNECT, 0, QUEUE_QUERY, 0]), query(0x2000 + i), bytes([SEND, 0, 0]), D,
          bytes([UPSTREAM]), answer(records=[rec(A, 0x00), rec(A, 0x01), rec(A, 0x07)]), D,
          admit(how=how, operands=operands), D, bytes([READ, 0, 0]))
write('admit-stale', 0,
      bytes([ADMIT, 1, 9, ALL_OK, ADMIT, 0, 0, 0, 0, 0, FAIL, 0]),
      bytes([UDP_SEND, 0, 0]), query(0x3333), D,
      bytes([UPSTREAM]), answer(records=[rec(A, 0x00)]), D,
      admit(), D, admit(how=ALL_OK), D, bytes([UDP_READ]))
# The admit not answered in time.
write('admit-timeout', 0,
      bytes([UDP_SEND, 0, 0]), query(0x3434), D,
      bytes([UPSTREAM]), answer(records=[rec(A, 0x00)]), D,
      bytes([WAIT, 3, WAIT, 3, WAIT, 3]), admit(), D, bytes([UDP_READ]))
# No upstream answer: retries across two upstreams, then SERVFAIL.
write('upstream-timeout', TWO_UP,
      bytes([UDP_SEND, 0, 0]), query(0x4545), D,
      *[bytes([WAIT, 3]) for _ in range(6)], bytes([UDP_READ]))
# An answer that is not one, a wrong question, then the right one.
write('upstream-garbage', TWO_UP,
      bytes([UDP_SEND, 0, 0]), query(0x5656), D,
      bytes([UPSTREAM]), answer(kind=RAW, raw=b'\x00\x00\x81\x80' + bytes(8)), D,
      bytes([UPSTREAM]), answer(kind=ERROR, rcode=2), D, bytes([UDP_READ]))
# A spoofed answer from another port comes first; the real one after.
write('spoof', 0,
      bytes([UDP_SEND, 0, 0]), query(0x6767), D,
      bytes([SPOOF, 0, 3, 0]), D,  # pick, the marker's TTL, no more records
      bytes([UPSTREAM]), answer(records=[rec(A, 0x00)]), D, admit(), D, bytes([UDP_READ]))
# A TCP upstream that closes or resets instead of answering.
write('tcp-upstream-closes', 0,
      bytes([CONNECT, 0, QUEUE_QUERY, 0]), query(0x7777), bytes([SEND, 0, 0]), D,
      bytes([UPSTREAM]), answer(kind=TC), D, D,
      bytes([UPSTREAM]), answer(how=CLOSE_ONLY), D, D,
      bytes([UPSTREAM]), answer(how=RESET_ONLY), D, D, bytes([READ, 0, 0]))
# Foreign sources over TCP and UDP, and more clients than the proxy takes.
write('foreign-and-many', 0,
      bytes([CONNECT, 2, QUEUE_QUERY, 0]), query(9), bytes([SEND, 0, 0]),
      bytes([UDP_SEND, 2, 0]), query(10), D, D, bytes([READ, 0, 0, UDP_READ]),
      *[bytes([CONNECT, 0]) for _ in range(20)], D, D)
# Half-close with an answer still owed; a plain close too.
write('half-close', 0,
      bytes([CONNECT, 0, QUEUE_QUERY, 0]), query(0x0101), bytes([SEND, 0, 0, SHUTDOWN, 0]), D,
      bytes([CONNECT, 0, QUEUE_QUERY, 1]), query(0x0102), bytes([SEND, 1, 0, CLOSE, 1]), D,
      bytes([UPSTREAM]), answer(records=[rec(A, 0x00)]), D,
      bytes([UPSTREAM]), answer(records=[rec(A, 0x01)]), D, admit(), admit(pick=2), D,
      bytes([READ, 0, 0]))
# Rate and in-flight limits.
write('limits', QPS | INFLIGHT,
      *[bytes([UDP_SEND, 0, 0]) + query(0x900 + i) for i in range(8)], D, D, bytes([UDP_READ]))
# Statistics asked for, then the supervisor hangs up with work in flight.
write('stats-hangup', 0,
      bytes([UDP_SEND, 0, 0]), query(0x8888), D, bytes([STATS]), D,
      bytes([UPSTREAM]), answer(records=[rec(A, 0x00)]), D, admit(),
      bytes([HANGUP, 7]), D, D)
# Events of the input's own on live objects, in reversed batches.
write('spurious', REVERSE,
      bytes([CONNECT, 0, SPURIOUS, 0, 0, 0, SPURIOUS, 0, 3, 0]),
      bytes([QUEUE_QUERY, 0]), query(0x0c0c), bytes([SEND, 0, 0, SPURIOUS, 1, 1, 1]),
      bytes([UPSTREAM]), answer(kind=TC), D, bytes([SPURIOUS, 0, 4, 2, SPURIOUS, 1, 0, 0]),
      bytes([UPSTREAM]), answer(records=[rec(A, 0x00)]), bytes([SPURIOUS, 2, 2, 0]),
      admit(), D, bytes([READ, 0, 0]))
# The supervisor hangs up with the proxy's messages unread (an EVENT here):
# the proxy's loop ends as on any hang-up.
write('hangup-unread', 0,
      bytes([UDP_SEND, 0, 0]), query(0x4a4a, N_DENIED), D, bytes([UDP_READ, HANGUP, 7]), D)
# The supervisor refuses every third upstream socket (set-up 0x80), or
# answers every fourth without one (0x40): those queries fail or retry.
for name, cfg in (('sockets-refused', 0x80), ('sockets-without', 0x40 | TWO_UP)):
    scene = []
    for i in range(5):
        scene += [bytes([UDP_SEND, 0, 0]), query(0x5000 + i)]
    scene += [D]
    for i in range(5):
        scene += [bytes([UPSTREAM]), answer(kind=TC if i == 2 else ERROR, rcode=3), D, D]
    scene += [bytes([UPSTREAM]), answer(rcode=3, kind=ERROR), D, D, bytes([UDP_READ])]
    write(name, cfg, *scene)
