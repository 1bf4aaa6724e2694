"""memlake.torch.tier(): train a model whose optimizer states do not fit
beside it, on the residency engine (docs/design/tiering.md).

    memlake.torch.enable(memory_cap="24G")
    model = ...; optimizer = torch.optim.AdamW(model.parameters(), ...)
    t = memlake.torch.tier(model, optimizer, budget="24G")
    for batch in data:                     # the loop stays as it is
        model(**batch).loss.backward()
        optimizer.step(); optimizer.zero_grad()

How: each parameter's optimizer step runs inside backward, as soon as its
gradient is ready (a post-accumulate-grad hook; then the gradient is freed,
so gradients never all exist at once). Between two steps of a parameter its
optimizer states (AdamW's exp_avg and exp_avg_sq) may leave the GPU: they
are evicted right after the step, at the same virtual address, and restored
ahead of the next one. The first iteration runs with every state tiered and
on-demand restores, and is the profile: the order of the steps, their GPU
times (CUDA events) and the bytes of each parameter's states. The planner
(memlake.tier_plan, G10's method) then decides which states stay and where
each restore is issued so it arrives before its use. Every later iteration
follows the plan; a restore that did not arrive in time is taken on demand
(counted as a miss); a stream ordering guarantees correctness either way
(the optimizer's kernels wait for the restore's copy on the GPU).

The user's optimizer keeps its param_groups (learning-rate schedulers work:
each step reads its group's hyperparameters), its state (state_dict()), and
its step() and zero_grad() (they become cheap: the work was done in
backward). Not supported: gradient accumulation over several backward
passes, gradient clipping (the gradients are gone when backward returns;
give clip_grad_norm to tier() in a later version), and parameters whose
gradient arrives in several backward passes of one iteration (reentrant
checkpointing of a shared parameter): that is detected and refused.
"""
import json
import time

import torch as _torch

from . import Error, InvalidArgumentError, OutOfMemoryError, _default
from . import residency as _res
from .tier_plan import PlanError, plan as _plan

__all__ = ["tier", "Tiering", "PlanError"]

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _bytes(v, what):
    if v is None:
        return None
    if isinstance(v, int) and not isinstance(v, bool):
        if v < 0:
            raise InvalidArgumentError(f"{what} must be non-negative, got {v}")
        return v
    if isinstance(v, str):
        s = v.strip().upper().removesuffix("IB").removesuffix("B")
        unit = s[-1:] if s[-1:] in _UNITS and s[-1:] else ""
        try:
            n = float(s[:-1] if unit else s)
        except ValueError:
            n = -1
        if n >= 0:
            return int(n * _UNITS[unit])
    raise InvalidArgumentError(f"{what}: expected bytes (an int or a size like '24G'), got {v!r}")


