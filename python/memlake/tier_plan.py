"""The tiering planner: which tensors leave the GPU between their uses, and
when each one's restore is issued so that it arrives before its next use.

Pure Python, no torch: memlake.torch.tier() feeds it the profile of one
training iteration, and the tests property-check it on synthetic profiles.

A profile is a list of *positions*: the points of one iteration where a
group of tiered tensors is used (for tier(): a parameter's optimizer step,
run as soon as its gradient is ready), in the order they occur, each with

    t_ms   GPU time of the use, from the first position (measured)
    bytes  bytes that may leave the GPU between uses (the optimizer states)

G10's method on that timeline (docs/design/tiering.md): every tiered
tensor is evicted right after its use and restored ahead of its next use;
restores share the host-to-device link in FIFO order, so each one's latest
start is its use time, or the next restore's start if earlier, less its
transfer time; it is issued at the last position at or before that start.
What stays resident is chosen so that resident bytes plus the bytes in
flight at any time (restored ahead, or still leaving) fit the room the
budget leaves; a restore that cannot start in time is a predicted stall.
"""

import bisect
import math

__all__ = ["plan", "check_plan", "PlanError"]


class PlanError(ValueError):
    """The budget cannot hold the iteration's irreducible working set."""


def _schedule(t, s, tiered, h2d_ms_per_byte):
    """Latest starts and issue positions of the tiered positions' restores
    (FIFO on one link), and the predicted stall in ms."""
    start, issue = {}, {}
    latest = math.inf
    stall = 0.0
    for i in reversed(tiered):
        finish = min(t[i], latest)
        st = finish - s[i] * h2d_ms_per_byte
        latest = st
        start[i] = st
        # The last position before i whose time is at or before the start.
        issue[i] = max(0, bisect.bisect_right(t, st, 0, i) - 1)
        if st < t[0]:
            stall = max(stall, t[0] - st)
    return start, issue, stall


def _window(t, s, tiered, issue, d2h_ms_per_byte):
    """Most bytes of tiered positions on the GPU at once beyond their use:
    restored ahead (from their issue to their use) or leaving (from their
    use until their eviction's copy is done)."""
    events = []
    for i in tiered:
        events.append((t[issue[i]], s[i]))
        events.append((t[i] + s[i] * d2h_ms_per_byte, -s[i]))
    events.sort(key=lambda e: (e[0], e[1]))  # frees before arrivals at the same time
    cur = peak = 0
    for _, d in events:
        cur += d
        peak = max(peak, cur)
    return peak


def plan(positions, room, h2d_gbps=50.0, d2h_gbps=45.0):
    """positions: [{"t_ms": float, "bytes": int, ...}] in order of use.
    room: bytes the budget leaves for these tensors beyond everything else.
    Returns {"resident", "tiered", "issue", "start_ms", "window_bytes",
    "resident_bytes", "stall_ms", "link_ms"}; positions are indices.
    Keeps the earliest positions resident (their restores would have the
    least time to hide) and tiers the rest, as few as the room needs."""
    n = len(positions)
    if room < 0:
        raise PlanError(f"the budget leaves {room} bytes for the tiered tensors: even with all of them "
                        "off the GPU the iteration does not fit")
    t = [float(p["t_ms"]) for p in positions]
    s = [int(p["bytes"]) for p in positions]
    if any(b < 0 for b in s) or any(t[k] < t[k - 1] for k in range(1, n)):
        raise ValueError("plan: bytes must be non-negative and times non-decreasing")
    h2d = 1e3 / (h2d_gbps * 1e9)  # ms per byte
    d2h = 1e3 / (d2h_gbps * 1e9)
    prefix = [0]
    for b in s:
        prefix.append(prefix[-1] + b)
    best = None
    for k in range(n, -1, -1):  # keep positions [0, k) resident
        resident = prefix[k]
        if resident > room:
            continue
        tiered = [i for i in range(k, n) if s[i] > 0]
        start, issue, stall = _schedule(t, s, tiered, h2d)
        window = _window(t, s, tiered, issue, d2h)
        if resident + window <= room:
            best = dict(resident=list(range(k)), tiered=tiered, issue=issue, start_ms=start, window_bytes=window,
                        resident_bytes=resident, stall_ms=stall)
            break
    if best is None:
        # Even the all-tiered plan's window does not fit: restore each one
        # only at its own use (no lookahead), which needs one at a time.
        tiered = [i for i in range(n) if s[i] > 0]
        one = max(s) if s else 0
        if one > room:
            big = max(range(n), key=lambda i: s[i])
            raise PlanError(f"position {big} ({positions[big].get('name', big)}) needs {s[big]} bytes on the GPU "
                            f"at its use, more than the {room} bytes the budget leaves")
        issue = {i: i for i in tiered}
        best = dict(resident=[], tiered=tiered, issue=issue, start_ms={i: t[i] for i in tiered}, window_bytes=one,
                    resident_bytes=0,
                    stall_ms=sum(s[i] * h2d for i in tiered))
    best["link_ms"] = sum(s[i] for i in best["tiered"]) * max(h2d, d2h)
    return best


def check_plan(positions, p, room):
    """The plan's invariants (tests and debug runs): every tiered position's
    restore is issued at or before its use; resident bytes plus the window
    fit the room; resident and tiered partition the positions with bytes."""
    n = len(positions)
    tiered, resident = set(p["tiered"]), set(p["resident"])
    assert not tiered & resident
    for i in range(n):
        if positions[i]["bytes"] > 0:
            assert i in tiered or i in resident, i
    for i in tiered:
        assert 0 <= p["issue"][i] <= i, (i, p["issue"][i])
    assert p["resident_bytes"] == sum(positions[i]["bytes"] for i in resident)
    assert p["resident_bytes"] + p["window_bytes"] <= room or not resident
