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

TRAIN = """
import json, os
os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
import torch, memlake, memlake.torch as mt
TIER = {tier}
if TIER:
    mt.enable()
torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
model = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(8)]).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
t = mt.tier(model, opt, budget="{budget}", min_bytes=1 << 20) if TIER else None
x = torch.randn(64, 1024, device="cuda", generator=torch.Generator(device="cuda").manual_seed(1))
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
    t.close()
print("OUT" + json.dumps(out))
"""


def _train(tier, budget="0"):
    out = run(TRAIN.format(tier=tier, budget=budget))
    return json.loads([x for x in out.splitlines() if x.startswith("OUT")][-1][3:])


def test_tiered_training_moves_states_and_keeps_the_losses():
    plain = _train(False)
    # The eight layers' weights and gradients are 32 MiB, their states 64
    # MiB: a budget well under everything leaves room for a few states only.
    tiered = _train(True, budget="600M")
    assert tiered["losses"] == plain["losses"], (tiered["losses"], plain["losses"])
    s = tiered["stats"]
    assert s["planned"] and s["steps_in_backward"] == 6 * 16
    assert s["evictions"] > 0 and s["restores_planned"] > 0, s
    assert tiered["nstate"] == plain["nstate"] == 16  # the user's optimizer sees every state


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
