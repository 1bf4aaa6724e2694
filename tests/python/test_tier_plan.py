"""The tiering planner on synthetic profiles (no torch): every tiered
tensor's restore is issued before its use, the budget is never exceeded,
and a budget below the working set is a clear error."""
import json
import os
import random
import subprocess

import pytest

from memlake.tier_plan import PlanError, check_plan, plan


def _profile(rng, n):
    t, out = 0.0, []
    for i in range(n):
        t += rng.uniform(0.05, 5.0)
        out.append({"t_ms": t, "bytes": rng.choice([0, 1 << 20, 50 << 20, 300 << 20, 1 << 30]), "name": f"p{i}"})
    return out


@pytest.mark.parametrize("seed", range(40))
def test_random_profiles_keep_their_invariants(seed):
    rng = random.Random(seed)
    pos = _profile(rng, rng.randint(1, 120))
    total = sum(p["bytes"] for p in pos)
    biggest = max(p["bytes"] for p in pos)
    room = rng.randint(biggest, max(biggest, total + (1 << 30)))
    p = plan(pos, room, h2d_gbps=rng.uniform(5, 60), d2h_gbps=rng.uniform(5, 60))
    check_plan(pos, p, room)
    if total <= room:
        assert p["tiered"] == [] or p["resident_bytes"] + p["window_bytes"] <= room


def test_everything_resident_when_it_fits():
    pos = [{"t_ms": i, "bytes": 1 << 20} for i in range(10)]
    p = plan(pos, 100 << 20)
    assert p["tiered"] == [] and p["stall_ms"] == 0


def test_restores_are_issued_early_enough_to_hide():
    # 20 positions 10 ms apart, 256 MiB each; room for 6: the link (50 GB/s)
    # moves one in about 5.4 ms, so each restore is issued one position ahead.
    pos = [{"t_ms": 10.0 * i, "bytes": 256 << 20} for i in range(20)]
    room = 6 * (256 << 20)
    p = plan(pos, room, h2d_gbps=50, d2h_gbps=50)
    check_plan(pos, p, room)
    assert p["stall_ms"] == 0
    assert all(p["issue"][i] == i - 1 for i in p["tiered"])
    assert len(p["resident"]) >= 1


def test_a_slow_link_predicts_a_stall_or_issues_further_ahead():
    pos = [{"t_ms": 1.0 * i, "bytes": 256 << 20} for i in range(20)]
    room = 8 * (256 << 20)
    p = plan(pos, room, h2d_gbps=5, d2h_gbps=5)
    check_plan(pos, p, room)
    assert p["stall_ms"] > 0 or any(p["issue"][i] < i - 1 for i in p["tiered"])


def test_a_budget_below_the_working_set_is_a_clear_error():
    pos = [{"t_ms": 0, "bytes": 1 << 30, "name": "lm_head.weight"}, {"t_ms": 1, "bytes": 10}]
    with pytest.raises(PlanError, match="lm_head.weight"):
        plan(pos, 1 << 20)
    with pytest.raises(PlanError):
        plan(pos, -1)


def test_bad_profiles_are_refused():
    with pytest.raises(ValueError):
        plan([{"t_ms": 2, "bytes": 1}, {"t_ms": 1, "bytes": 1}], 10)
    with pytest.raises(ValueError):
        plan([{"t_ms": 0, "bytes": -1}], 10)


def _timeline(n_blocks=6, act_bytes=256 << 20, state_bytes=128 << 20):
    """A small training iteration as tier() records it: a forward of n_blocks boundaries (10 ms
    each), each saving one storage; backward reads them in reverse (20 ms apart) and steps one
    parameter after each read."""
    bounds = [(c, 10.0 * (c - 1)) for c in range(1, n_blocks + 1)]
    fwd_end = 10.0 * n_blocks
    unpacks, positions, t = [], [], fwd_end + 5.0
    for g in reversed(range(n_blocks)):
        unpacks.append((g, t))
        positions.append({"name": f"w{g}", "t_ms": t + 10.0, "bytes": state_bytes})
        t += 20.0
    groups = [{"nbytes": act_bytes, "first_pack": g + 1, "last_use": g + 2} for g in range(n_blocks)]
    return dict(boundaries=bounds, fwd_end=fwd_end, positions=positions, unpacks=unpacks, groups=groups,
                states_plan={"tiered": [1, 2], "issue": {1: 0, 2: -1}},
                act_plan={"evict_at": {3: [0], 4: [1]}, "restore_order": [1, 0], "window": 512 << 20})


