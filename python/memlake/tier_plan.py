"""The tiering planner's Python face: which tensors leave the GPU between
their uses, and when each one's restore is issued so that it arrives before
its next use.

The planner itself is C++ (src/plan/latest_start.cpp, through the C ABI's
memlake_plan): the one that `memlake sim` simulates and memlake's own
planner weighs among its candidates. memlake.torch.tier() feeds it the
profile of one training iteration; the tests property-check it on
synthetic profiles. No torch here.

A profile is a list of *positions*: the points of one iteration where a
group of tiered tensors is used (for tier(): a parameter's optimizer step,
run as soon as its gradient is ready), in the order they occur, each with

    t_ms   GPU time of the use, from the first position (measured)
    bytes  bytes that may leave the GPU between uses (the optimizer states)

and optionally `name`. G10's method on that timeline (docs/design/tiering.md):
every tiered tensor is evicted right after its use and restored ahead of its
next use; restores share the host-to-device link in FIFO order, so each
one's latest start is its use time, or the next restore's start if earlier,
less its transfer time; it is issued at the last position at or before that
start. What stays resident is chosen so that resident bytes plus the bytes
in flight at any time (restored ahead, or still leaving) fit the room the
budget leaves; a restore that cannot start in time is a predicted stall.
"""
import ctypes
import math
import re

__all__ = ["plan", "check_plan", "profile_text", "timeline_profile_text", "run_planner", "PlanError"]


class PlanError(ValueError):
    """The budget cannot hold the iteration's irreducible working set."""


def _name(s, i):
    s = re.sub(r"[\s#]+", "_", str(s)) if s is not None else ""
    return s or f"p{i}"


def machine_lines(gpu_bytes, h2d_gbps, d2h_gbps):
    """The KEY=VALUE machine lines of a profile: the GPU bytes for what it moves and the link's
    rates each way (GB/s in, GiB/s as the simulator reads them)."""
    gib = float(1 << 30)
    return [f"gpu_bytes={int(gpu_bytes)}", f"pcie={h2d_gbps * 1e9 / gib:.9g}", f"pcie_out={d2h_gbps * 1e9 / gib:.9g}"]


def profile_text(positions, lead_ms=0.0, name=None, machine=()):
    """The positions as a memlake profile (the text format `memlake sim
    --profile` and `memlake tier profile` read): one persistent tensor per
    position, used by one kernel that lasts until the next position; with
    lead_ms > 0 a first kernel ("forward") runs that long before the first
    position. machine: KEY=VALUE lines for the planner and the simulator."""
    n = len(positions)
    t = [float(p["t_ms"]) for p in positions]
    s = [int(p["bytes"]) for p in positions]
    if any(b < 0 for b in s) or any(t[k] < t[k - 1] for k in range(1, n)) or not all(map(math.isfinite, t)):
        raise ValueError("plan: bytes must be non-negative and times finite and non-decreasing")
    out = ["memlake-profile 1"]
    if name:
        out.append(f"name {_name(name, 0)}")
    out += [f"machine {kv}" for kv in machine]
    out += [f"tensor {_name(p.get('name'), i)} {s[i]} persistent" for i, p in enumerate(positions)]
    if lead_ms > 0 or n == 0:
        out.append(f"kernel forward {max(lead_ms, 0.0) / 1e3:.9g}")
    for i in range(n):
        dt = (t[i + 1] - t[i]) if i + 1 < n else 0.0
        out.append(f"kernel {_name(positions[i].get('name'), i)} {dt / 1e3:.9g} {i}")
    return "\n".join(out) + "\n"


