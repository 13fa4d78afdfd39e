"""No network for renderer children, enforced by the kernel.

ssrisk refuses remote references before a renderer runs (:mod:`.kustomize_refs`), but a
renderer can reach the network through fields nobody lists (kustomize downloads any file
field that is an ``http(s)://`` URL, generator configurations included), and Go's HTTP
client connects to loopback services directly, whatever the proxy variables say. So on
Linux each renderer child (``helm``, Helm's embedded engine, ``kustomize``, ``kubectl``,
and anything they start) runs under a seccomp filter, installed between ``fork`` and
``exec`` and inherited by every thread and child, that makes ``socket()`` and
``socketpair()`` fail with ``EACCES`` for every address family but ``AF_UNIX`` (IPv4 and
IPv6, and also raw packet sockets, netlink, VSOCK, Bluetooth, CAN and the rest: an allow
list, so a family the kernel adds later is denied too), and ``io_uring_setup``, which could
open sockets without that system call. Local sockets (``AF_UNIX``) stay allowed: they are
not the network, and Go's and Python's runtimes use them.

The filter is built with ``seccompy`` (pure Python, no libseccomp needed; it also kills a
process that calls the kernel through another architecture's system call table, which
could bypass a filter on numbers). Where it is missing or the kernel has no seccomp (not
Linux, an old kernel, a sandbox that forbids filters), :func:`network_guard` is ``None`` and
renderers run without it: then the static refusal, the proxy variables pointing at a closed
port and an empty ``PATH`` (no ``git`` or ``ssh``) are what stops a fetch.
"""

from __future__ import annotations

import errno
import socket
import sys
from collections.abc import Callable
from functools import cache


@cache
def network_guard() -> Callable[[], None] | None:
    """A function to run in a renderer child before ``exec`` that denies it network
    sockets, or ``None`` where the kernel filter cannot be had (see the module)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import seccompy
    except ImportError:
        return None
    try:
        if not seccompy.supported():
            return None
        filt = seccompy.Filter(default=seccompy.Action.ALLOW)
        only_local = [seccompy.ArgCmp(0, seccompy.CmpOp.NE, int(socket.AF_UNIX))]
        for call in ("socket", "socketpair"):
            filt.errno(call, errno.EACCES, args=only_local)
        filt.errno("io_uring_setup", errno.EACCES)
        filt.program  # noqa: B018  (compiled here, in the parent: the child only loads it)
    except Exception:  # an architecture or kernel seccompy does not know
        return None

    def install() -> None:
        filt.load()

    return install
