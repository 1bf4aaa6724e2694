"""Converters between memlake traces and PyTorch memory snapshots.

snapshot_to_trace(snapshot, out_trace, device=0)
    A pickle written by torch.cuda.memory._dump_snapshot() (or the dict of
    torch.cuda.memory._snapshot()) in, a memlake trace (RMM-style CSV,
    gzip'ed when the name ends in .gz) out, for `memlake replay`.
trace_to_snapshot(trace, out_pickle, device=0)
    A memlake trace in, a snapshot pickle out that PyTorch's memory_viz
    (https://pytorch.org/memory_viz, torch.cuda._memory_viz) opens.

Command line:
    python -m memlake.snapshot to-trace SNAPSHOT.pickle OUT.csv.gz
    python -m memlake.snapshot to-snapshot TRACE OUT.pickle

Snapshots are untrusted input: they are read by an unpickler that refuses
every global (a snapshot is plain dicts, lists, strings and numbers), so a
hostile pickle is a ValueError, never code that runs.
"""
import argparse
import bisect
import gzip
import io
import os
import pickle
import sys
import zlib

__all__ = ["load_snapshot", "snapshot_to_trace", "trace_to_snapshot", "read_trace", "main"]

_U64 = (1 << 64) - 1
# The globals a snapshot may need (none for the plain containers torch writes).
_ALLOWED_GLOBALS = {("builtins", "set"): set, ("builtins", "frozenset"): frozenset}
# The protocol memory_viz's JavaScript unpickler reads (it refuses 5).
_PICKLE_PROTOCOL = 4


