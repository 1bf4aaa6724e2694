"""memlake.torch.tier() on a GPU: optimizer states leave the GPU between
their uses and come back at the same addresses; the losses are those of the
same training without tiering. Each scenario runs in a fresh interpreter
(enable() precedes the first CUDA allocation). Skipped without a GPU."""
import json

import pytest

torch = pytest.importorskip("torch", reason="PyTorch not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: GPU tests skipped", allow_module_level=True)

from test_torch_gpu import run  # noqa: E402

# Both scenarios: the same training with and without tier(), deterministic kernels.
PRELUDE = """
import json, os
os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
import torch, memlake, memlake.torch as mt
TIER = {tier}
if TIER:
    mt.enable()
torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
"""

TRAIN = PRELUDE + """
model = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(8)]).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
t = mt.tier(model, opt, budget="{budget}", margin="8M", min_bytes=1 << 20) if TIER else None
x = torch.randn(64, 2048, device="cuda", generator=torch.Generator(device="cuda").manual_seed(1))
losses = []
for step in range(6):
    loss = model(x).square().mean()
    loss.backward()
    opt.step(); opt.zero_grad(); sched.step()
    losses.append(loss.item())
ptrs = [v.data_ptr() for s in opt.state.values() for v in s.values() if torch.is_tensor(v) and v.is_cuda]
out = dict(losses=losses, nstate=len(opt.state), ptrs=ptrs)
if t:
    out["stats"] = t.stats()
    out["plan"] = t.profile()["plan"]
    import tempfile
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as f:
        t.save_profile(f.name)
        out["profile_head"] = f.read(600)
    t.close()
print("OUT" + json.dumps(out))
"""


def _train(tier, budget="0"):
    out = run(TRAIN.format(tier=tier, budget=budget))
    return json.loads([x for x in out.splitlines() if x.startswith("OUT")][-1][3:])


def test_tiered_training_moves_states_and_keeps_the_losses():
    plain = _train(False)
    # Eight layers: 128 MiB of weights, 256 MiB of AdamW states. 400 MiB
    # holds the weights, cuBLAS's workspaces and a part of the states only.
    tiered = _train(True, budget="400M")
    assert tiered["losses"] == plain["losses"], (tiered["losses"], plain["losses"])
    s = tiered["stats"]
    assert s["planned"] and s["steps_in_backward"] == 6 * 16
    assert tiered["plan"]["tiered"], tiered["plan"]  # the plan moves something
    assert s["evictions"] > 0 and s["restores_planned"] > 0, s
    assert tiered["nstate"] == plain["nstate"] == 16  # the user's optimizer sees every state
    # The third iteration was timed again and the states planned on its times (what the profile holds).
    assert s["retimed_at"] == 2 and s["retime_skipped"] == 0, s
    assert "times of iteration 2" in tiered["profile_head"], tiered["profile_head"]


def test_states_past_the_host_limit_go_to_disk_and_come_back_ahead(tmp_path):
    plain = _train(False)
    # 256 MiB of states, 64 MiB of host tier for them: the rest is written to disk each iteration
    # and read back ahead (32 MiB above the limit) on the disk tier's I/O threads.
    code = TRAIN.format(tier=True, budget="400M").replace(
        "    mt.enable()", f"    mt.enable(disk_tier={str(tmp_path)!r})").replace(
        'min_bytes=1 << 20)', 'min_bytes=1 << 20, host_limit="64M", disk_window="32M")')
    out = run(code)
    tiered = json.loads([x for x in out.splitlines() if x.startswith("OUT")][-1][3:])
    assert tiered["losses"] == plain["losses"], (tiered["losses"], plain["losses"])
    s = tiered["stats"]
    assert s["demoted_bytes"] > 0 and s["disk_io_written"] > 0 and s["disk_io_read"] > 0, s
    # This model's iteration takes milliseconds: a state is often restored while its write still runs
    # (the write stops, the bytes never left the host) or before its read-ahead, so the read-ahead
    # itself is not asserted here (bench/tier_finetune.py's tier16_ckpt_disk shows it, results §21c).
    assert s["disk_failures"] == 0, s



