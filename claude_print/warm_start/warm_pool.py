"""Warm start for fleets: up to N keepers per key (`warm_pool`, `--warm-pool`), each used
once. Which waiting keepers a run tries, in which order, and which slots a run fills
after it.

A key's keepers sit in numbered slots of the runtime dir: slot 0 is `warm-<key>.sock`
and `.lock` (the one keeper a pool of 1 has), slot i `warm-<key>-<i>.sock` and `.lock`.
A slot is held while a keeper holds its lock (handover.Claim); a keeper gives its slot
up the moment it takes a run, so a run that ends can start the next keeper there. A run
tries every slot that has a socket, whatever its own pool size: the pool size only says
how many a run leaves.
"""

from __future__ import annotations

import contextlib
import os
import socket
from typing import Iterable, List, Sequence, Set

from claude_print.errors import ClaudePrintError
from claude_print.warm_start import handover


def slot_name(key: str, slot: int) -> str:
    """The slot's file name without .sock or .lock."""
    return f"warm-{key}" if slot == 0 else f"warm-{key}-{slot}"


def slot_paths(directory: str, key: str, slot: int) -> handover.Paths:
    return handover.paths_in(directory, slot_name(key, slot))


def listening(names: Iterable[str], key: str) -> List[int]:
    """The slots of `key` that have a socket among `names` (a listing of the runtime
    dir), in slot order."""
    found = set()
    head = f"warm-{key}"
    for name in names:
        if not (name.startswith(head) and name.endswith(".sock")):
            continue
        middle = name[len(head) : -len(".sock")]
        if middle == "":
            found.add(0)
        elif middle[:1] == "-" and middle[1:].isdigit() and middle[1:2] != "0":
            found.add(int(middle[1:]))
    return sorted(found)


def order(slots: Sequence[int], ready: Set[int], start: int) -> List[int]:
    """The order a run tries `slots` in: those whose TUI waits at its box first, then
    those still booting (a run waits for one of them only when none is ready). Each
    group begins at its `start`-th slot (modulo its size) and wraps around: runs that
    start together begin at different slots, and each still tries every one."""
    ordered: List[int] = []
    for group in ([s for s in slots if s in ready], [s for s in slots if s not in ready]):
        if group:
            at = start % len(group)
            ordered += group[at:] + group[:at]
    return ordered


def is_ready(paths: handover.Paths) -> bool:
    """Whether the slot's keeper says its TUI waits at its input box."""
    try:
        with open(paths.lock, "rb") as f:
            return f.read(len(handover.READY) + 1) == handover.READY
    except OSError:
        return False


def choices(directory: str, key: str, start: int) -> List[handover.Paths]:
    """The slots a run tries for `key`, in order (`start`: the run's own number, its pid).
    ClaudePrintError when even slot 0's socket path is too long."""
    slot_paths(directory, key, 0)
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    slots = listening(names, key)
    ready = {s for s in slots if is_ready(slot_paths(directory, key, s))}
    return [slot_paths(directory, key, s) for s in order(slots, ready, start)]


def failures(directory: str, key: str) -> List[str]:
    """What the key's keepers that never got ready said (handover.record_failure)."""
    head = f"warm-{key}"
    found = []
    with contextlib.suppress(OSError):
        for name in sorted(os.listdir(directory)):
            if name.startswith(head) and name.endswith(".failed"):
                with contextlib.suppress(OSError), open(os.path.join(directory, name)) as f:
                    found.append(f.read(handover.FAILURE_MAX).strip())
    return found


def claim_free(directory: str, key: str, size: int) -> List[handover.Claim]:
    """The claims of the slots below `size` that no live keeper holds: a run starts a
    keeper in each. A slot a keeper holds (booting, waiting, or another run's new one
    starting) is left alone; so the pool is topped up to `size`, never more."""
    claims: List[handover.Claim] = []
    for slot in range(size):
        try:
            paths = slot_paths(directory, key, slot)
        except ClaudePrintError:  # a socket path too long: no slot from here on
            if slot == 0:
                raise  # none at all: the caller says why (--warm-up fails with it)
            break
        try:
            claim = handover.Claim.take(paths)
        except OSError:
            for taken in claims:
                taken.release()
            raise
        if claim is not None:
            claims.append(claim)
    return claims


def make_room(directory: str, room: int, own: str = "") -> None:
    """At most `room` keepers of this user's stay: the ones idle longest are stopped (a
    connection that sends no request ends a keeper), other keys' before the pool of
    `own` (the name its slots begin with). Each environment has its own key, so a caller
    that changes a variable on every run would pile them up."""
    try:
        names = [n for n in os.listdir(directory) if n.startswith("warm-") and n.endswith(".sock")]
    except OSError:
        return
    if len(names) <= room:
        return
    aged = []
    for name in names:
        with contextlib.suppress(OSError):
            mine = bool(own) and name.startswith(own)
            aged.append((mine, os.lstat(os.path.join(directory, name)).st_mtime_ns, name))
    aged.sort()
    for _, _, name in aged[: max(0, len(aged) - room)]:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with sock, contextlib.suppress(OSError):
            sock.settimeout(1.0)
            sock.connect(os.path.join(directory, name))