class _SafeUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        try:
            return _ALLOWED_GLOBALS[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(f"refused global {module}.{name} (a memory snapshot holds only plain "
                                         "dicts, lists, strings and numbers)") from None

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("refused persistent id (not a memory snapshot)")


def _loads(data, what):
    if data[:2] == b"\x1f\x8b":  # a gzip'ed pickle
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise ValueError(f"{what}: not a readable gzip file ({e})") from None
    try:
        obj = _SafeUnpickler(io.BytesIO(data)).load()
    except pickle.UnpicklingError as e:
        raise ValueError(f"{what}: not a PyTorch memory snapshot: {e}") from None
    except (EOFError, ValueError, TypeError, KeyError, IndexError, AttributeError, ImportError, OverflowError,
            MemoryError, RecursionError, UnicodeDecodeError) as e:
        raise ValueError(f"{what}: not a PyTorch memory snapshot (unreadable or truncated pickle: "
                         f"{type(e).__name__}: {e})") from None
    return obj


def load_snapshot(snapshot):
    """A snapshot dict from a path (pickle, optionally gzip'ed), bytes, or a dict (returned as is).
    ValueError when it is not a snapshot; OSError when the file cannot be read."""
    if isinstance(snapshot, dict):
        obj, what = snapshot, "snapshot"
    elif isinstance(snapshot, (bytes, bytearray)):
        obj, what = _loads(bytes(snapshot), "snapshot"), "snapshot"
    else:
        what = os.fspath(snapshot)
        with open(what, "rb") as f:
            obj = _loads(f.read(), what)
    if isinstance(obj, list) and all(isinstance(s, dict) for s in obj):  # torch's legacy format: segments only
        obj = {"segments": obj, "device_traces": []}
    if not isinstance(obj, dict) or not isinstance(obj.get("device_traces", []), list) or \
            not isinstance(obj.get("segments", []), list):
        raise ValueError(f"{what}: not a PyTorch memory snapshot (expected a dict with 'segments' and "
                         "'device_traces' lists, as torch.cuda.memory._snapshot() returns)")
    return obj


def _int(e, key, i, default=None):
    v = e.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
        if default is not None and v is None:
            return default
        raise ValueError(f"trace entry {i} ({e.get('action')!r}): '{key}' is {v!r}, not an integer")
    return int(v)


def _open_trace_out(path):
    """The trace file, created 0600 and never through a symbolic link (like memlake's own writer)."""
    path = os.fspath(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as e:
        raise OSError(e.errno, f"cannot write '{path}': {e.strerror}"
                      + (" (a symbolic link is refused)" if e.errno == 40 else "")) from None
    raw = os.fdopen(fd, "wb")
    if path.endswith(".gz"):
        return gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0), raw
    return raw, None


def snapshot_to_trace(snapshot, out_trace_path, device=0, segments=True, preexisting=True):
    """Writes device `device`'s trace of a PyTorch snapshot as a memlake trace.

    alloc -> allocate; free_completed -> free (free_requested when the trace
    has no free_completed at all); with segments=True, segment_alloc and
    segment_map -> segment_alloc, segment_free and segment_unmap ->
    segment_free (they give `memlake replay` its native figures); oom ->
    "allocate failure" (counted by replay, not replayed); anything else is
    skipped. Sizes, addresses, streams and times (µs) are kept.

    torch keeps only the last N events (_record_memory_history(max_entries=N)):
    with preexisting=True, a block the trace frees but never allocates, and a
    block the final state holds that the trace never touches, were live
    before the trace began; they are allocated at the trace's start (as
    memory_viz draws them), and likewise the segments.

    Returns a dict of counts. ValueError for a snapshot that is not one or
    whose trace contradicts itself (an address allocated twice)."""
    snap = load_snapshot(snapshot)
    traces = snap.get("device_traces") or []
    if not isinstance(device, int) or device < 0:
        raise ValueError(f"device must be a non-negative integer, not {device!r}")
    entries = traces[device] if device < len(traces) else []
    if not isinstance(entries, list):
        raise ValueError(f"device_traces[{device}] is not a list")
    if not entries and not any(isinstance(s, dict) and s.get("device", 0) == device for s in snap.get("segments", [])):
        have = [i for i, t in enumerate(traces) if t]
        raise ValueError(f"the snapshot has no trace for device {device}"
                         + (f" (devices with one: {have})" if have else
                            " (record one with torch.cuda.memory._record_memory_history() before the snapshot)"))
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or not isinstance(e.get("action"), str):
            raise ValueError(f"trace entry {i} is not an event (a dict with an 'action')")
    free_action = "free_completed" if any(e["action"] == "free_completed" for e in entries) else "free_requested"

    out = []  # (action, time, ptr, size, stream)
    live, touched = {}, set()
    live_segs, seg_touched = {}, []
    initial, initial_segs = [], []
    counts = {"allocs": 0, "frees": 0, "segment_events": 0, "ooms": 0, "skipped": 0, "preexisting_blocks": 0,
              "preexisting_segments": 0}
    t = 0
    seg_net = 0
    for i, e in enumerate(entries):
        a = e["action"]
        if "time_us" in e and e["time_us"] is not None:
            t = max(0, _int(e, "time_us", i))
        stream = _int(e, "stream", i, 0) & _U64
        if a == "alloc":
            addr, size = _int(e, "addr", i), _int(e, "size", i)
            if addr in live:
                raise ValueError(f"trace entry {i}: alloc at {addr:#x}, which is already allocated (the trace "
                                 "contradicts itself)")
            live[addr] = size
            touched.add(addr)
            out.append(("allocate", t, addr, size, stream))
            counts["allocs"] += 1
        elif a == free_action:
            addr, size = _int(e, "addr", i), _int(e, "size", i)
            if addr in live:
                del live[addr]
            elif preexisting and addr not in touched:
                initial.append((addr, size, stream))
            else:
                counts["skipped"] += 1
                continue
            touched.add(addr)
            out.append(("free", t, addr, size, stream))
            counts["frees"] += 1
        elif segments and a in ("segment_alloc", "segment_map"):
            addr, size = _int(e, "addr", i), _int(e, "size", i)
            live_segs[addr] = size
            seg_touched.append((addr, size))
            seg_net += size
            out.append(("segment_alloc", t, addr, size, stream))
            counts["segment_events"] += 1
        elif segments and a in ("segment_free", "segment_unmap"):
            addr, size = _int(e, "addr", i), _int(e, "size", i)
            if a == "segment_free" and addr not in live_segs and preexisting:
                initial_segs.append((addr, size, stream))
            live_segs.pop(addr, None)
            seg_touched.append((addr, size))
            seg_net -= size
            out.append(("segment_free", t, addr, size, stream))
            counts["segment_events"] += 1
        elif a == "oom":
            out.append(("allocate failure", t, 0, max(0, _int(e, "size", i, 0)), stream))
            counts["ooms"] += 1
        elif a != "free_requested" and a != "free_completed":
            counts["skipped"] += 1

    if preexisting:
        seg_touched.sort()
        starts = [s for s, _ in seg_touched]

        def seg_seen(addr, size):
            k = bisect.bisect_left(starts, addr + size)
            return any(s < addr + size and addr < s + z for s, z in seg_touched[max(0, k - 64):k])

        for seg in snap.get("segments") or []:
            if not isinstance(seg, dict) or seg.get("device", device) != device:
                continue
            saddr = seg.get("address")
            if not isinstance(saddr, int):
                continue
            sstream = (seg.get("stream") or 0) & _U64
            total = seg.get("total_size")
            if segments and isinstance(total, int) and total > 0 and not seg_seen(saddr, total):
                initial_segs.append((saddr, total, sstream))
            baddr = saddr
            for b in seg.get("blocks") or []:
                if not isinstance(b, dict):
                    continue
                bsize = b.get("size") if isinstance(b.get("size"), int) else 0
                addr = b.get("address", baddr)
                if b.get("state") in ("active_allocated", "active_pending_free") and isinstance(addr, int) and \
                        addr not in touched:
                    req = b.get("requested_size")
                    initial.append((addr, req if isinstance(req, int) and req > 0 else bsize, sstream))
                    touched.add(addr)
                baddr = (addr if isinstance(addr, int) else baddr) + bsize
    t0 = out[0][1] if out else 0
    head = [("segment_alloc", t0, a, s, st) for a, s, st in initial_segs] + \
           [("allocate", t0, a, s, st) for a, s, st in initial]
    counts["preexisting_blocks"], counts["preexisting_segments"] = len(initial), len(initial_segs)
    counts["allocs"] += len(initial)
    counts["segment_events"] += len(initial_segs)

    f, raw = _open_trace_out(out_trace_path)
    try:
        f.write(b"Thread,Time,Action,Pointer,Size,Stream\n")
        buf = []
        for act, tt, addr, size, stream in head + out:
            buf.append(f"0,{tt},{act},{addr & _U64:#x},{size},{stream}\n")
            if len(buf) >= 4096:
                f.write("".join(buf).encode())
                buf.clear()
        f.write("".join(buf).encode())
    finally:
        f.close()
        if raw is not None:
            raw.close()
    counts["events"] = len(head) + len(out)
    return counts


# ---- memlake traces in

_ACTIONS = {"allocate": "allocate", "free": "free", "deallocate": "free", "segment_alloc": "segment_alloc",
            "segment_free": "segment_free", "allocate failure": "allocate failure"}


def _parse_time(s):
    """(µs, clock): HH:MM:SS[.ffffff] (clock time), S.ffffff (seconds), or whole µs."""
    if ":" in s:
        hms, _, frac = s.partition(".")
        h, m, sec = hms.split(":")
        us = ((int(h) * 60 + int(m)) * 60 + int(sec)) * 1000000
        if frac:
            us += int((frac + "000000")[:6])
        return us, True
    if "." in s:
        whole, _, frac = s.partition(".")
        return int(whole) * 1000000 + int((frac + "000000")[:6]), False
    return int(s, 0), False


def read_trace(path):
    """The events of a memlake trace (.csv or .csv.gz): a list of
    (action, time_us, ptr, size, stream, thread), action one of allocate,
    free, segment_alloc, segment_free, "allocate failure". ValueError
    "path:LINE: ..." for a line memlake's reader would refuse."""
    path = os.fspath(path)
    with open(path, "rb") as raw:
        gz = raw.read(2) == b"\x1f\x8b"
    opener = gzip.open if gz else open
    events = []
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace", newline="") as f:
            header = f.readline().strip()
            if not header:
                raise ValueError(f"{path}: empty trace (no header line)")
            cols = [c.strip() for c in header.split(",")]
            try:
                ca, cp, cs = cols.index("Action"), cols.index("Pointer"), cols.index("Size")
            except ValueError:
                raise ValueError(f"{path}:1: header {header[:80]!r} lacks a required column (need Action, "
                                 "Pointer, Size)") from None
            ct = cols.index("Time") if "Time" in cols else -1
            cst = cols.index("Stream") if "Stream" in cols else -1
            cth = cols.index("Thread") if "Thread" in cols else -1
            last_clock = base = 0
            for n, line in enumerate(f, start=2):
                line = line.rstrip("\r\n")
                if not line:
                    continue
                fs = [x.strip() for x in line.split(",")]
                if len(fs) != len(cols):
                    raise ValueError(f"{path}:{n}: expected {len(cols)} fields, found {len(fs)}")
                act = _ACTIONS.get(fs[ca])
                if act is None:
                    raise ValueError(f"{path}:{n}: unknown action {fs[ca][:80]!r}")
                try:
                    tus, clock = _parse_time(fs[ct]) if ct >= 0 else (0, False)
                    if clock:
                        if tus + 43200 * 1000000 < last_clock:
                            base += 86400 * 1000000
                        last_clock = tus
                        tus += base

                    def ident(s):
                        return int(s, 16) if clock else int(s, 0)
                    ptr, size = ident(fs[cp]), int(fs[cs])
                    stream = ident(fs[cst]) if cst >= 0 else 0
                    thread = int(fs[cth]) if cth >= 0 else 0
                except ValueError:
                    raise ValueError(f"{path}:{n}: bad number in line {line[:80]!r}") from None
                if min(ptr, size, stream, tus, thread) < 0:
                    raise ValueError(f"{path}:{n}: negative number in line {line[:80]!r}")
                events.append((act, tus, ptr, size, stream, thread))
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise ValueError(f"{path}: the gzip stream is truncated or corrupt ({e})") from None
    return events


def _segment_dict(device, addr, total, stream, blocks):
    allocated = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
    return {"device": device, "address": addr, "total_size": total, "allocated_size": allocated,
            "active_size": allocated, "requested_size": sum(b["requested_size"] for b in blocks),
            "stream": stream, "segment_type": "large" if total > (1 << 20) else "small",
            "segment_pool_id": (0, 0), "is_expandable": False, "frames": [], "blocks": blocks}


def _real_segments(events):
    """The end state's segments from the trace's own segment events, or None
    when those events do not hold every block at every moment (then each
    block gets a segment of its own)."""
    starts, segs, live, owner = [], {}, {}, {}
    have = False
    for act, _t, ptr, size, _stream, _th in events:
        if act == "segment_alloc":
            have = True
            k = bisect.bisect_right(starts, ptr)
            if (k and starts[k - 1] + segs[starts[k - 1]][0] > ptr) or (k < len(starts) and starts[k] < ptr + size):
                return None  # overlaps a live segment
            starts.insert(k, ptr)
            segs[ptr] = [size, _stream, 0]
        elif act == "segment_free":
            if ptr not in segs or segs[ptr][2]:
                return None  # unknown, or still holds blocks
            del segs[ptr]
            starts.pop(bisect.bisect_left(starts, ptr))
        elif act in ("allocate", "free"):
            if act == "free" and ptr not in live:
                return None
            if act == "allocate":
                if size == 0:
                    continue
                k = bisect.bisect_right(starts, ptr)
                if not k or starts[k - 1] + segs[starts[k - 1]][0] < ptr + size:
                    return None
                live[ptr] = size
                owner[ptr] = starts[k - 1]
                segs[starts[k - 1]][2] += 1
            else:
                del live[ptr]
                segs[owner.pop(ptr)][2] -= 1
    if not have:
        return None
    return segs, live, owner


def trace_to_snapshot(trace_path, out_pickle_path, device=0):
    """Writes a memlake trace as a PyTorch memory snapshot pickle (device
    `device`): alloc, free_requested + free_completed, segment and oom
    events with empty frames, and the segments live at the end.

    When the trace carries its recording allocator's segment events and they
    hold every block throughout, those are the segments; otherwise each
    block gets a segment of its own (memory_viz's segment views then show
    the blocks, not a caching allocator's reservations). Returns the
    snapshot dict."""
    if not isinstance(device, int) or device < 0:
        raise ValueError(f"device must be a non-negative integer, not {device!r}")
    events = read_trace(trace_path)
    real = _real_segments(events)
    tr = []
    live = {}

    def ev(action, t, addr, size, stream):
        return {"action": action, "addr": addr, "size": size, "stream": stream, "time_us": t, "frames": []}

    for act, t, ptr, size, stream, _th in events:
        if act == "allocate":
            if size == 0:
                continue  # no block (torch allocates nothing for 0 bytes)
            if ptr in live:
                raise ValueError(f"{os.fspath(trace_path)}: pointer {ptr:#x} allocated twice without a free")
            live[ptr] = (size, stream)
            if real is None:
                tr.append(ev("segment_alloc", t, ptr, size, stream))
            tr.append(ev("alloc", t, ptr, size, stream))
        elif act == "free":
            if ptr in live:
                size, stream = live.pop(ptr)
            elif size == 0:
                continue
            elif real is not None:
                continue  # (not reached: _real_segments refuses unmatched frees)
            tr.append(ev("free_requested", t, ptr, size, stream))
            tr.append(ev("free_completed", t, ptr, size, stream))
            if real is None:
                tr.append(ev("segment_free", t, ptr, size, stream))
        elif act in ("segment_alloc", "segment_free"):
            if real is not None:
                tr.append(ev(act, t, ptr, size, stream))
        elif act == "allocate failure":
            tr.append({"action": "oom", "device_free": 0, "size": size, "stream": stream, "time_us": t, "frames": []})

    segments = []
    if real is None:
        for addr in sorted(live):
            size, stream = live[addr]
            segments.append(_segment_dict(device, addr, size, stream, [
                {"address": addr, "size": size, "requested_size": size, "state": "active_allocated", "frames": []}]))
    else:
        segs, blive, owner = real
        by_seg = {}
        for addr, size in blive.items():
            by_seg.setdefault(owner[addr], []).append((addr, size))
        for saddr in sorted(segs):
            total, stream, _n = segs[saddr]
            blocks, cur = [], saddr
            for addr, size in sorted(by_seg.get(saddr, [])):
                if addr < cur:  # overlapping blocks: not a caching allocator's state; keep the view drawable
                    continue
                if addr > cur:
                    blocks.append({"address": cur, "size": addr - cur, "requested_size": 0, "state": "inactive",
                                   "frames": []})
                blocks.append({"address": addr, "size": size, "requested_size": size, "state": "active_allocated",
                               "frames": []})
                cur = addr + size
            if cur < saddr + total:
                blocks.append({"address": cur, "size": saddr + total - cur, "requested_size": 0,
                               "state": "inactive", "frames": []})
            segments.append(_segment_dict(device, saddr, total, stream, blocks))
    snap = {"segments": segments, "device_traces": [[] for _ in range(device)] + [tr],
            "allocator_settings": {}, "external_annotations": []}
    path = os.fspath(out_pickle_path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    with os.fdopen(os.open(path, flags, 0o600), "wb") as f:
        pickle.dump(snap, f, protocol=_PICKLE_PROTOCOL)
    return snap


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m memlake.snapshot",
                                description="Convert between memlake traces and PyTorch memory snapshots.")
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("to-trace", help="PyTorch snapshot pickle -> memlake trace (.csv or .csv.gz)")
    a.add_argument("snapshot")
    a.add_argument("out")
    a.add_argument("--device", type=int, default=0, help="device whose trace to convert (default 0)")
    a.add_argument("--no-segments", action="store_true", help="leave out segment events (native's reservations)")
    a.add_argument("--no-preexisting", action="store_true",
                   help="do not allocate, at the start, blocks live before the trace began")
    b = sub.add_parser("to-snapshot", help="memlake trace -> PyTorch snapshot pickle (for memory_viz)")
    b.add_argument("trace")
    b.add_argument("out")
    b.add_argument("--device", type=int, default=0, help="device number in the snapshot (default 0)")
    args = p.parse_args(argv)
    try:
        if args.cmd == "to-trace":
            c = snapshot_to_trace(args.snapshot, args.out, device=args.device, segments=not args.no_segments,
                                  preexisting=not args.no_preexisting)
            print(f"{args.out}: {c['events']} events ({c['allocs']} allocs, {c['frees']} frees, "
                  f"{c['segment_events']} segment events, {c['ooms']} ooms; {c['preexisting_blocks']} blocks "
                  f"live before the trace began)")
        else:
            s = trace_to_snapshot(args.trace, args.out, device=args.device)
            print(f"{args.out}: {len(s['device_traces'][-1])} events, {len(s['segments'])} segments at the end; "
                  "open it at https://pytorch.org/memory_viz")
    except (ValueError, OSError) as e:
        print(f"memlake.snapshot: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
