"""Activation tiering's plan with each forward interval's measured transient (memlake.act_tier,
docs/design/tiering.md "The plan"), on the CPU.

MeteredMover counts what an allocator would: a constant for the weights, every other storage a
saved tensor is on while it lives (evicted or not: an evicted allocation is still allocated) and
the workspace a module takes and gives back inside its forward (a cuDNN workspace: no tensor the
profile sees).
Its watermark is the most of that since the last reset. Training must stay bit for bit the
untiered run's (the PoisonMover's check), whatever the plan keeps."""
import pytest

torch = pytest.importorskip("torch", reason="PyTorch not installed")

from memlake.act_tier import ActivationTiering, check_memory, fit_boundaries, storage_of  # noqa: E402
from test_act_tier import PoisonMover, _finish_step, _same  # noqa: E402
from torch.multiprocessing.reductions import StorageWeakRef  # noqa: E402

K = 1 << 10
WEIGHTS = 1 << 20  # what the "GPU" holds besides saved storages and workspaces


class MeteredMover(PoisonMover):
    def __init__(self, params=()):
        super().__init__()
        self.params = set(params)  # the weights' storages: in WEIGHTS
        self.live = {}  # storage address -> (weak reference, bytes): every storage a pack showed
        self.workspace = 0
        self.mark = 0

    def allocated(self):
        return WEIGHTS + self.workspace + sum(n for r, n in self.live.values() if not r.expired())

    def _raise_mark(self):
        self.mark = max(self.mark, self.allocated())

    def eligible(self, t):  # every saved tensor comes through here first: the "allocator" sees it
        key, n = storage_of(t)
        if key not in self.params and (key not in self.live or self.live[key][0].expired()):
            self.live[key] = (StorageWeakRef(t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()), n)
            self._raise_mark()
        return super().eligible(t)

    def take(self, n):
        self.workspace += n
        self._raise_mark()

    def give(self, n):
        self.workspace -= n

    def watermark(self, reset=True):
        now = self.allocated()
        out = (now, max(self.mark, now))
        if reset:
            self.mark = now
        return out

    def gpu_bytes(self):
        away = sum(self.live[k][1] for k in self.live_away() if k in self.live)
        return self.allocated() - away

    def memory(self):  # evictions complete at once here: nothing leaving, nothing taken back
        return (self.gpu_bytes(), 0, self.allocated(), 0)


class Unmetered(MeteredMover):
    watermark = None  # a stand-in without a watermark: the plan falls back to 2x the largest new tensor


class Hungry(torch.nn.Module):
    """A module that takes `nbytes` of workspace inside its forward and gives it back."""

    def __init__(self, inner, mover, nbytes):
        super().__init__()
        self.inner, self.mover, self.nbytes = inner, mover, nbytes

    def forward(self, x):
        self.mover.take(self.nbytes)
        try:
            return self.inner(x)
        finally:
            self.mover.give(self.nbytes)


class Stack(torch.nn.Module):
    """A residual stack; with `skips`, the first blocks each leave a skip that the head's side
    reads after the stack (as a U-Net's decoder does): a skip is saved where it is made and
    used last after the stack, so those the plan does not keep are on the GPU until then, and
    the boundaries before that read hold more than the forward's end."""

    def __init__(self, n=6, width=64, skips=0):
        super().__init__()
        self.inp = torch.nn.Linear(width, width)
        self.blocks = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.LayerNorm(width), torch.nn.Linear(width, 2 * width), torch.nn.GELU(),
                                torch.nn.Linear(2 * width, width)) for _ in range(n))
        self.skip = torch.nn.ModuleList(torch.nn.Linear(width, 4 * width) for _ in range(skips))
        self.back = torch.nn.ModuleList(torch.nn.Linear(4 * width, width) for _ in range(skips))
        self.head = torch.nn.Linear(width, 1)

    def forward(self, x):
        h = self.inp(x)
        skips = []
        for i, b in enumerate(self.blocks):
            h = h + b(h)
            if i < len(self.skip):
                skips.append(torch.tanh(self.skip[i](h)))  # tanh saves its output
        for f, s in zip(self.back, reversed(skips)):
            h = h + f(s)
        return self.head(h).square().mean()


def _run(mover_cls=MeteredMover, workspace=0, limit=None, steps=3, tier=True, skips=0, other=None):
    """Trains `steps` iterations; limit: bytes budget_fn allows for what the GPU holds at a
    boundary (besides nothing else: no window, no states). Returns (losses, grads, act, mover)."""
    torch.manual_seed(0)
    model = Stack(skips=skips)
    params = {storage_of(p)[0] for p in model.parameters()}
    mover = mover_cls(params)
    if workspace:
        model.blocks[2] = Hungry(model.blocks[2], mover, workspace)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    act = None
    if tier:
        act = ActivationTiering(model, mover, exclude=params)
        if limit is not None:
            act.budget_fn = lambda nonact, must, cand: max(0, limit - nonact - must)
        if other is not None:
            act.other_bytes_fn = lambda: other
    g = torch.Generator().manual_seed(1)
    losses, grads = [], []
    for _ in range(steps):
        _finish_step(model(torch.randn(32, 64, generator=g)), model, opt, act, losses, grads)
    return losses, grads, act, mover


