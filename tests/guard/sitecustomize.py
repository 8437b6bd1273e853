"""Loaded by every Python process the tests start (PYTHONPATH): no socket may leave loopback."""
import ipaddress
import sys


def _loopback(host):
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False  # a name: nothing is resolved in the tests


LOOKUPS = ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex", "socket.gethostbyaddr")
SENDS = {"socket.connect": 1, "socket.sendto": 1, "socket.sendmsg": 1}   # event -> index of the address


def _guard(event, args):
    if event in LOOKUPS and not _loopback(args[0]):
        raise PermissionError(f"test guard: name lookup of {args[0]!r} refused (loopback literals only)")
    if event == "socket.getnameinfo" and not _loopback(args[0][0]):
        raise PermissionError(f"test guard: reverse lookup of {args[0]!r} refused (loopback only)")
    if event in SENDS:
        address = args[SENDS[event]]
        if isinstance(address, tuple) and not _loopback(address[0]):
            raise PermissionError(f"test guard: connection to {address!r} refused (loopback only)")


sys.addaudithook(_guard)
