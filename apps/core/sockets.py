"""Whether an idle connection's socket has anything to read, without waiting.

An idle connection in request/response use has nothing to read: bytes waiting there are the
server's goodbye (a restart, an idle timeout, a kill) or something no command asked for. One
non-blocking poll (a system call) tells. Used before reusing a PostgreSQL connection and a
Redis connection of the throttle (issue 18)."""

from __future__ import annotations

import select


def has_input(sock) -> bool:
    """True when the socket (an object with fileno() or a descriptor) has something to read or
    is closed under us."""
    poller = select.poll()  # not select(): a descriptor may be above 1024
    try:
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True