LIMIT = WEIGHTS + 200 * K  # room for about half of the stack's saved storages


def test_a_module_that_takes_a_workspace_makes_the_plan_keep_less():
    plain = _run(tier=False)
    lean = _run(limit=LIMIT)
    hungry = _run(workspace=96 * K, limit=LIMIT)
    _same(lean, plain)
    _same(hungry, plain)
    a, b = lean[2].last_plan(), hungry[2].last_plan()
    assert a["transient_by_boundary"] is not None and len(a["transient_by_boundary"]) == a["boundaries"] + 1
    # The workspace is the interval's transient, at Hungry's own boundary (first of its interval).
    c = b["transient_at"]
    assert b["transient_by_boundary"][c] == 96 * K and b["transient_bytes"] == 96 * K
    assert b["transient_bytes"] > b["transient_floor_bytes"] == a["transient_floor_bytes"]
    assert a["transient_bytes"] < 96 * K
    assert 0 < b["kept_bytes"] < a["kept_bytes"], (a["kept_bytes"], b["kept_bytes"])
    assert b["kept_bytes"] + b["transient_bytes"] <= a["kept_bytes"] + a["transient_bytes"]
    assert b["evicted_bytes"] > a["evicted_bytes"]
    for p in (a, b):  # every boundary fits: the forward's peak under the plan is within the limit
        assert p["over_bytes"] == 0 and p["fwd_peak_bytes"] <= LIMIT, p["fwd_peak_bytes"] - LIMIT
    assert hungry[2].st["act_mismatches"] == 0 and not hungry[3].live_away()


def test_without_a_watermark_the_plan_falls_back_to_twice_the_largest_tensor():
    plain = _run(tier=False)
    blind = _run(Unmetered, workspace=96 * K, limit=LIMIT)
    lean = _run(Unmetered, limit=LIMIT)
    _same(blind, plain)
    p = blind[2].last_plan()
    assert p["transient_by_boundary"] is None and p["transient_at"] is None and p["fwd_peak_bytes"] is None
    assert p["transient_bytes"] == p["transient_floor_bytes"] == 0  # twice the largest new CUDA tensor: none here
    # It cannot see the workspace: it keeps what it keeps without one.
    assert p["kept_bytes"] == lean[2].last_plan()["kept_bytes"] > 0


def test_a_boundary_before_the_end_that_does_not_fit_evicts_more():
    # Three skips of 32 KiB, each saved where it is made and used last after the stack: on the
    # GPU until then unless kept, and no part of the forward end's count once used. The end keeps
    # a skip and the last block's storages; before the skips are read, the boundaries hold every
    # skip beside the blocks' kept storages: those whose last use is behind leave after it instead,
    # and what even that does not free is said (over_bytes: the engine takes it under pressure).
    limit = WEIGHTS + 112 * K
    plain = _run(tier=False, skips=3)
    tiered = _run(limit=limit, skips=3)
    _same(tiered, plain)
    p = tiered[2].last_plan()
    assert p["fit_evicted_bytes"] > 0 and p["kept_bytes"] > 0, p
    end_room = limit - p["nonact_bytes"] - p["transient_bytes"] - p["must_keep_bytes"]
    assert p["kept_bytes"] < p["kept_bytes"] + p["fit_evicted_bytes"] <= end_room  # what the end alone kept
    assert p["over_bytes"] > 0 and p["fwd_peak_bytes"] - limit == p["over_bytes"]
    kept = {g for gs in p["spare_at"].values() for g in gs}
    skips = [g for g, q in enumerate(p["profile_groups"]) if q["nbytes"] == 32 * K]
    assert len(skips) == 3 and kept <= set(skips), "the kept skip stays; the blocks' kept storages left"
    assert tiered[2].st["act_mismatches"] == 0 and not tiered[3].live_away()
    # More room: every boundary fits, nothing more leaves.
    roomy = _run(limit=WEIGHTS + 144 * K, skips=3, steps=1)[2].last_plan()
    assert roomy["fit_evicted_bytes"] == 0 and roomy["over_bytes"] == 0 and roomy["fwd_peak_bytes"] <= WEIGHTS + 144 * K


