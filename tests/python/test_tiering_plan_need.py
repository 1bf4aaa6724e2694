"""tier()'s budget check before the states' plan (memlake.tiering.plan_need), on the CPU: the profile
iteration's peak is the need unless the cap held it down; the activation plan's forward end can
still refuse a budget. The GPU path that calls it: tests/python/test_tiering_gpu.py."""
import pytest

pytest.importorskip("torch", reason="PyTorch not installed")

from memlake.tiering import _act_transient_comment, plan_need  # noqa: E402

G = 1 << 30
M = 1 << 20


def act(nonact=2 * G, transient=800 * M, must_keep=0, kept=0):
    return {"nonact_bytes": nonact, "transient_bytes": transient, "must_keep_bytes": must_keep, "kept_bytes": kept}


def test_a_peak_below_the_cap_is_the_need():
    assert plan_need(12 * G, 20 * G, 640 * M) == (12 * G, False)
    assert plan_need(12 * G, 20 * G, 640 * M, act(), 256 * M) == (12 * G, False)  # the larger of the two
    assert plan_need(1 * G, 20 * G, 640 * M, act(), 256 * M) == (2 * G + 800 * M + 256 * M, False)


def test_a_peak_into_the_margin_counts_the_forward_end_and_leaves_at_most_what_the_profile_showed():
    # ResNet-152 at batch 256 under 20 GiB (results §24c, the H200's run): the profile's peak went
    # into the margin; the activation plan's forward end leaves 67 MiB, a position needs 18 MiB
    budget, margin, window, position = 21474836480, 671088640, 671088640, 18874368
    plan = act(nonact=1726638080, transient=822083584, kept=17513316352)
    need, at_cap = plan_need(21424504832, budget, margin, plan, window, min_room=position)
    assert at_cap and budget - margin - need == position  # room: what the profile iteration had, no more
    # a forward end that leaves less than that: its own count
    big = act(nonact=1726638080, transient=822083584, kept=17513316352 + 60 * M)
    need, _ = plan_need(21424504832, budget, margin, big, window, min_room=position)
    assert need == 1726638080 + 822083584 + 17513316352 + 60 * M + window
    # without an activation plan: the room the profile iteration had for one position's states
    need, at_cap = plan_need(budget - 30 * M, budget, margin, min_room=position)
    assert at_cap and need == budget - margin - position


def test_the_room_never_grows_as_the_peak_grows():
    budget, margin, window, position = 20 * G, 640 * M, 256 * M, 18 * M
    plan = act(nonact=14 * G, transient=G)
    rooms = [budget - margin - plan_need(peak, budget, margin, plan, window, position)[0]
             for peak in range(12 * G, budget + 1, 64 * M)]
    assert all(a >= b for a, b in zip(rooms, rooms[1:])), rooms


def test_the_forward_ends_own_count_still_refuses():
    budget, margin = 4 * G, 256 * M
    need, at_cap = plan_need(budget, budget, margin, act(nonact=3 * G, transient=G), 256 * M)
    assert at_cap and need > budget - margin  # room < 0: tier() raises PlanError naming these parts


def test_a_forward_middle_that_holds_more_than_the_end_is_the_need():
    # The activation plan's per-boundary check: an interval's measured transient beside what the
    # plan has on the GPU there (fwd_peak_bytes) can pass the forward end's count.
    end = 2 * G + 800 * M + 256 * M
    assert plan_need(1 * G, 20 * G, 640 * M, dict(act(), fwd_peak_bytes=5 * G), 256 * M) == (5 * G, False)
    assert plan_need(1 * G, 20 * G, 640 * M, dict(act(), fwd_peak_bytes=G), 256 * M) == (end, False)
    assert plan_need(1 * G, 20 * G, 640 * M, dict(act(), fwd_peak_bytes=None), 256 * M) == (end, False)


def test_the_profile_file_says_what_transients_the_plan_counted():
    ap = dict(act(), transient_floor_bytes=800 * M, transient_by_boundary=[0, 5, 0, 900 * M], transient_at=3,
              fit_evicted_bytes=7, over_bytes=0, fwd_peak_bytes=3 * G)
    text = _act_transient_comment(ap)
    assert text.endswith("\n") and all(line.startswith("# ") for line in text.splitlines())
    assert "largest measured at f3" in text and f"f1:5 f3:{900 * M}\n" in text and "f0:" not in text
    assert "not measured" in _act_transient_comment(dict(act(), transient_by_boundary=None))
    assert _act_transient_comment(None) == "" and _act_transient_comment(dict(act(), nonact_bytes=None)) == ""


def test_no_budget_takes_the_peak():
    assert plan_need(30 * G, 0, 0) == (30 * G, False)