def timeline_profile_text(t, name="tier", machine=()):
    """The whole iteration as a memlake profile, with the plan the run executed as "move" lines
    (`memlake sim --profile` simulates them as the policy "recorded"). `t` (times in ms from the
    forward's start, on one stream, the profile iteration's on-demand waits already taken out):

      boundaries [(counter, t)]   forward module boundaries, counter 1.. in order
      fwd_end    t                the forward's end
      positions  [{"name", "t_ms", "bytes"}]  optimizer steps in backward, in order
      unpacks    [(group, t)]     each saved storage's first read in backward
      groups     [{"nbytes", "first_pack", "last_use"}]  saved storages, index = group
      states_plan {"tiered": [position], "issue": {position: issue position (-1: before the forward)},
                   "disk": [position]: those read back from the disk tier (optional)}
      act_plan   {"evict_at": {counter: [group]}, "restore_order": [group], "window": bytes,
                  "issued": [(group, read group)] (optional: each restore ahead and the read after which the
                  run issued it; without it the window is replayed)}

    Kernels are the intervals between consecutive events: one per forward boundary, the loss
    (forward end to backward's first event), then one per backward event. A position's states
    are a persistent tensor used by its step's kernel; a saved storage is a transient tensor
    used where it is first saved, last used in the forward, and first read in backward. Moves
    replay what tier() does: a tiered state leaves before the kernel after its step and comes
    back where its restore was issued (a state the run read back from the disk tier leaves to
"ssd"); a saved storage leaves before the kernel of its boundary
    and comes back after the backward read that issued it (as the run issued them, else within the
    window)."""
    bounds = sorted(t["boundaries"])
    ev = [("f", c, float(x)) for c, x in bounds] + [("end", 0, float(t["fwd_end"]))]
    bwd = [("p", k, float(q["t_ms"])) for k, q in enumerate(t["positions"])]
    bwd += [("u", g, float(x)) for g, x in t["unpacks"]]
    bwd.sort(key=lambda e: (e[2], 0 if e[0] == "u" else 1))  # a read before the step at the same time
    ev += bwd
    times = [e[2] for e in ev]
    if not all(map(math.isfinite, times)):
        raise ValueError("timeline: times must be finite")
    idx = {(kind, key): k for k, (kind, key, _) in enumerate(ev)}
    K = len(ev)
    groups, positions = t["groups"], t["positions"]
    S = len(positions)
    uses = [[] for _ in range(K)]
    for k in range(S):
        uses[idx[("p", k)]].append(k)
    end_k = idx[("end", 0)]
    for g, q in enumerate(groups):
        ks = {idx.get(("f", q["first_pack"]), end_k), idx.get(("f", q["last_use"]), end_k)}
        if ("u", g) in idx:
            ks.add(idx[("u", g)])
        for k in ks:
            uses[k].append(S + g)
    out = ["memlake-profile 1", f"name {_name(name, 0)}"] + [f"machine {kv}" for kv in machine]
    out += [f"tensor {_name(q.get('name'), k)} {int(q['bytes'])} persistent" for k, q in enumerate(positions)]
    out += [f"tensor act{g} {int(q['nbytes'])} transient" for g, q in enumerate(groups)]
    names = {"f": "f{}", "end": "loss", "p": None, "u": "read{}"}
    for k, (kind, key, x) in enumerate(ev):
        dt = max(0.0, times[k + 1] - x) if k + 1 < K else 0.0
        nm = _name(positions[key].get("name"), key) if kind == "p" else names[kind].format(key)
        out.append(f"kernel {nm} {dt / 1e3:.9g}" + "".join(f" {u}" for u in sorted(set(uses[k]))))
    moves = []
    sp = t.get("states_plan") or {}
    disk = set(sp.get("disk", ()))
    for k in sp.get("tiered", ()):
        after = idx[("p", k)] + 1
        if after < K:
            moves.append(f"move evict {k} {after} {'ssd' if k in disk else 'host'}")
        at = sp.get("issue", {}).get(k, k)
        if at != k:
            moves.append(f"move prefetch {k} {0 if at < 0 else min(idx[('p', at)] + 1, K - 1)}")
    ap = t.get("act_plan") or {}
    for c, gs in ap.get("evict_at", {}).items():
        if ("f", int(c)) in idx:
            for g in gs:
                moves.append(f"move evict {S + g} {idx[('f', int(c))]} host")
    evicted = {g for gs in ap.get("evict_at", {}).values() for g in gs}
    if ap.get("issued") is not None:
        for q, g in ap["issued"]:
            if q in evicted and ("u", g) in idx:
                moves.append(f"move prefetch {S + q} {min(idx[('u', g)] + 1, K - 1)}")
        return "\n".join(out + moves) + "\n"
    queue, pos, ahead, early, read = list(ap.get("restore_order", ())), 0, 0, set(), set()
    for kind, g, _ in bwd:  # the runtime's window, replayed over the backward reads
        if kind != "u":
            continue
        read.add(g)
        if g in early:
            early.discard(g)
            ahead -= groups[g]["nbytes"]
        while pos < len(queue) and ahead < ap.get("window", 0):
            q = queue[pos]
            pos += 1
            if q in evicted and q not in read:
                moves.append(f"move prefetch {S + q} {min(idx[('u', g)] + 1, K - 1)}")
                early.add(q)
                ahead += groups[q]["nbytes"]
    return "\n".join(out + moves) + "\n"