def test_a_planned_forward_is_checked_against_its_plan_at_every_boundary():
    # The plan's second run reads the mover's memory at every boundary: where the plan's count is
    # exact (this stand-in rounds nothing and moves at once), what is on the GPU is the plan's
    # count at each boundary, and nothing is over it.
    plain = _run(tier=False, skips=3, steps=4)
    tiered = _run(limit=WEIGHTS + 112 * K, skips=3, steps=4)
    _same(tiered, plain)
    p = tiered[2].last_plan()
    mc = p["memory_check"]
    assert p["runs"] == 3 and mc["boundaries"] == p["boundaries"] + 1 == len(p["resident_plan"])
    assert mc["resident"] == mc["planned"] == p["resident_plan"]
    assert mc["excess_bytes"] == 0 and mc["leaving_max_bytes"] == 0 and mc["first_reclaim_at"] is None
    assert max(mc["resident"]) > WEIGHTS  # saved storages are counted, not only the weights
    assert mc["other_bytes"] == 0
    # What the owner keeps beside the plan (optimizer states) joins the plan's count.
    mc2 = _run(limit=WEIGHTS + 112 * K, skips=3, steps=4, other=5 * K)[2].last_plan()["memory_check"]
    assert mc2["other_bytes"] == 5 * K and mc2["planned"] == [b + 5 * K for b in mc["planned"]]
    assert mc2["excess_bytes"] == -5 * K
    # Never checked: a mover without memory(), or memory_check_run 0.
    assert "memory_check" not in _run(Unmetered, limit=LIMIT, steps=4)[2].last_plan()


def test_check_memory_tells_what_the_plan_missed_from_copies_still_leaving():
    planned = [100, 150, 200, 180]
    # (live, of it leaving, reserved, taken back so far)
    points = [(100, 0, 110, 5), (170, 20, 180, 5), (230, 10, 240, 5), (190, 0, 200, 35)]
    mc = check_memory(planned, points)
    assert mc["excess_bytes"] == 20 and mc["excess_at"] == 2  # 230 - 10 leaving - 200 planned
    assert mc["leaving_max_bytes"] == 20 and mc["overhead_max_bytes"] == 10
    assert mc["reclaimed"] == [0, 0, 0, 30] and mc["reclaimed_bytes"] == 30
    assert mc["first_reclaim_at"] == 3
    assert mc["before_first_reclaim"] == dict(boundary=2, planned=200, resident=230, leaving=10, reserved=240)
    assert check_memory([], [])["excess_at"] is None


def test_fit_boundaries_moves_the_earliest_used_kept_storage_first():
    # [nbytes, lo, hi, last_use, kept]: on the GPU from boundary lo to hi, or until last_use + 1.
    items = [[10, 1, 9, 2, True], [10, 2, 9, 3, True], [50, 1, 9, 7, False], [10, 6, 9, 8, True]]
    limits = [100] * 10
    limits[5] = 60  # at 5: 10 + 10 + 50 on the GPU (the last one comes at 6)
    moved, res, over = fit_boundaries(items, limits)
    assert moved == [0] and over == 0
    assert res[5] == 60 and res[4] == 70 and res[2] == 70 and res[6] == 70 and res[9] == 20
    assert items[0][4] is False and items[1][4] is True
    # A boundary nothing can fix: what must still be there (last use not behind) is reported over.
    items = [[10, 1, 9, 2, True], [50, 1, 9, 7, False]]
    moved, res, over = fit_boundaries(items, [100, 30, 100, 100, 100, 100, 100, 100, 100, 100])
    assert moved == [] and over == 30 and res[1] == 60
    # Freed storages (hi) stop counting, and a kept one that can leave frees every later boundary.
    items = [[20, 1, 3, 1, True], [40, 1, 9, 1, True]]
    moved, res, over = fit_boundaries(items, [100, 100, 50, 100, 100, 100, 100, 100, 100, 100])
    assert moved == [0] and res[2:] == [40] * 8 and over == 0


def test_the_residency_mover_reads_the_default_allocators_watermark():
    # The real mover on the host backend (in a process of its own: the default allocator is
    # process-wide): what an interval allocated and freed, and the user's peak left alone.
    import os
    import subprocess
    import sys
    code = """
import memlake
from memlake.act_tier import ResidencyMover
m, a = ResidencyMover(0, 1 << 20), memlake._default()
start = m.watermark()
p = a.alloc(4 << 20)
a.free(p)
w = m.watermark()
print(start[0], w[0], w[1] - start[0], m.watermark(reset=False)[1], memlake.stats()["allocated_bytes.all.peak"])
"""
    env = dict(os.environ, MEMLAKE_BACKEND="host", PYTHONPATH=":".join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    start, now, transient, after_reset, user_peak = map(int, out.stdout.split())
    assert start == now == after_reset == 0 and transient == 4 << 20 and user_peak == 4 << 20