def _replay(text, tmp_path):
    """`memlake sim --profile FILE --policy recorded --json` on the text: its result, or None
    where the command was not built beside the library."""
    cli = os.path.join(os.path.dirname(os.environ.get("MEMLAKE_LIBRARY", "")), "memlake")
    if not os.path.exists(cli):
        return None
    f = tmp_path / "p.txt"
    f.write_text(text)
    out = subprocess.run([cli, "sim", "--profile", str(f), "--policy", "recorded", "--json"], capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)["results"][0]


def test_the_timeline_profile_reads_and_replays_the_runs_moves(tmp_path):
    from memlake.tier_plan import run_planner, timeline_profile_text
    text = timeline_profile_text(_timeline(), machine=["gpu_bytes=4294967296", "pcie=46.5"])
    lines = text.splitlines()
    kernels = [x for x in lines if x.startswith("kernel ")]
    assert len(kernels) == 6 + 1 + 12  # boundaries, the loss, 6 reads and 6 steps
    assert [x.split()[1] for x in kernels[:7]] == ["f1", "f2", "f3", "f4", "f5", "f6", "loss"]
    moves = [x.split() for x in lines if x.startswith("move ")]
    # States: positions 1 and 2 leave after their steps; 1 comes back after position 0's step, 2 before the forward.
    assert ["move", "prefetch", "2", "0"] in moves
    # Storages 0 and 1 (tensors 6 and 7) leave before boundaries 3 and 4, and come back in backward.
    assert ["move", "evict", "6", "2", "host"] in moves and ["move", "evict", "7", "3", "host"] in moves
    assert sum(1 for m in moves if m[1] == "prefetch" and m[2] in ("6", "7")) == 2
    # The C++ reader takes it (the planner's report through the C ABI).
    rep = run_planner(text, policy="latest-start")
    assert any(w[0] == "sim" for w in rep)
    r = _replay(text, tmp_path)
    if r is not None:
        assert r["policy"] == "recorded" and r["moves"] == len(moves)
        assert r["bytes"]["to_host"] == 2 * (128 << 20) + 2 * (256 << 20)  # what the moves send out, once each


def test_states_read_back_from_disk_leave_to_ssd_in_the_timeline(tmp_path):
    """A run with a host limit: the states it read back from the disk tier are evicted to "ssd" in
    the profile's moves, so the simulator's replay sends them through the disk's rates."""
    from memlake.tier_plan import timeline_profile_text
    t = _timeline()
    t["states_plan"]["disk"] = [2]
    text = timeline_profile_text(t, machine=["gpu_bytes=4294967296", "pcie=46.5", "host_bytes=1073741824",
                                             "ssd_read=1.5", "ssd_write=2.5"])
    moves = [x.split() for x in text.splitlines() if x.startswith("move evict ")]
    assert [m[4] for m in moves if m[2] == "2"] == ["ssd"] and [m[4] for m in moves if m[2] == "1"] == ["host"]
    r = _replay(text, tmp_path)
    if r is not None:
        assert r["bytes"]["to_ssd"] == 128 << 20 and r["bytes"]["from_ssd"] == 128 << 20


def test_the_restores_the_run_issued_are_the_timelines_moves(tmp_path):
    """A planned iteration's record of where each restore ahead was issued (its window and the room
    beyond it) stands in the profile for the window's replay: both restores after the first read."""
    from memlake.tier_plan import timeline_profile_text
    t = _timeline()
    t["act_plan"]["window"] = 256 << 20  # one storage
    plain = [x.split() for x in timeline_profile_text(t).splitlines() if x.startswith("move prefetch ")]
    t["act_plan"]["issued"] = [(1, 5), (0, 5)]  # storage 5 is read first
    moves = [x.split() for x in timeline_profile_text(t).splitlines() if x.startswith("move prefetch ")]
    first_read = str(7 + 1)  # kernels: 6 boundaries, the loss, then read5 (index 7): after it
    assert ["move", "prefetch", "7", first_read] in moves and ["move", "prefetch", "6", first_read] in moves
    assert ["move", "prefetch", "6", first_read] not in plain  # the window alone issued 0 later
    r = _replay(timeline_profile_text(t, machine=["gpu_bytes=4294967296", "pcie=46.5"]), tmp_path)
    if r is not None:
        assert r["bytes"]["to_host"] == 2 * (128 << 20) + 2 * (256 << 20)