class Tiering:
    """The handle tier() returns: stats(), profile(), save_profile(path), close()."""

    def __init__(self, model, optimizer, budget=None, host=None, min_bytes=4 << 20, margin=None,
                 h2d_gbps=None, d2h_gbps=None):
        from . import torch as _mt
        if not _mt.enabled():
            raise Error("memlake.torch.tier() needs memlake.torch.enable() first: the tensors it moves must be "
                        "memlake's allocations")
        if not isinstance(optimizer, _torch.optim.Optimizer):
            raise InvalidArgumentError(f"tier(): optimizer must be a torch.optim.Optimizer, got {type(optimizer)}")
        self.model, self.optimizer = model, optimizer
        self.budget = _bytes(budget, "budget")
        self.min_bytes = _bytes(min_bytes, "min_bytes")
        self.device = _torch.cuda.current_device()
        alloc = _default()
        if self.budget:
            alloc.set_memory_cap(self.budget)
        if host is not None:
            _res.host_tier(_bytes(host, "host"), device=self.device)
        self.margin = _bytes(margin, "margin") if margin is not None else max(512 << 20, (self.budget or 0) // 32)
        self._gbps = (h2d_gbps, d2h_gbps)
        names = {p: n for n, p in model.named_parameters()}
        # One optimizer per parameter, of the user's class and with its group's hyperparameters.
        self._params, self._opts, self._group, self._names = [], [], [], []
        self._index = {}
        for gi, g in enumerate(optimizer.param_groups):
            hp = {k: v for k, v in g.items() if k != "params"}
            for p in g["params"]:
                if not p.requires_grad or p in self._index:
                    continue
                o = type(optimizer)([dict(params=[p], **hp)])
                if p in optimizer.state:
                    o.state[p] = optimizer.state[p]
                self._index[p] = len(self._params)
                self._params.append(p)
                self._opts.append(o)
                self._group.append(gi)
                self._names.append(names.get(p, f"param{len(self._names)}"))
        n = len(self._params)
        self._where = ["gpu"] * n     # gpu | host | coming: where each parameter's tiered states are
        self._tiered = [True] * n     # the profile iteration tiers everything it can
        self._issue_at = {}           # position -> [parameter indices to restore there]
        self._stepped = [False] * n
        self._order, self._events = [], []
        self._iteration = 0
        self._plan = None
        self._profile = None
        self._st = dict(steps_in_backward=0, steps_after_backward=0, restores_planned=0, restores_on_demand=0,
                        evictions=0, evicted_bytes=0, restored_bytes=0)
        self._hooks = [p.register_post_accumulate_grad_hook(self._on_grad) for p in self._params]
        self._user_step, self._user_zero = optimizer.step, optimizer.zero_grad
        optimizer.step = self._step
        optimizer.zero_grad = self._zero_grad
        alloc.reset_peak_stats(self.device)

    # ---- the parts of one parameter's optimizer states that can move
    def _states(self, i):
        st = self._opts[i].state.get(self._params[i], {})
        return [v for v in st.values() if _torch.is_tensor(v) and v.is_cuda and v.nbytes >= self.min_bytes]

    def _state_bytes(self, i):
        return sum(v.nbytes for v in self._states(i))

    def _restore(self, i, planned):
        if self._where[i] != "host":
            return
        for v in self._states(i):
            try:
                _res.restore(v, device=self.device)
            except OutOfMemoryError as e:
                raise OutOfMemoryError(f"tier(): restoring the optimizer states of {self._names[i]} "
                                       f"({self._state_bytes(i)} bytes) does not fit the budget: {e}") from None
            self._st["restored_bytes"] += v.nbytes
        self._where[i] = "coming"
        self._st["restores_planned" if planned else "restores_on_demand"] += 1

    def _evict(self, i):
        moved = 0
        for v in self._states(i):
            try:
                _res.evict(v, device=self.device, wait=False)
            except InvalidArgumentError:
                continue  # a slab-sized or otherwise unmovable tensor stays
            moved += v.nbytes
        if moved:
            self._where[i] = "host"
            self._st["evictions"] += 1
            self._st["evicted_bytes"] += moved

    # ---- one parameter's step, inside backward
    def _step_one(self, i):
        p, o, g = self._params[i], self._opts[i], self.optimizer.param_groups[self._group[i]]
        mine = o.param_groups[0]
        for k, v in g.items():  # a scheduler may have changed the user's group
            if k != "params":
                mine[k] = v
        self._restore(i, planned=False)
        o.step()
        p.grad = None
        self._stepped[i] = True
        if p not in self.optimizer.state:
            self.optimizer.state[p] = o.state[p]  # the user's state_dict() sees the states
        self._where[i] = "gpu"
        if self._tiered[i]:
            self._evict(i)

    def _on_grad(self, p):
        i = self._index[p]
        if self._stepped[i]:
            raise Error(f"tier(): {self._names[i]} received its gradient twice in one iteration (reentrant "
                        "checkpointing of a shared parameter, or gradient accumulation): not supported; use "
                        "use_reentrant=False and call optimizer.step() after every backward")
        pos = len(self._order)
        self._order.append(i)
        if self._plan is None:
            ev = _torch.cuda.Event(enable_timing=True)
            ev.record()
            self._events.append(ev)
        self._step_one(i)
        self._st["steps_in_backward"] += 1
        for j in self._issue_at.get(pos, ()):
            self._restore(j, planned=True)

    # ---- the iteration boundary: the user's optimizer.step()
    def _step(self, closure=None):
        if closure is not None:
            raise InvalidArgumentError("tier(): optimizer.step(closure) is not supported")
        for i, p in enumerate(self._params):
            if not self._stepped[i] and p.grad is not None:
                self._step_one(i)  # a gradient that came without the hook (set by hand)
                self._st["steps_after_backward"] += 1
        if self._plan is None and self._order:
            self._make_plan()
        self._order, self._events = [], []
        self._stepped = [False] * len(self._params)
        self._iteration += 1
        self.optimizer._opt_called = True  # what LR schedulers check
        # The first positions' restores for the next iteration: issued now.
        for j in self._issue_at.get(-1, ()):
            self._restore(j, planned=True)

    def _zero_grad(self, set_to_none=True):
        self._user_zero(set_to_none=set_to_none)

    # ---- planning from the profile iteration
    def _make_plan(self):
        _torch.cuda.synchronize()
        t0 = self._events[0]
        positions = []
        for pos, i in enumerate(self._order):
            positions.append(dict(name=self._names[i], param=i, t_ms=t0.elapsed_time(self._events[pos]),
                                  bytes=self._state_bytes(i), param_bytes=self._params[i].nbytes))
        for k in range(1, len(positions)):  # event times are monotonic on one stream; guard rounding
            positions[k]["t_ms"] = max(positions[k]["t_ms"], positions[k - 1]["t_ms"])
        s = _default().stats(self.device)
        peak = s["reserved_bytes.all.peak"]  # physical pages: what the cap counts
        h2d, d2h = self._gbps
        h2d = h2d or 50.0
        d2h = d2h or 45.0
        room = (self.budget - self.margin - peak) if self.budget else 1 << 62
        self._profile = dict(version=1, budget=self.budget, margin=self.margin, peak_all_tiered=peak,
                             backward_ms=positions[-1]["t_ms"] if positions else 0.0, h2d_gbps=h2d,
                             d2h_gbps=d2h, positions=positions)
        try:
            p = _plan(positions, room, h2d_gbps=h2d, d2h_gbps=d2h)
        except PlanError as e:
            raise PlanError(f"tier(): the budget of {self.budget} bytes (margin {self.margin}) is below what one "
                            f"iteration needs with every optimizer state off the GPU (peak {peak} bytes): {e}") from None
        self._plan = p
        self._profile["plan"] = dict(resident=[positions[k]["param"] for k in p["resident"]],
                                     tiered=[positions[k]["param"] for k in p["tiered"]],
                                     window_bytes=p["window_bytes"], resident_bytes=p["resident_bytes"],
                                     stall_ms=p["stall_ms"], link_ms=p["link_ms"])
        tiered_params = {positions[k]["param"] for k in p["tiered"]}
        self._tiered = [i in tiered_params for i in range(len(self._params))]
        self._issue_at = {}
        for k in p["tiered"]:
            at = p["issue"][k]
            # A restore that must start before the first position is issued
            # at the end of the previous iteration (before forward).
            if at == k:
                continue  # no lookahead: restored at its use (on demand)
            if at == 0 and p["start_ms"][k] < positions[0]["t_ms"]:
                at = -1
            self._issue_at.setdefault(at, []).append(positions[k]["param"])
        # What the plan keeps resident comes back now.
        for i in range(len(self._params)):
            if not self._tiered[i]:
                self._restore(i, planned=True)

    # ---- observability
    def stats(self):
        r = _res.residency_stats(device=self.device)
        out = dict(self._st, iteration=self._iteration, planned=self._plan is not None,
                   tiered_params=sum(self._tiered), params=len(self._params),
                   host_tier_used=r["host_used"], evicted_bytes_now=r["evicted_bytes_now"])
        if self._plan:
            out.update(plan_window_bytes=self._plan["window_bytes"], plan_resident_bytes=self._plan["resident_bytes"],
                       plan_stall_ms=self._plan["stall_ms"])
        return out

    def profile(self):
        return self._profile

    def save_profile(self, path):
        with open(path, "w") as f:
            json.dump(self._profile, f, indent=1)

    def close(self):
        """Every state back on the GPU, the hooks and the optimizer's methods as they were."""
        for h in self._hooks:
            h.remove()
        self._hooks = []
        for i in range(len(self._params)):
            self._restore(i, planned=True)
        _res.settle(device=self.device)
        self.optimizer.step, self.optimizer.zero_grad = self._user_step, self._user_zero


def tier(model, optimizer, budget=None, host=None, **kw):
    """Trains past GPU memory: see this module's docstring. budget: bytes or
    '24G' (also set as memlake's memory cap); host: pinned host memory to
    reserve for the host tier now. Returns a Tiering handle."""
    return Tiering(model, optimizer, budget=budget, host=host, **kw)


def print_profile(path):
    """`python -m memlake.tiering FILE`: a profile and its plan, readable."""
    with open(path) as f:
        p = json.load(f)
    gib = 1 << 30
    print(f"budget {p['budget'] / gib if p['budget'] else 0:.2f} GiB, margin {p['margin'] / gib:.2f} GiB, peak with "
          f"every state tiered {p['peak_all_tiered'] / gib:.2f} GiB, backward {p['backward_ms']:.1f} ms, "
          f"link {p['h2d_gbps']:.0f}/{p['d2h_gbps']:.0f} GB/s")
    pl = p.get("plan", {})
    tiered = set(pl.get("tiered", []))
    print(f"plan: {len(tiered)} tiered, {len(pl.get('resident', []))} resident ({pl.get('resident_bytes', 0) / gib:.2f} "
          f"GiB), window {pl.get('window_bytes', 0) / gib:.2f} GiB, predicted stall {pl.get('stall_ms', 0):.1f} ms")
    print(f"{'pos':>4} {'t ms':>8} {'state MiB':>9}  tier  name")
    for k, q in enumerate(p["positions"]):
        print(f"{k:>4} {q['t_ms']:>8.2f} {q['bytes'] / (1 << 20):>9.1f}  {'host' if q['param'] in tiered else 'gpu ':4}  "
              f"{q['name']}")


if __name__ == "__main__":
    import sys
    if len(sys.argv) != 2:
        print("usage: python -m memlake.tiering PROFILE.json", file=sys.stderr)
        sys.exit(2)
    print_profile(sys.argv[1])
