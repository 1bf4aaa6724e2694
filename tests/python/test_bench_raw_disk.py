"""bench/tier_finetune.py's raw O_DIRECT baseline (the disk tier's figures are set against it)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))

import pytest  # noqa: E402

import tier_finetune  # noqa: E402


def test_raw_disk_measures_each_way_and_both_at_once_and_leaves_nothing(tmp_path):
    r = tier_finetune.raw_disk(str(tmp_path), 8 << 20, 1 << 20)
    if r is None:  # a file system that refuses O_DIRECT (tmpfs)
        assert os.listdir(tmp_path) == []
        return
    assert r["bytes"] == 8 << 20
    assert r["write_Bps"] > 0 and r["read_Bps"] > 0 and r["both_Bps"] > 0
    assert os.listdir(tmp_path) == []  # both files removed


def test_the_per_iteration_counts_and_the_memory_check_are_printed(capsys):
    pytest.importorskip("torch", reason="PyTorch not installed (memlake.act_tier needs it)")
    from memlake.act_tier import check_memory
    counts = dict(act_evicted_bytes=5 << 30, act_restores_planned=20, act_restores_on_demand=3, act_prefetch_deferred=1,
                  act_reclaimed_fwd_bytes=1 << 30, act_reclaimed_bwd_bytes=0, pressure_waits=4, pressure_s=0.25)
    mc = check_memory([100, 150, 200], [(100, 0, 110, 5), (170, 20, 180, 5), (230, 10, 240, 9)])
    tier_finetune._print_checks(dict(step_times=[0.5, 0.4], per_step=[counts, counts], memory_check=mc))
    out = capsys.readouterr().out
    assert "0.400 1.07/0.00 4x0.250 5.37 20/3 1 0.000/0.000" in out
    assert "beyond the plan at most 0.00 GB (boundary 2)" in out and "first before boundary 2" in out
    tier_finetune._print_checks(dict(step_times=[0.5]))  # an uncapped run: nothing
    assert capsys.readouterr().out == ""
