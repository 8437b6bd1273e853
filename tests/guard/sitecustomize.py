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


def _guard(event, args):
    if event == "socket.getaddrinfo" and not _loopback(args[0]):
        raise PermissionError(f"test guard: name lookup of {args[0]!r} refused (loopback literals only)")
    if event == "socket.connect":
        address = args[1]
        if isinstance(address, tuple) and not _loopback(address[0]):
            raise PermissionError(f"test guard: connection to {address!r} refused (loopback only)")


sys.addaudithook(_guard)
