"""bench/_gputrace.py: where a profiled iteration's GPU time went, from a Kineto Chrome trace."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))

import _gputrace  # noqa: E402


def k(ts, dur, stream=7):
    return dict(ph="X", cat="kernel", name="k", ts=ts, dur=dur, args=dict(stream=stream))


def cp(ts, dur, name, nbytes, stream=20):
    return dict(ph="X", cat="gpu_memcpy", name=name, ts=ts, dur=dur, args=dict(stream=stream, bytes=nbytes))


def test_idle_time_is_split_by_what_the_copy_engines_did():
    h2d, d2h = "Memcpy HtoD (Pinned -> Device)", "Memcpy DtoH (Device -> Pinned)"
    ev = [k(0, 100), k(50, 30), k(300, 100), k(600, 100),   # compute: busy 0-100, 300-400, 600-700
          k(120, 10, stream=9),                              # a side stream's kernel
          cp(100, 150, h2d, 3_000_000),                      # idle 100-300: h2d 100-250, then nothing 250-300
          cp(400, 300, d2h, 6_000_000, stream=21),           # idle 400-600: d2h only for 400-500 ...
          cp(500, 50, h2d, 1_000_000),                       # ... h2d 500-550 (both directions at once)
          dict(ph="i", cat="kernel", ts=5)]                  # not a complete event: ignored
    s = _gputrace.timeline_summary(dict(traceEvents=ev))
    us = 1e-6
    assert s["compute_stream"] == 7 and s["kernels"] == 4
    assert abs(s["span_s"] - 700 * us) < 1e-12
    assert abs(s["kernel_busy_s"] - 300 * us) < 1e-12
    assert abs(s["idle_s"] - 400 * us) < 1e-12
    assert abs(s["idle_copy_h2d_s"] - 200 * us) < 1e-12     # 100-250 and 500-550
    assert abs(s["idle_copy_d2h_s"] - 150 * us) < 1e-12     # 400-500 and 550-600
    assert abs(s["idle_no_copy_s"] - 50 * us) < 1e-12       # 250-300
    assert abs(s["both_directions_s"] - 50 * us) < 1e-12
    assert abs(s["other_stream_kernel_s"] - 10 * us) < 1e-12
    assert s["h2d"]["copies"] == 2 and s["h2d"]["bytes"] == 4_000_000
    assert abs(s["h2d"]["GBps"] - 4_000_000 / (200 * us) / 1e9) < 1e-9
    assert s["d2h"]["bytes"] == 6_000_000 and abs(s["d2h"]["busy_s"] - 300 * us) < 1e-12
    text = _gputrace.format_summary(s)
    assert "idle 0.4 ms" in text and "host->GPU 0.00 GB in 2 copies" in text


def test_no_kernels_is_no_summary():
    assert _gputrace.timeline_summary(dict(traceEvents=[])) is None
    assert "no kernels" in _gputrace.format_summary(None)


def test_interval_helpers_merge_intersect_and_subtract():
    u = _gputrace._union([(5, 7), (0, 2), (1, 3), (7, 8)])
    assert u == [[0, 3], [5, 8]]
    assert _gputrace._intersect(u, [[2, 6]]) == [[2, 3], [5, 6]]
    assert _gputrace._subtract([[0, 10]], u) == [[3, 5], [8, 10]]
    assert _gputrace._subtract(u, [[-1, 20]]) == []
