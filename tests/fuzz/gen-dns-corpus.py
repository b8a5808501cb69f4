#!/usr/bin/env python3
# Hand-built DNS messages for the fuzz seed corpus (tests/fuzz/corpus/dns).
import struct, os, sys, ipaddress
out = sys.argv[1]

class M:
    def __init__(s): s.b = bytearray()
    def u8(s, v): s.b += bytes([v]); return s
    def u16(s, v): s.b += struct.pack('>H', v); return s
    def u32(s, v): s.b += struct.pack('>I', v); return s
    def raw(s, d): s.b += d; return s
    def labels(s, n):
        at = len(s.b)
        for l in n.split('.') if n else []:
            s.b += bytes([len(l)]) + l.encode('latin1')
        return at
    def name(s, n):
        at = s.labels(n); s.b += b'\0'; return at
    def ptr(s, off): s.u16(0xc000 | off); return s
    def hdr(s, id, flags, qd, an, ns, ar):
        s.b = bytearray(struct.pack('>HHHHHH', id, flags, qd, an, ns, ar)); return s
    def q(s, n, t, c=1): at = s.name(n); s.u16(t).u16(c); return at
    def fixed(s, t, ttl, rdlen, c=1): s.u16(t).u16(c).u32(ttl).u16(rdlen); return s
    def begin(s, t, ttl, c=1): s.fixed(t, ttl, 0, c); return len(s.b) - 2
    def end(s, at): struct.pack_into('>H', s.b, at, len(s.b) - at - 2)
    def a(s, ttl, addr): s.fixed(1, ttl, 4).raw(ipaddress.IPv4Address(addr).packed)
    def aaaa(s, ttl, addr): s.fixed(28, ttl, 16).raw(ipaddress.IPv6Address(addr).packed)
    def opt(s, size=1232, do=False, opts=b''):
        s.u8(0).u16(41).u16(size).u32(0x8000 if do else 0).u16(len(opts)).raw(opts)

def write(fname, m):
    with open(os.path.join(out, fname), 'wb') as f:
        f.write(bytes(m.b if isinstance(m, M) else m))

Q = 12
# Queries
m = M(); m.hdr(0x1a2b, 0x0120, 1, 0, 0, 1); m.q('example.com', 1); m.opt(1232, False, b'\x00\x0a\x00\x08' + bytes(range(8)))
write('query-a-edns-cookie', m)
m = M(); m.hdr(0x0707, 0x0100, 1, 0, 0, 0); m.q('wWw.GiThUb.CoM', 28)
write('query-aaaa-0x20', m)
m = M(); m.hdr(0x3131, 0x0100, 1, 0, 0, 1); m.q('api.example.org', 65); m.opt(4096, True)
write('query-https-do', m)

# A answer, owners compressed to the question
m = M(); m.hdr(0x1a2b, 0x8180, 1, 2, 0, 1); m.q('example.com', 1)
m.ptr(Q); m.a(1800, '93.184.215.14'); m.ptr(Q); m.a(1800, '93.184.215.15'); m.opt(1232)
write('answer-a-compressed', m)

# AAAA
m = M(); m.hdr(0x0707, 0x8180, 1, 1, 0, 0); m.q('wWw.GiThUb.CoM', 28); m.ptr(Q); m.aaaa(60, '2606:50c0:8000::153')
write('answer-aaaa', m)

# CNAME chain: www.example.org -> www.example.org.cdn.example.net -> edge-7.cdn.example.net, A + AAAA
m = M(); m.hdr(0x5151, 0x8180, 1, 4, 0, 1); qat = m.q('www.example.org', 1)
m.ptr(Q); at = m.begin(5, 300); t1 = len(m.b); m.labels('www.example.org.cdn'); n1 = len(m.b); m.name('example.net'); m.end(at)
m.ptr(t1); at = m.begin(5, 60); t2 = len(m.b); m.labels('edge-7.cdn'); m.ptr(n1); m.end(at)
m.ptr(t2); m.a(20, '203.0.113.7'); m.ptr(t2); m.a(20, '203.0.113.8'); m.opt(1232)
write('answer-cname-chain', m)

# Chain with a record for an unrelated owner and an A in additional
m = M(); m.hdr(0x5252, 0x8180, 1, 3, 0, 2); m.q('login.example.com', 1)
m.ptr(Q); at = m.begin(5, 300); t = len(m.b); m.labels('auth'); m.ptr(Q + 6); m.end(at)
m.ptr(t); m.a(60, '198.51.100.20')
m.name('tracker.example.net'); m.a(60, '192.0.2.66')
m.ptr(t); m.a(60, '198.51.100.21'); m.opt(1232)
write('answer-cname-offchain', m)

# CNAME loop
m = M(); m.hdr(0x5353, 0x8180, 1, 3, 0, 0); m.q('loop.example', 1)
m.ptr(Q); at = m.begin(5, 60); t = len(m.b); m.labels('a'); m.ptr(Q + 5); m.end(at)
m.ptr(t); at = m.begin(5, 60); m.ptr(Q); m.end(at)
m.ptr(t); m.a(60, '192.0.2.1')
write('answer-cname-loop', m)

# HTTPS with alpn, ipv4hint, ech, ipv6hint + A in additional
m = M(); m.hdr(0x3131, 0x8180, 1, 1, 0, 2); m.q('api.example.org', 65)
m.ptr(Q); at = m.begin(65, 300); m.u16(1).u8(0)
m.u16(1).u16(6).raw(b'\x02h2\x02h3'); m.u16(4).u16(8).raw(bytes([104,16,132,229,104,16,133,229]))
m.u16(5).u16(9).raw(b'\x00\x07ECHCONF'); m.u16(6).u16(16).raw(ipaddress.IPv6Address('2606:4700::6810:84e5').packed); m.end(at)
m.ptr(Q); m.a(300, '104.16.132.229'); m.opt(1232, True)
write('answer-https-hints', m)