def run_planner(text, machine="", policy="latest-start"):
    """memlake_plan on a profile's text: the report's lines (a list of word lists).
    PlanError when the budget cannot hold the iteration."""
    from . import _check, OutOfMemoryError
    from ._native import lib
    need = ctypes.c_size_t(0)
    buf = ctypes.create_string_buffer(1 << 16)
    for _ in range(2):
        try:
            _check(lib.memlake_plan(text.encode(), machine.encode(), policy.encode(), buf, len(buf),
                                    ctypes.byref(need)))
        except OutOfMemoryError as e:
            raise PlanError(str(e)) from None
        if need.value < len(buf):
            break
        buf = ctypes.create_string_buffer(need.value + 1)
    return [line.split() for line in buf.value.decode().splitlines()]


def plan(positions, room, h2d_gbps=50.0, d2h_gbps=45.0, lead_ms=0.0):
    """positions: [{"t_ms": float, "bytes": int, ...}] in order of use.
    room: bytes the budget leaves for these tensors beyond everything else.
    lead_ms: GPU time before the first position (forward), in which restores
    issued at the end of the previous iteration run.
    Returns {"resident", "tiered", "issue", "start_ms", "window_bytes",
    "resident_bytes", "stall_ms", "link_ms", "predicted_ms"}; positions are
    indices; issue -1: at the end of the previous iteration (before forward).
    Keeps the earliest positions resident (their restores would have the
    least time to hide) and tiers the rest, as few as the room needs."""
    if room < 0:
        raise PlanError(f"the budget leaves {room} bytes for the tiered tensors: even with all of them "
                        "off the GPU the iteration does not fit")
    text = profile_text(positions, lead_ms=lead_ms)
    machine = " ".join(machine_lines(room, h2d_gbps, d2h_gbps) + [f"host_bytes={1 << 62}"])
    lines = run_planner(text, machine)
    shift = 1 if (lead_ms > 0 or not positions) else 0  # kernel index of position 0
    t0 = float(positions[0]["t_ms"]) if positions else 0.0
    out = dict(resident=[], tiered=[], issue={}, start_ms={}, window_bytes=0, resident_bytes=0, stall_ms=0.0,
               link_ms=0.0, predicted_ms=0.0)
    for w in lines:
        if w[0] == "tensor":
            i = int(w[1])
            if w[2] == "resident":
                out["resident"].append(i)
            else:
                out["tiered"].append(i)
                k = int(w[3]) - shift
                if shift == 0 and k == 0 and float(w[4]) < 0:
                    k = -1  # must start before the first position: at the end of the previous iteration
                out["issue"][i] = k
                out["start_ms"][i] = float(w[4]) * 1e3 + t0 - lead_ms
        elif w[0] in ("resident_bytes", "window_bytes"):
            out[w[0]] = int(w[1])
        elif w[0] in ("stall_s", "link_s"):
            out[w[0][:-2] + "_ms"] = float(w[1]) * 1e3
        elif w[0] == "sim":
            out["predicted_ms"] = float(w[2]) * 1e3
    out["resident"].sort()
    out["tiered"].sort()
    return out


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
        assert -1 <= p["issue"][i] <= i, (i, p["issue"][i])
    assert p["resident_bytes"] == sum(positions[i]["bytes"] for i in resident)
    assert p["resident_bytes"] + p["window_bytes"] <= room or not resident