def test_the_host_limit_holds_in_backward_too(tmp_path):
    # 24 layers: 768 MiB of states, most tiered under 768 MiB (the iteration's peak with every state
    # off the GPU is ~585 MB, the margin 64 MiB: ~150 MB of states stay). In backward each step's states
    # come back to the host tier; past host_limit they go on to disk there (_DEMOTE_LAG evictions
    # later), so the host tier never holds all of them: at most the limit and the states of the
    # evictions that lag behind (tiering._DEMOTE_LAG + 1 of 32 MiB; read-aheads are the window's).
    from memlake.tiering import _DEMOTE_LAG
    code = TRAIN.replace("range(8)", "range(24)")
    plain = json.loads([x for x in run(code.format(tier=False, budget="0")).splitlines()
                        if x.startswith("OUT")][-1][3:])
    code = code.format(tier=True, budget="768M").replace('margin="8M"', 'margin="64M"').replace(
        "    mt.enable()", f"    mt.enable(disk_tier={str(tmp_path)!r})").replace(
        'min_bytes=1 << 20)', 'min_bytes=1 << 20, host_limit="64M", disk_window="32M")')
    tiered = json.loads([x for x in run(code).splitlines() if x.startswith("OUT")][-1][3:])
    assert tiered["losses"] == plain["losses"], (tiered["losses"], plain["losses"])
    s = tiered["stats"]
    assert s["evicted_bytes"] > 6 * (400 << 20), s  # most states leave in every iteration
    assert s["demoted_bytes"] > 0 and s["disk_failures"] == 0, s
    assert 0 < s["host_states_peak"] <= (64 + (_DEMOTE_LAG + 1) * 32) << 20, s

ACT = PRELUDE + """
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(1024, 4096), torch.nn.Linear(4096, 1024)
    def forward(self, h):
        return h + self.b(torch.nn.functional.gelu(self.a(h)))
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block() for _ in range(12))
    def forward(self, x):
        first = None
        for b in self.blocks:
            x = b(x)
            first = x if first is None else first
        return (x + first).square().mean()   # a use of block 0's output that no operator saved
model = Net().cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
t = mt.tier(model, opt, budget="{budget}", margin="16M", min_bytes=1 << 20, act_window="64M") if TIER else None
g = torch.Generator(device="cuda").manual_seed(1)
losses, peaks = [], []
for step in range(5):
    n = 2048 if step != 3 else 1536            # a smaller shape: runs the larger one's plan
    x = torch.randn(n, 1024, device="cuda", generator=g)
    loss = model(x)
    loss.backward()
    opt.step(); opt.zero_grad()
    losses.append(loss.item())
out = dict(losses=losses)
if t:
    out["stats"] = t.stats()
    out["profile_activations"] = t.profile()["activations"]
    out["peak"] = memlake.stats()["reserved_bytes.all.peak"]
    t.close()
print("OUT" + json.dumps(out))
"""


def test_activations_leave_between_forward_and_backward_and_the_losses_stay():
    # 12 blocks: 384 MiB of fp32 weights, 768 MiB of AdamW states; each block saves 2 x 32 MiB + 8 MiB
    # at 2048 rows (864 MiB in all). 1 GiB holds the weights and a part of the rest only.
    plain = json.loads([x for x in run(ACT.format(tier=False, budget="0")).splitlines() if x.startswith("OUT")][-1][3:])
    out = run(ACT.format(tier=True, budget="1G"))
    tiered = json.loads([x for x in out.splitlines() if x.startswith("OUT")][-1][3:])
    assert tiered["losses"] == plain["losses"], (tiered["losses"], plain["losses"])
    s = tiered["stats"]
    # The smaller shape of step 3 runs the larger one's plan (no profile of its own).
    assert s["act_profiles"] == 1 and s["act_covered"] == 1 and s["act_mismatches"] == 0, s
    assert s["retimed_at"] == 2, s        # timed again on the third iteration (the same shape as the profile)
    assert s["act_evictions"] > 0 and s["act_restores_planned"] > 0, s
    assert s["act_late_uses"] >= 1, s     # the profile found block 0's output used at the end
    pa = tiered["profile_activations"]
    assert pa["evicted_bytes"] > 0, tiered
    # Each forward interval's transient, measured by the allocator's watermark; the end planned with the largest.
    assert len(pa["transient_by_boundary"]) == pa["boundaries"] + 1, pa
    assert pa["transient_bytes"] == max(pa["transient_by_boundary"] + [pa["transient_floor_bytes"]]), pa
    assert tiered["peak"] <= 1 << 30, tiered["peak"]


def test_a_budget_below_the_working_set_is_a_clear_error():
    out = run("""
        import torch, memlake, memlake.torch as mt
        mt.enable()
        model = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(4)]).cuda()
        opt = torch.optim.AdamW(model.parameters())
        t = mt.tier(model, opt, budget="80M", margin=0)
        try:
            with mt.oom_errors():
                model(torch.randn(4096, 2048, device="cuda")).sum().backward()
                opt.step()
        except (memlake.tiering.PlanError, torch.OutOfMemoryError) as e:
            print("REFUSED", type(e).__name__, e)
    """)
    assert "REFUSED" in out