# SVCB alias form + RRSIG covering it
m = M(); m.hdr(0x3232, 0x8180, 1, 2, 0, 0); m.q('_dns.resolver.arpa', 64)
m.ptr(Q); at = m.begin(64, 300); m.u16(0); m.name('dns.example.net'); m.end(at)
m.ptr(Q); at = m.begin(46, 300); m.u16(64).u8(13).u8(2).u32(300).u32(1767225600).u32(1764633600).u16(12345); m.name('resolver.arpa'); m.raw(bytes(64)); m.end(at)
write('answer-svcb-rrsig', m)

# NXDOMAIN with SOA (compressed mname/rname)
m = M(); m.hdr(0x6161, 0x8183, 1, 0, 1, 1); m.q('nope.example.com', 1)
m.ptr(Q + 5); at = m.begin(6, 900); m.labels('ns1'); m.ptr(Q + 5); m.labels('hostmaster'); m.ptr(Q + 5)
for v in (2026120101, 7200, 3600, 1209600, 300): m.u32(v)
m.end(at); m.opt(1232)
write('nxdomain-soa', m)

# MX with glue in additional
m = M(); m.hdr(0x7171, 0x8180, 1, 2, 0, 2); m.q('example.net', 15)
m.ptr(Q); at = m.begin(15, 3600); m.u16(10); mx1 = len(m.b); m.labels('mx1'); m.ptr(Q); m.end(at)
m.ptr(Q); at = m.begin(15, 3600); m.u16(20); mx2 = len(m.b); m.labels('mx2'); m.ptr(Q); m.end(at)
m.ptr(mx1); m.a(3600, '192.0.2.25'); m.ptr(mx2); m.aaaa(3600, '2001:db8::25')
write('answer-mx-glue', m)

# SRV (target uncompressed, as RFC 2782 asks) and NS referral
m = M(); m.hdr(0x8181, 0x8180, 1, 1, 2, 1); m.q('_xmpp-client._tcp.example.org', 33)
m.ptr(Q); at = m.begin(33, 86400); m.u16(5).u16(0).u16(5222); m.name('xmpp.example.org'); m.end(at)
m.ptr(Q + 19); at = m.begin(2, 86400); ns1 = len(m.b); m.labels('ns1'); m.ptr(Q + 19); m.end(at)
m.ptr(Q + 19); at = m.begin(2, 86400); m.labels('ns2'); m.ptr(Q + 19); m.end(at)
m.ptr(ns1); m.a(86400, '198.51.100.53')
write('answer-srv-ns', m)

# PTR
m = M(); m.hdr(0x9191, 0x8580, 1, 1, 0, 0); m.q('14.215.184.93.in-addr.arpa', 12)
m.ptr(Q); at = m.begin(12, 3600); m.name('example.com'); m.end(at)
write('answer-ptr', m)

# TXT + CAA + DNAME + NAPTR
m = M(); m.hdr(0xa1a1, 0x8180, 1, 4, 0, 0); m.q('example.org', 16)
m.ptr(Q); at = m.begin(16, 300); m.u8(21).raw(b'v=spf1 -all include:'); m.u8(3).raw(b'x.y'); m.end(at)
m.ptr(Q); at = m.begin(257, 300); m.u8(0).u8(5).raw(b'issueletsencrypt.org'); m.end(at)
m.ptr(Q); at = m.begin(39, 300); m.name('example.net'); m.end(at)
m.ptr(Q); at = m.begin(35, 300); m.u16(100).u16(10).u8(1).raw(b'S').u8(7).raw(b'SIP+D2U').u8(0); m.name('_sip._udp.example.org'); m.end(at)
write('answer-txt-caa-dname-naptr', m)

# Many A records
m = M(); m.hdr(0xb1b1, 0x8180, 1, 24, 0, 0); m.q('pool.ntp.example', 1)
for i in range(24): m.ptr(Q); m.a(150, '203.0.113.%d' % (i + 1))
write('answer-many-a', m)

# TC set, no answers (the proxy's cue for TCP)
m = M(); m.hdr(0xc1c1, 0x8380, 1, 0, 0, 1); m.q('big.example.com', 16); m.opt(512)
write('answer-tc-empty', m)

# Truncated in the middle of a record's rdata
m = M(); m.hdr(0x1a2b, 0x8180, 1, 2, 0, 0); m.q('example.com', 1); m.ptr(Q); m.a(60, '192.0.2.1'); m.ptr(Q); m.a(60, '192.0.2.2')
write('answer-cut-rdata', m.b[:-2])
write('answer-cut-header', m.b[:7])

# Compression loop and a forward pointer
m = M(); m.hdr(0xd1d1, 0x8180, 1, 1, 0, 0); m.q('example.com', 1); at = len(m.b); m.ptr(at); m.a(60, '192.0.2.1')
write('bad-pointer-self', m)
m = M(); m.hdr(0xd2d2, 0x8180, 1, 1, 0, 0); m.q('example.com', 1); m.labels('x'); m.ptr(len(m.b) + 2); m.labels('y'); m.ptr(Q); m.a(60, '192.0.2.1')
write('bad-pointer-forward', m)

# Error replies as an upstream sends them
m = M(); m.hdr(0xe1e1, 0x8182, 1, 0, 0, 0); m.q('servfail.example', 1)
write('servfail', m)
m = M(); m.hdr(0xe2e2, 0x8185, 1, 0, 0, 0); m.q('refused.example', 28)
write('refused', m)
