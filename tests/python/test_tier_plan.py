"""The tiering planner on synthetic profiles (no torch): every tiered
tensor's restore is issued before its use, the budget is never exceeded,
and a budget below the working set is a clear error."""
import random

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
