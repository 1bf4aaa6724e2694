"""bench/tier_finetune.py's raw O_DIRECT baseline (the disk tier's figures are set against it)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))

import tier_finetune  # noqa: E402


def test_raw_disk_measures_each_way_and_both_at_once_and_leaves_nothing(tmp_path):
    r = tier_finetune.raw_disk(str(tmp_path), 8 << 20, 1 << 20)
    if r is None:  # a file system that refuses O_DIRECT (tmpfs)
        assert os.listdir(tmp_path) == []
        return
    assert r["bytes"] == 8 << 20
    assert r["write_Bps"] > 0 and r["read_Bps"] > 0 and r["both_Bps"] > 0
    assert os.listdir(tmp_path) == []  # both files removed
