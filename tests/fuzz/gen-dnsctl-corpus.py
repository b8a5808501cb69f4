#!/usr/bin/env python3
# Seed messages for fuzz-dnsctl (tests/fuzz/corpus/dnsctl): what an honest
# DNS proxy sends its supervisor (struct cordon_dnsctl_msg, include/cordon/net.h),
# each followed by the harness's trailer byte (which allowlist; bit 7: no
# host addresses of its own).
import ipaddress, os, struct, sys

out = sys.argv[1]
READY, ADMIT, ADMITTED, EVENT, STATS, FAILED, SOCKET = range(1, 8)
SOCK_STREAM, SOCK_DGRAM = 1, 2
AF_INET, AF_INET6 = 2, 10


def addr(text, why=0):
    a = ipaddress.ip_address(text)
    fam = AF_INET if a.version == 4 else AF_INET6
    return struct.pack('BB16s', fam, why, a.packed)


def msg(type, token=0, ttl=0, error=0, qtype=0, allowed=0, rcode=0, name=b'', addrs=(),
        refused=(), stats=(0,) * 13):
    b = struct.pack('<IIIiHBBBB2s256s', type, token, ttl, error, qtype, allowed, rcode,
                    len(addrs), len(refused), b'', name)
    b += b''.join(addrs).ljust(16 * 18, b'\0') + b''.join(refused).ljust(16 * 18, b'\0')
    b += struct.pack('<13Q', *stats)
    assert len(b) == 960
    return b


def write(name, b, trailer=b''):
    with open(os.path.join(out, name), 'wb') as f:
        f.write(b + trailer)


write('ready', msg(READY))
write('stats', msg(STATS, stats=tuple(range(13))))
write('failed', msg(FAILED, name=b'DNS proxy: UDP socket 0: Bad file descriptor'))
write('admit-public', msg(ADMIT, 1, 300, qtype=1, name=b'allowed.test',
                          addrs=[addr('93.184.216.7'), addr('2606:2800:220:1::7')]))
write('admit-host', msg(ADMIT, 2, 30, qtype=1, name=b'allowed.test',
                        addrs=[addr('93.184.216.34'), addr('8.8.8.8')]))
write('admit-forged', msg(ADMIT, 3, 3600, qtype=1, name=b'a.wild.test',
                          addrs=[addr(a) for a in ('169.254.169.254', '127.0.0.1', '10.1.2.3',
                                                   '::ffff:169.254.169.254', 'fd00:ec2::254',
                                                   '64:ff9b::a9fe:a9fe', '2002:a9fe:a9fe::',
                                                   '169.254.5.5', '100.100.100.200', '0.0.0.0',
                                                   '255.255.255.255', '224.0.0.1', 'fe80::1',
                                                   '::1', '198.18.0.1', '10.8.0.1')]),
      b'\x01')
write('admit-listed', msg(ADMIT, 4, 60, qtype=1, name=b'allowed.test',
                          addrs=[addr('169.254.169.254'), addr('fd00:ec2::254'),
                                 addr('127.0.0.1')]), b'\x03')
write('admit-cidr', msg(ADMIT, 5, 60, qtype=28, name=b'allowed.test',
                        addrs=[addr('100.64.1.1'), addr('2001:db8::1'), addr('64:ff9b::808:808')]),
      b'\x82')
write('admit-unlisted-name', msg(ADMIT, 6, 60, qtype=1, name=b'denied.test',
                                 addrs=[addr('93.184.216.7')]))
write('admit-escaped', msg(ADMIT, 7, 60, qtype=1, name=b'a\\032b.wild.test',
                           addrs=[addr('93.184.216.7')]))
write('event', msg(EVENT, qtype=1, allowed=1, rcode=0, name=b'allowed.test',
                   addrs=[addr('93.184.216.7')], refused=[addr('127.0.0.1', 2), addr('10.1.1.1', 5)]))
write('event-denied', msg(EVENT, qtype=28, rcode=3, name=b'denied.test'))
write('event-rate-limited', msg(EVENT, rcode=5))
write('admitted', msg(ADMITTED, 1, error=-28, addrs=[addr('93.184.216.7', 14)]))
write('short', msg(READY)[:959])
# Refused since fields a type does not carry must be zero and a FAILED
# reason printable (the check let these through once).
write('stats-with-name', msg(STATS, name=b'x', stats=(1,) * 13))
write('admit-with-error', msg(ADMIT, 8, 60, error=-5, qtype=1, name=b'allowed.test',
                              addrs=[addr('93.184.216.7')]))
write('failed-escape', msg(FAILED, name=b'DNS proxy: \x1b]0;owned\x07'))
# The socket channel's request: upstream 1, TCP; and one for an upstream out of range.
write('socket', msg(SOCKET, 1, qtype=SOCK_STREAM))
write('socket-bad', msg(SOCKET, 9, qtype=SOCK_DGRAM))
# IPv6 forms of the host's own address (93.184.216.34): refused like it.
write('admit-host-forms', msg(ADMIT, 9, 60, qtype=28, name=b'allowed.test',
                              addrs=[addr('::ffff:93.184.216.34'), addr('2002:5db8:d822::1'),
                                     addr('64:ff9b::5db8:d822'), addr('::93.184.216.34')]), b'\x01')
# Datagrams of several messages: EVENTs together (a turn of the proxy's
# loop), and an ADMIT hidden among EVENTs, which the supervisor refuses.
write('events-together', msg(EVENT, qtype=1, allowed=1, name=b'allowed.test') +
      msg(EVENT, qtype=28, rcode=3, name=b'denied.test') + msg(EVENT, rcode=5))
write('events-with-admit', msg(EVENT, qtype=1, rcode=3, name=b'denied.test') +
      msg(ADMIT, 10, 60, qtype=1, name=b'allowed.test', addrs=[addr('93.184.216.7')]))
