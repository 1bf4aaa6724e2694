"""What the GPU did during one profiled iteration, from a Kineto (torch.profiler) Chrome trace:
how long the compute stream ran kernels, how long it sat idle while copies were in flight (waiting
for them, or for memory they free) or while nothing ran (waiting for the host), and what each copy
direction moved at what rate. The benchmarks use it to say where a tiered step's time goes
(`tier_finetune.py --kineto-step N`).

    summary = timeline_summary(json.load(open("trace.json")))
"""


def _union(intervals):
    """Sorted, merged (start, end) intervals."""
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def _length(intervals):
    return sum(e - s for s, e in intervals)


def _intersect(a, b):
    """Intersection of two merged interval lists."""
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < e:
            out.append([s, e])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def _subtract(a, b):
    """a minus b, both merged interval lists."""
    out, j = [], 0
    for s, e in a:
        cur = s
        while j < len(b) and b[j][1] <= cur:
            j += 1
        k = j
        while k < len(b) and b[k][0] < e:
            if b[k][0] > cur:
                out.append([cur, b[k][0]])
            cur = max(cur, b[k][1])
            k += 1
        if cur < e:
            out.append([cur, e])
    return out


def _direction(name):
    if "HtoD" in name:
        return "h2d"
    if "DtoH" in name:
        return "d2h"
    return "other"


def timeline_summary(trace):
    """Seconds and bytes of one profiled span. `trace`: the Chrome trace dict (or its event list)
    torch.profiler exports. The compute stream is the one with the most kernel time."""
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
    kernels, copies = {}, {"h2d": [], "d2h": [], "other": []}
    nbytes = {"h2d": 0, "d2h": 0, "other": 0}
    count = {"h2d": 0, "d2h": 0, "other": 0}
    for ev in events:
        if ev.get("ph") != "X" or "dur" not in ev:
            continue
        cat = ev.get("cat", "")
        iv = (float(ev["ts"]), float(ev["ts"]) + float(ev["dur"]))
        args = ev.get("args") or {}
        if cat == "kernel":
            kernels.setdefault(args.get("stream", ev.get("tid")), []).append(iv)
        elif cat == "gpu_memcpy":
            d = _direction(ev.get("name", ""))
            copies[d].append(iv)
            nbytes[d] += int(args.get("bytes", 0) or 0)
            count[d] += 1
    if not kernels:
        return None
    compute = max(kernels, key=lambda s: _length(_union(kernels[s])))
    busy = _union(kernels[compute])
    everything = [iv for ivs in kernels.values() for iv in ivs] + [iv for ivs in copies.values() for iv in ivs]
    start, end = min(s for s, _ in everything), max(e for _, e in everything)
    idle = _subtract([[start, end]], busy)
    h2d, d2h = _union(copies["h2d"]), _union(copies["d2h"])
    any_copy = _union(h2d + d2h)
    us = 1e-6
    out = dict(
        span_s=(end - start) * us,
        compute_stream=compute,
        kernels=len(kernels[compute]),
        kernel_busy_s=_length(busy) * us,
        idle_s=_length(idle) * us,
        # The compute stream idle while a copy ran: it waited for a restore (or for memory an
        # eviction frees), or the host was late and a copy happened to run meanwhile.
        idle_copy_h2d_s=_length(_intersect(idle, h2d)) * us,
        idle_copy_d2h_s=_length(_intersect(idle, _subtract(d2h, h2d))) * us,
        idle_no_copy_s=_length(_subtract(idle, any_copy)) * us,
        other_stream_kernel_s=sum(_length(_union(v)) for s, v in kernels.items() if s != compute) * us,
        both_directions_s=_length(_intersect(h2d, d2h)) * us,
    )
    for d in ("h2d", "d2h"):
        t = _length(_union(copies[d])) * us
        out[d] = dict(copies=count[d], bytes=nbytes[d], busy_s=t, GBps=(nbytes[d] / t / 1e9) if t else 0.0)
    return out


def format_summary(s):
    """One paragraph of text for a benchmark's output."""
    if not s:
        return "  GPU timeline: no kernels recorded"
    gb = 1e9
    return (f"  GPU timeline of the profiled iteration ({s['span_s'] * 1e3:.1f} ms): compute stream ran "
            f"{s['kernels']} kernels for {s['kernel_busy_s'] * 1e3:.1f} ms, idle {s['idle_s'] * 1e3:.1f} ms "
            f"(with a host-to-device copy running {s['idle_copy_h2d_s'] * 1e3:.1f}, device-to-host only "
            f"{s['idle_copy_d2h_s'] * 1e3:.1f}, no copy {s['idle_no_copy_s'] * 1e3:.1f}); "
            f"host->GPU {s['h2d']['bytes'] / gb:.2f} GB in {s['h2d']['copies']} copies, busy "
            f"{s['h2d']['busy_s'] * 1e3:.1f} ms ({s['h2d']['GBps']:.1f} GB/s while busy); GPU->host "
            f"{s['d2h']['bytes'] / gb:.2f} GB in {s['d2h']['copies']} copies, busy {s['d2h']['busy_s'] * 1e3:.1f} ms "
            f"({s['d2h']['GBps']:.1f} GB/s); both at once {s['both_directions_s'] * 1e3:.1f} ms; "
            f"kernels on other streams {s['other_stream_kernel_s'] * 1e3:.1f} ms")
