"""memlake.torch.tier(): train a model whose optimizer states and activations
do not fit beside it, on the residency engine (docs/design/tiering.md).

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
times (CUDA events, and the forward's from a forward pre-hook) and the bytes
of each parameter's states. The planner (C++, src/plan/latest_start.cpp,
through memlake.tier_plan: the one `memlake sim` simulates) then decides
which states stay and where each restore is issued so it arrives before its
use; save_profile() writes the profile `memlake tier profile` prints and
`memlake sim --profile` replays. The first iteration is a cold one (first
allocations and launches, the activation profile's operator tracking, every
restore on demand) and often several times slower than a steady one, so
the second after it (retime_at=2) is timed again while it follows the plan, its waits
on restores taken off, and the states are planned again on those times,
which the saved profile then holds. Every later iteration
follows the plan; a restore that did not arrive in time is taken on demand
(counted as a miss); a stream ordering guarantees correctness either way
(the optimizer's kernels wait for the restore's copy on the GPU).

Activations (memlake.act_tier): with a budget, what autograd saves for
backward leaves the GPU after its last forward use and comes back, planned,
before backward reads it. The first forward of each input shape is profiled
(every operator's arguments are seen, so a use that no operator saves is
found); the plan keeps the activations used last in the forward as far as
the budget allows, after the optimizer states' minimum. activations=False
turns it off; act_window bounds the bytes restored ahead in backward.

The user's optimizer keeps its param_groups (learning-rate schedulers work:
each step reads its group's hyperparameters), its state (state_dict()
brings every state back to the GPU first; load_state_dict() is followed),
and its step() (it becomes cheap: the work was done in backward). Refused
with a clear error: DistributedDataParallel, optimizer step hooks,
parameters added after tier(), a gradient that arrives twice in one
iteration (reentrant checkpointing of a shared parameter, accumulation).
Not detected, so do not: clip gradients (clip_grad_norm_ finds none: they
were consumed in backward), or run the step on another stream than the one
the states were created on.
"""
import heapq as _heapq
import time as _time
import types

import torch as _torch

from . import Error, InvalidArgumentError, OutOfMemoryError, _default
from . import residency as _res
from .tier_plan import PlanError, plan as _plan, profile_text as _profile_text
from .tier_plan import machine_lines as _machine_lines, timeline_profile_text as _timeline_profile_text
from .act_tier import ActivationTiering, ResidencyMover, host_timed, storage_of, timed_wait, waits_in

__all__ = ["tier", "Tiering", "PlanError"]

# Steps between a state's eviction in backward and its demotion to disk there (_demote_in_backward).
_DEMOTE_LAG = 4
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


# The activation plan's figures that profile() shows: its bytes, and the transients it planned with
# (transient_bytes: the largest of the measured intervals' and twice the forward's largest new tensor,
# transient_floor_bytes; transient_by_boundary: each forward interval's, index = the boundary that
# starts it, transient_at: where the largest is; None where the mover has no watermark), and what its
# per-boundary check found (fwd_peak_bytes, fit_evicted_bytes, over_bytes: ActivationTiering._fit).
_ACT_PROFILE_KEYS = ("evicted_bytes", "kept_bytes", "must_keep_bytes", "nonact_bytes", "transient_bytes",
                     "transient_floor_bytes", "transient_by_boundary", "transient_at", "fwd_peak_bytes",
                     "fit_evicted_bytes", "over_bytes", "groups", "boundaries")


def _act_transient_comment(ap):
    """The profile file's comment on the activation plan's transients ("" without one): what the
    forward's end was planned with, each measured forward interval's (fC: the interval from boundary
    C, kernel fC of the timeline; the zero ones left out) and what the per-boundary check found."""
    if not ap or ap.get("nonact_bytes") is None:
        return ""
    out = (f"# activation transients: {ap.get('transient_bytes', 0)} bytes planned at the forward's end (twice the "
           f"largest new tensor: {ap.get('transient_floor_bytes', 0)})")
    tr = ap.get("transient_by_boundary")
    if tr is None:
        return out + "; not measured (no watermark)\n"
    out += (f"; largest measured at f{ap.get('transient_at')}; per-boundary check: {ap.get('fit_evicted_bytes', 0)} "
            f"bytes more evicted, {ap.get('over_bytes', 0)} still over, forward peak {ap.get('fwd_peak_bytes')}\n")
    return out + "# measured: " + " ".join(f"f{c}:{b}" for c, b in enumerate(tr) if b) + "\n"


def plan_need(peak, budget, margin, act_plan=None, act_window=0, min_room=0):
    """(need, at_cap): the bytes the planned iteration needs on the GPU before the states' room, from
    the profile iteration's peak (every state and activation tiered) and the activation plan's forward
    end (what it holds besides saved activations, its transients, the saved tensors that cannot leave,
    those it keeps, the restore window), or its forward's middle where that holds more (the plan's
    `fwd_peak_bytes`: an interval's measured transient beside what the plan has on the GPU there).

    A peak into the margin (at or above budget less margin: the reserve the plan keeps) shows that
    the iteration fits at the cap, not the room left: it holds evictions still copying out while the
    forward went on (ResNet-152 at 20 GiB peaked 50 MB under the cap). Then the need is the forward
    end's count, but no less than the budget less the margin less `min_room` (the largest position's
    states, which that iteration restored at the cap), so the states never get more room than the
    profile showed. Only a forward end above the budget less the margin refuses such a budget."""
    at_cap = bool(budget) and peak >= budget - margin
    act_need = None
    if act_plan is not None and act_plan.get("nonact_bytes") is not None:
        act_need = max(act_plan["nonact_bytes"] + act_plan.get("transient_bytes", 0) + act_plan["must_keep_bytes"] +
                       act_plan["kept_bytes"] + act_window, act_plan.get("fwd_peak_bytes") or 0)
    if at_cap:
        need = max(act_need or 0, budget - margin - min_room)
    else:
        need = peak if act_need is None else max(peak, act_need)
    return need, at_cap


class Tiering:
    """The handle tier() returns: stats(), profile(), save_profile(path), close()."""

    def __init__(self, model, optimizer, budget=None, host="auto", min_bytes=4 << 20, margin=None,
                 h2d_gbps=None, d2h_gbps=None, activations=True, act_window=None, act_prefetch_room=True,
                 host_limit=None, disk_window=None, retime_at=2):
        from . import torch as _mt
        if not _mt.enabled():
            raise Error("memlake.torch.tier() needs memlake.torch.enable() first: the tensors it moves must be "
                        "memlake's allocations")
        if not isinstance(optimizer, _torch.optim.Optimizer):
            raise InvalidArgumentError(f"tier(): optimizer must be a torch.optim.Optimizer, got {type(optimizer)}")
        if isinstance(model, _torch.nn.parallel.DistributedDataParallel):
            raise InvalidArgumentError("tier(): DistributedDataParallel is not supported (each rank would step on "
                                       "its own gradients before they are reduced)")
        if getattr(optimizer, "_optimizer_step_pre_hooks", None) or getattr(optimizer, "_optimizer_step_post_hooks", None):
            raise InvalidArgumentError("tier(): the optimizer has step hooks; they would not run (steps happen "
                                       "inside backward, per parameter)")
        self.model, self.optimizer = model, optimizer
        self.budget = _bytes(budget, "budget")
        self.min_bytes = _bytes(min_bytes, "min_bytes")
        self.device = _torch.cuda.current_device()
        alloc = _default()
        # The cap before tier(): close() puts it back, since the budget was the tiering's.
        self._prev_cap = int(alloc.stats(self.device).get("memlake.memory_cap", 0))
        if self.budget:
            alloc.set_memory_cap(self.budget)
        if host == "auto":  # room for AdamW's two states of every parameter, pinned now, not inside backward
            host = 2 * sum(p.nbytes for g in optimizer.param_groups for p in g["params"] if p.requires_grad)
        if host:
            _res.host_tier(_bytes(host, "host"), device=self.device)
        self.margin = _bytes(margin, "margin") if margin is not None else max(512 << 20, (self.budget or 0) // 32)
        # The disk tier (enable(disk_tier=DIR)): optimizer states past host_limit bytes of the host tier
        # are demoted to disk at each iteration's end and read back when restored.
        self.host_limit = _bytes(host_limit, "host_limit")
        # Read-ahead: states on disk come back into the host tier on the disk tier's I/O threads, in
        # the order of their restores, while the host tier holds at most host_limit + disk_window. (In
        # backward each step's restore and eviction balance in the host tier: without a window there
        # is no room to read into until the iteration's end.)
        self.disk_window = _bytes(disk_window, "disk_window") if disk_window is not None else 1 << 30
        self._disk_queue = []         # parameters on disk, in their restores' order, not read ahead yet
        self._restore_pos = {}        # tiered parameter -> the plan's position of its restore (its step: at its use)
        self._host_states = 0         # bytes of evicted states in the host tier (not on disk): what host_limit bounds
        self._recent = []             # (parameter, step position) evicted in this backward, not yet demotable
        self._fetched_total = 0       # bytes read ahead from disk into the host tier, not restored yet
        self._demotable = []          # (-restore position, -step position, parameter): may go to disk in backward
        self._deferred_error = None   # a demotion's error in backward, raised at the step (not inside backward)
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
        self._host_bytes = [0] * n    # _host_states, each parameter's
        self._fetched = [0] * n       # _fetched_total, each parameter's
        self._where = ["gpu"] * n     # gpu | host | coming: where each parameter's tiered states are
        self._on_disk = [False] * n   # its evicted states were demoted to the disk tier
        self._read_from_disk = set()  # parameters whose states this iteration read back from disk
        self._out = [[] for _ in range(n)]  # the state tensors evicted (and not yet restored) of each
        self._arriving = [[] for _ in range(n)]  # restored ahead: their stream waits at the step
        self._tiered = [True] * n     # the profile iteration tiers everything it can
        self._issue_at = {}           # position -> [parameter indices to restore there]
        self._stepped = [False] * n
        self._order, self._events = [], []
        self._fwd_event = None        # the timed iteration's forward start
        self._iteration = 0
        # The iteration timed again once the plan runs, counted from the profile (see _retime); None:
        # the profile's times stay.
        if retime_at is not None and (not isinstance(retime_at, int) or isinstance(retime_at, bool) or retime_at < 1):
            raise InvalidArgumentError(f"tier(): retime_at must be a number of iterations >= 1 or None, got {retime_at!r}")
        self._retime_after = retime_at
        self._retime_at = None        # the iteration index, once the profile has been made
        self._timing = False          # this iteration is timed (the profile, or the retime)
        self._plan = None
        self._largest_state = 0       # bytes of the largest parameter's optimizer states (_largest_state_bytes)
        self._profile = None
        self._st = dict(steps_in_backward=0, steps_after_backward=0, restores_planned=0, restores_on_demand=0,
                        evictions=0, evicted_bytes=0, restored_bytes=0, demoted_bytes=0, disk_write_s=0.0,
                        fetched_bytes=0, disk_restored_bytes=0, disk_read_s=0.0, retimed_at=None, retime_skipped=0,
                        prefetch_deferred=0, host_states_peak=0, host_s=0.0)
        self._hooks = [p.register_post_accumulate_grad_hook(self._on_grad) for p in self._params]
        if isinstance(model, _torch.nn.Module):
            self._hooks.append(model.register_forward_pre_hook(self._on_forward))
            if self.host_limit is not None:  # the read-ahead goes on through the forward
                self._hooks += [m.register_forward_pre_hook(self._on_module) for m in model.modules()]
        # Bound to the optimizer (LR schedulers re-bind optimizer.step's
        # function to the optimizer: a method of this object would break).
        self._user_step, self._user_state_dict = optimizer.step, optimizer.state_dict
        optimizer.step = types.MethodType(lambda opt, closure=None: self._step(closure), optimizer)
        optimizer.state_dict = types.MethodType(lambda opt: self._state_dict(), optimizer)
        # Activations (memlake.act_tier): what autograd saves leaves between its last forward use
        # and backward, when a budget asks for it.
        self._act, self._stalls = None, []
        if activations and self.budget and isinstance(model, _torch.nn.Module):
            self._act_window = (_bytes(act_window, "act_window") if act_window is not None
                                else max(256 << 20, self.budget // 32))
            self._act = ActivationTiering(model, ResidencyMover(self.device, self.min_bytes), window=self._act_window,
                                          exclude={storage_of(p)[0] for p in model.parameters()})
            self._act.budget_fn = self._act_budget
            if act_prefetch_room:
                self._act.room_fn = self._act_room
            # The states the states' plan keeps on the GPU: beside the activations' count.
            self._act.other_bytes_fn = lambda: self._plan["resident_bytes"] if self._plan is not None else 0
            self._act.stall_log = self._stalls
            self._act.timeline = []  # the first profile iteration's whole timeline, for save_profile()
        alloc.reset_peak_stats(self.device)

    # ---- the parts of one parameter's optimizer states that can move
    def _states(self, i):
        st = self._opts[i].state.get(self._params[i], {})
        return [v for v in st.values() if _torch.is_tensor(v) and v.is_cuda and v.nbytes >= self.min_bytes]

    def _state_bytes(self, i):
        return sum(v.nbytes for v in self._states(i))

    def _restore(self, i, planned, wait=None):
        """Brings parameter i's evicted states back. A planned restore (wait=False) queues the copies
        and nothing waits for them until _ready(i) at the step, so they overlap the backward work
        queued in between; an on-demand one (or wait=True) makes the stream wait at once."""
        out = self._out[i]
        wait = (not planned) if wait is None else wait
        if not out:
            return
        t0 = _time.perf_counter() if self._on_disk[i] else None
        if t0 is not None and i in self._disk_queue:
            self._disk_queue.remove(i)  # restored before its read-ahead: read here
        while out:  # what came back is off the list at once: a failure leaves the rest to retry
            v = out[0]
            try:
                _res.restore(v, device=self.device, wait=wait)
            except OutOfMemoryError as e:
                if not wait:  # a prefetch with no room yet (it never takes another's): at the step, on demand
                    self._st["prefetch_deferred"] += 1
                    return
                raise OutOfMemoryError(f"tier(): restoring the optimizer states of {self._names[i]} "
                                       f"({v.nbytes} bytes) does not fit the budget: {e}") from None
            out.pop(0)
            self._count_host(i, -min(v.nbytes, self._host_bytes[i]))  # one from disk was not counted
            if not wait:
                self._arriving[i].append(v)
            self._st["restored_bytes"] += v.nbytes
            if t0 is not None:
                self._st["disk_restored_bytes"] += v.nbytes
        if t0 is not None:  # the wait for the read from disk (none when read ahead in time)
            self._st["disk_read_s"] += _time.perf_counter() - t0
            self._on_disk[i] = False
            self._fetched_total -= self._fetched[i]
            self._fetched[i] = 0
            self._read_from_disk.add(i)
        self._where[i] = "coming"
        self._st["restores_planned" if planned else "restores_on_demand"] += 1

    def _count_host(self, i, delta):
        self._host_bytes[i] += delta
        self._host_states += delta
        if delta > 0:
            self._st["host_states_peak"] = max(self._st["host_states_peak"], self._host_states)

    def _ready(self, i):
        """The stream waits, here, for the copies of parameter i's states restored ahead."""
        for v in self._arriving[i]:
            _res.ready(v, device=self.device)
        self._arriving[i] = []

    def _evict(self, i):
        self._arriving[i] = []  # restored ahead, not used: the engine orders the copy out after the copy in
        moved = 0
        for v in self._states(i):
            try:
                _res.evict(v, device=self.device, wait=False)
            except InvalidArgumentError:
                continue  # a slab-sized or otherwise unmovable tensor stays
            self._out[i].append(v)
            moved += v.nbytes
        if moved:
            self._where[i] = "host"
            self._st["evictions"] += 1
            self._st["evicted_bytes"] += moved
            self._count_host(i, moved)

    def _timeline_text(self, stall_events, positions, p, ap, h2d, d2h):
        """The timed iteration's whole timeline (forward boundaries, backward reads and steps) with
        the plans as "move" lines: tier_plan.timeline_profile_text. The saved storages' uses are the
        profile iteration's (ap's "profile_groups"): only a profile sees every use."""
        f = self._fwd_event
        stalls = [(f.elapsed_time(a), f.elapsed_time(b)) for a, b in stall_events]

        def at(ev):
            x = f.elapsed_time(ev)
            return x - waits_in(stalls, float("-inf"), x)

        tl = self._act.timeline
        nonact = (ap.get("nonact_bytes") or 0) + ap.get("transient_bytes", 0)  # as the plan counted it
        end = next((ev for kind, _, ev in tl if kind == "end"), None)
        if end is None:
            raise ValueError("timeline: the forward's end was not recorded")
        t = dict(boundaries=[(key, at(ev)) for kind, key, ev in tl if kind == "b"],
                 fwd_end=at(end),
                 unpacks=[(key, at(ev)) for kind, key, ev in tl if kind == "u"],
                 positions=[dict(name=q["name"], bytes=q["bytes"], t_ms=at(self._events[k]))
                            for k, q in enumerate(positions)],
                 groups=ap.get("profile_groups") or self._act.profile_groups(),
                 states_plan=dict(tiered=list(p["tiered"]), issue={k: p["issue"][k] for k in p["tiered"]},
                                  disk=[k for k in p["tiered"] if positions[k].get("param") in self._read_from_disk]),
                 act_plan=dict(evict_at=ap["evict_at"], restore_order=ap["restore_order"], window=self._act_window))
        issued = [key for kind, key, _ in tl if kind == "r"]
        if issued:  # a planned iteration: the restores where it issued them (the window and the room)
            t["act_plan"]["issued"] = issued
        machine = _machine_lines(max(0, self.budget - self.margin - nonact), h2d, d2h)
        gib = float(1 << 30)
        if self.host_limit is not None:  # the disk run: the host tier's limit and the disk's measured rates
            machine.append(f"host_bytes={int(self.host_limit)}")
            r = _res.residency_stats(device=self.device)  # the disk tier's own rates (busy time)
            if r["disk_read"] and r["disk_read_seconds"] > 0:
                machine.append(f"ssd_read={r['disk_read'] / r['disk_read_seconds'] / gib:.9g}")
            if r["disk_written"] and r["disk_write_seconds"] > 0:
                machine.append(f"ssd_write={r['disk_written'] / r['disk_write_seconds'] / gib:.9g}")
        return _timeline_profile_text(t, name="tier", machine=machine)

    def _act_budget(self, nonact, must_keep, candidates):
        """Bytes of movable activations that may stay at the forward's end: what the budget leaves
        after the rest of what the forward's end holds (nonact, measured: weights, resident
        states, outputs, small tensors; must_keep: saved storages that cannot leave), the restore
        window, and the least the optimizer states need (one parameter's restored ahead while
        another's leaves). Activations are kept before states: a state's idle interval is the
        whole iteration, an activation's only part of it (G10's order: longest idle first)."""
        states = self._largest_state_bytes(fresh=True)
        return max(0, self.budget - self.margin - nonact - must_keep - self._act_window - 2 * states)

    def _act_room(self):
        """Bytes backward's restores of activations may take ahead beyond their window now: what the
        budget leaves above what is on the GPU (live allocations, the restores ahead included), less
        the margin, the plan's transients (backward's own stand for them) and what the optimizer
        states' restores ahead count on (their plan's window, at least one state restored while
        another leaves): the activations never take the room the states' plan was made with.
        Asked only while the window is full."""
        ap = self._act.current_plan() or self._act.last_plan() or {}
        states = 2 * self._largest_state_bytes()
        if self._plan is not None:
            states = max(states, self._plan["window_bytes"])
        return (self.budget - self.margin - self._act.mover.gpu_bytes() - (ap.get("transient_bytes") or 0)
                - states)

    def _largest_state_bytes(self, fresh=False):
        """The largest parameter's optimizer states, in bytes: found again when an activation plan is
        made (`fresh`, budget_fn), and kept for the room rule, which asks at every full-window read."""
        if fresh or not self._largest_state:
            self._largest_state = max((self._state_bytes(i) for i in range(len(self._params))), default=0)
        return self._largest_state

    # ---- one parameter's step, inside backward
    def _step_one(self, i):
        p, o, g = self._params[i], self._opts[i], self.optimizer.param_groups[self._group[i]]
        mine = o.param_groups[0]
        for k, v in g.items():  # a scheduler may have changed the user's group
            if k != "params":
                mine[k] = v
        theirs = self.optimizer.state.get(p)
        if theirs is not None and o.state.get(p) is not theirs:
            # load_state_dict() gave the user's optimizer new states: they replace ours. The old
            # ones come back first (the new ones may be the same tensors, e.g. a state dict kept
            # in memory and loaded again); then they go when they are dropped.
            self._restore(i, planned=False)
            self._ready(i)
            o.state[p] = theirs
            self._out[i] = []
            self._arriving[i] = []
            self._where[i] = "gpu"
        # A timed iteration measures how long a restore held compute up: on demand, or issued ahead
        # and not arrived yet.
        log = self._stalls if (self._timing or self._plan is None) else None
        timed_wait(log if self._out[i] else None, lambda: self._restore(i, planned=False))
        timed_wait(log if self._arriving[i] else None, lambda: self._ready(i))
        o.step()
        p.grad = None
        self._stepped[i] = True
        if p not in self.optimizer.state:
            self.optimizer.state[p] = o.state[p]  # the user's state_dict() sees the states
        self._where[i] = "gpu"
        if self._tiered[i]:
            self._evict(i)

    def _on_module(self, module, args):
        if self._disk_queue:
            self._fetch_ahead()

    def _on_forward(self, module, args):
        """A timed iteration (the profile, the retime) starts at its last grad-enabled forward before
        backward: an evaluation forward (no_grad) is not it, and one that raised or was never
        backpropagated is forgotten with what it recorded (as the activation tiering forgets it)."""
        if self._order or not _torch.is_grad_enabled():
            return  # in backward already, or an evaluation forward
        if self._plan is not None and self._iteration != self._retime_at:
            return
        self._timing = True
        self._stalls.clear()
        if self._act is not None:  # the whole iteration, as the profile's
            self._act.timeline, self._act.stall_log = [], self._stalls
        self._fwd_event = _torch.cuda.Event(enable_timing=True)
        self._fwd_event.record()

    @host_timed("_st", "host_s")
    def _on_grad(self, p):
        i = self._index[p]
        if self._stepped[i]:
            raise Error(f"tier(): {self._names[i]} received its gradient twice in one iteration (reentrant "
                        "checkpointing of a shared parameter, or gradient accumulation): not supported; use "
                        "use_reentrant=False and call optimizer.step() after every backward")
        pos = len(self._order)
        if pos == 0 and self._plan is not None and self._iteration == self._retime_at:
            self._timing = True  # a model that is not an nn.Module has no forward hook: timed from its first step
        self._order.append(i)
        if self._plan is None or self._timing:
            ev = _torch.cuda.Event(enable_timing=True)
            ev.record()
            self._events.append(ev)
        self._step_one(i)
        self._st["steps_in_backward"] += 1
        if self.host_limit is not None:
            self._demote_in_backward(i)
        if self._disk_queue and self._deferred_error is None:
            try:
                self._fetch_ahead()
            except Exception as e:  # noqa: BLE001 (a write that failed, seen by its settle: raised at the step)
                self._deferred_error = e
        for j in self._issue_at.get(pos, ()):
            # A state on disk is read here, on this thread: timed, its wait is not compute (approximately:
            # the events measure the GPU's idle time only once its queue has drained).
            timed_wait(self._stalls if self._timing and self._on_disk[j] else None,
                       lambda: self._restore(j, planned=True))

    # ---- the iteration boundary: the user's optimizer.step()
    @host_timed("_st", "host_s")
    def _step(self, closure=None):
        if closure is not None:
            raise InvalidArgumentError("tier(): optimizer.step(closure) is not supported")
        for g in self.optimizer.param_groups:
            for p in g["params"]:
                if p.requires_grad and p not in self._index:
                    raise Error("tier(): a parameter was added to the optimizer (or unfrozen) after tier(); "
                                "call close() and tier() again")
        for i, p in enumerate(self._params):
            if not self._stepped[i] and p.grad is not None:
                self._step_one(i)  # a gradient that came without the hook (set by hand)
                self._st["steps_after_backward"] += 1
        try:
            if self._act is not None:
                self._act.finish()  # a profiled forward's activation plan is made here
            if self._plan is None and self._order:
                self._make_plan()
            elif self._timing and self._order:
                self._retime()
            if self._deferred_error is not None:  # a disk move in backward failed: its error, here
                e, self._deferred_error = self._deferred_error, None
                raise e
        finally:  # a PlanError (or anything else) leaves the next iteration a clean start
            if self._plan is not None and self._act is not None:
                self._act.timeline = self._act.stall_log = None
            self._timing = False
            self._order, self._events = [], []
            self._fwd_event = None
            self._stepped = [False] * len(self._params)
            self._demotable, self._recent = [], []
            self._stalls.clear()
            self._read_from_disk.clear()
        if self.host_limit is not None:
            self._demote_past_limit()
            self._fetch_ahead()
        self._iteration += 1
        self.optimizer._opt_called = True  # what LR schedulers check
        # The first positions' restores for the next iteration: issued now.
        for j in self._issue_at.get(-1, ()):
            self._restore(j, planned=True)

    def _restore_at(self, i):
        """The plan's position of parameter i's restore (its step's when restored at its use; before a
        plan, past every step)."""
        return self._restore_pos.get(i, len(self._params))

    def _demote(self, i):
        """Parameter i's evicted states go to the disk tier, without a wait (a write that fails is raised
        by a later settle(); its bytes stay in the host tier). Returns the bytes."""
        moved = 0
        for v in self._out[i]:
            try:  # an error (disk full): raised; the bytes stay in the host tier
                _res.demote(v, device=self.device, wait=False)
            except InvalidArgumentError as e:
                if "no disk tier" in str(e):
                    raise InvalidArgumentError("tier(host_limit=...): no disk tier; call memlake.torch."
                                               "enable(disk_tier=DIR) with a directory on local disk") from None
                raise
            # From its first tensor on disk (a restore then times it as a disk read).
            self._on_disk[i] = True
            moved += v.nbytes
            self._count_host(i, -v.nbytes)
            self._st["demoted_bytes"] += v.nbytes
        return moved

    def _demote_in_backward(self, i):
        """host_limit bounds the optimizer states in the host tier at every step, not only at the
        iteration's end: in backward each step's states come back to the host tier, and once they
        are past the limit (the states read from disk this iteration return there), the states
        stepped in this backward go on to disk, those the next iteration restores latest first.
        Each waits until _DEMOTE_LAG later tiered evictions (a demotion waits for its copy out, so
        the latest are left to a later step or the iteration's end). An error here (a write that
        failed, a full disk) is raised by optimizer.step(), not inside backward."""
        if self._deferred_error is not None or self._where[i] != "host":
            return
        self._recent.append((i, len(self._order) - 1))
        if len(self._recent) > _DEMOTE_LAG:
            j, pos = self._recent.pop(0)
            # Before a plan (the profile iteration) every position is the same: the latest stepped
            # go first, as the next backward restores in this one's order.
            _heapq.heappush(self._demotable, (-self._restore_at(j), -pos, j))
        if self._host_states <= self.host_limit:
            return
        t0 = _time.perf_counter()
        try:
            _res.settle(wait=False, device=self.device)  # copies out that are over: their demotions do not wait
            while self._demotable and self._host_states > self.host_limit:
                j = _heapq.heappop(self._demotable)[-1]
                if self._out[j] and not self._on_disk[j]:  # not restored again (state_dict) or on disk
                    self._demote(j)
        except Exception as e:  # noqa: BLE001 (raised at the step, with the iteration's bookkeeping)
            self._deferred_error = e
        finally:
            self._st["disk_write_s"] += _time.perf_counter() - t0

    def _demote_past_limit(self):
        """States beyond host_limit bytes of the host tier go to the disk tier, those restored latest in
        the next iteration first (the most time for their reads). Each waits for its copy out, then
        its write is queued on the disk tier's I/O threads (O_DIRECT where the file system allows it)
        and the host copy goes once written; the states on disk are then read ahead (_fetch_ahead).
        A write that failed since the last iteration raises here (its bytes stayed in the host tier)."""
        t0 = _time.perf_counter()
        try:
            _res.settle(wait=False, device=self.device)
            order = sorted((i for i in range(len(self._params)) if self._out[i] and not self._on_disk[i]),
                           key=lambda i: -self._restore_at(i))
            for i in order:
                if self._host_states <= self.host_limit:
                    break
                self._demote(i)
        finally:
            self._disk_queue = sorted((i for i in range(len(self._params)) if self._on_disk[i] and self._out[i]),
                                      key=self._restore_at)
            self._st["disk_write_s"] += _time.perf_counter() - t0

    def _fetch_ahead(self):
        """Reads the states on disk back into the host tier ahead of their restores, in the order of
        those restores, while the states in the host tier and those read ahead stay under host_limit +
        disk_window (the activations the host tier also holds are not the limit's, nor are writes in
        flight: their bytes leave once written; a read-ahead of a state still being written stops its
        write instead). Called at the iteration's end, at each module's forward and at each step in
        backward."""
        _res.settle(wait=False, device=self.device)  # moves and copies that are over give their room back
        # The latest evictions of a backward wait there for their demotion (_demote_in_backward):
        # their bytes are on their way to disk, not the read-ahead's to wait for.
        lagging = sum(self._host_bytes[j] for j, _ in self._recent) if self._host_states > self.host_limit else 0
        room = self.host_limit + self.disk_window - (self._host_states - lagging) - self._fetched_total
        while self._disk_queue:
            i = self._disk_queue[0]
            b = sum(v.nbytes for v in self._out[i])
            if b > room:
                return
            self._disk_queue.pop(0)  # taken before the calls: an error does not repeat at every hook
            for v in self._out[i]:
                _res.fetch(v, device=self.device)
                self._fetched[i] += v.nbytes
                self._fetched_total += v.nbytes
            room -= b
            self._st["fetched_bytes"] += b

    def _state_dict(self):
        # Every state back on the GPU first: a state_dict (torch.save) reads them.
        for i in range(len(self._params)):
            self._restore(i, planned=True, wait=True)
            self._ready(i)
        return self._user_state_dict()

    # ---- planning from the profile iteration, and again from a timed steady one
    def _timed_positions(self):
        """This iteration's step positions (name, parameter, states' bytes, GPU time since the first
        step) and the lead (the forward's start to the first step) from its CUDA events, with the
        waits in the stall log taken off: what compute alone takes. Also the waits' total (ms) and
        their events, which the timeline profile takes off the same way."""
        _torch.cuda.synchronize()
        t0 = self._events[0]
        positions = []
        for pos, i in enumerate(self._order):
            positions.append(dict(name=self._names[i], param=i, t_ms=t0.elapsed_time(self._events[pos]),
                                  bytes=self._state_bytes(i), param_bytes=self._params[i].nbytes))
        for k in range(1, len(positions)):  # event times are monotonic on one stream; guard rounding
            positions[k]["t_ms"] = max(positions[k]["t_ms"], positions[k - 1]["t_ms"])
        # Restores that held compute up (on demand, or issued ahead and not yet arrived): their
        # waits (events before and after each) come off the timeline.
        stalls = [(t0.elapsed_time(a), t0.elapsed_time(b)) for a, b in self._stalls]
        stall_events = list(self._stalls)
        self._stalls.clear()
        for q in positions:
            q["t_ms"] = max(0.0, q["t_ms"] - waits_in(stalls, 0.0, q["t_ms"]))
        lead = 0.0
        if self._fwd_event is not None:
            raw = self._fwd_event.elapsed_time(t0)
            lead = max(0.0, raw - waits_in(stalls, -raw, 0.0))
        return positions, lead, waits_in(stalls, float("-inf"), float("inf")), stall_events

    def _make_plan(self):
        positions, lead, stall_ms, stall_events = self._timed_positions()
        s = _default().stats(self.device)
        peak = s["reserved_bytes.all.peak"]  # physical pages: what the cap counts
        h2d, d2h = self._gbps
        h2d = h2d or 50.0
        d2h = d2h or 45.0
        ap = self._act.last_plan() if self._act is not None else None
        need, at_cap = plan_need(peak, self.budget, self.margin, ap, self._act_window,
                                 max((q["bytes"] for q in positions), default=0))
        room = (self.budget - self.margin - need) if self.budget else 1 << 62
        self._profile = dict(version=1, budget=self.budget, margin=self.margin, peak_all_tiered=peak,
                             profile_at_cap=at_cap,
                             profile_stall_ms=stall_ms,
                             activations=({k: v for k, v in ap.items() if k in _ACT_PROFILE_KEYS}
                                          if ap is not None else None),
                             room=room, h2d_gbps=h2d, d2h_gbps=d2h, timed_iteration=self._iteration,
                             positions=positions, lead_ms=lead,
                             backward_ms=positions[-1]["t_ms"] if positions else 0.0)
        if self._retime_after is not None:
            self._retime_at = self._iteration + self._retime_after
        if room < 0:  # nothing the plan moves can make it fit: say what stays
            weights = sum(q.nbytes for q in self.model.parameters()) if isinstance(self.model, _torch.nn.Module) else 0
            parts = [f"the weights {weights}"] if weights else []
            if ap is not None and ap["nonact_bytes"] is not None:
                parts += [f"what the forward's end holds besides saved activations {ap['nonact_bytes']} (weights "
                          f"included)", f"saved tensors that cannot leave {ap['must_keep_bytes']}",
                          f"the forward's transients {ap.get('transient_bytes', 0)}"]
            raise PlanError(f"tier(): the budget of {self.budget} bytes (margin {self.margin}) is below what one "
                            f"iteration needs with every optimizer state and saved activation off the GPU: "
                            f"{need} bytes at its peak" + (" (the forward's end, the activation plan's count; the "
                                                           "profile iteration's peak met the cap)" if at_cap else "") +
                            f", {-room} more than the budget less the margin"
                            + (f" (of it, in bytes: {'; '.join(parts)})" if parts else "")
                            + f"; it needs a budget above {need + self.margin} bytes, or checkpointing, or a "
                            f"smaller batch")
        try:
            p = _plan(positions, room, h2d_gbps=h2d, d2h_gbps=d2h, lead_ms=lead)
        except PlanError as e:
            raise PlanError(f"tier(): the budget of {self.budget} bytes (margin {self.margin}) is below what one "
                            f"iteration needs with every optimizer state off the GPU (peak {peak} bytes): {e}") from None
        self._adopt(p, positions, lead, stall_events, ap)

    def _retime(self):
        """The timed iteration (retime_at after the profile): the profile iteration's times are a cold
        iteration's (first allocations and launches, the activation profile's operator tracking, every
        state restored on demand), often several times a steady one's, so restores planned on them
        are issued too late. This one followed the plan; its times, less its waits on restores,
        replace the profile's and the states are planned again on them (same room, same link rates).
        An iteration that did not run the plan whole (another shape, a mismatch, another order) is
        not timed: the next one is, up to three tries. A failure here keeps the plan (training goes
        on): `retime_error` in the profile says what it was."""
        ap = self._act.current_plan() if self._act is not None else None
        q = self._profile
        why = None
        if [r["param"] for r in q["positions"]] != self._order or not self._events:
            why = "another order of steps"
        elif self._act is not None and ap is None:
            why = "the activations did not run their plan whole"
        if why:
            self._stalls.clear()
            self._st["retime_skipped"] += 1
            q["retime_skipped_why"] = why
            if self._st["retime_skipped"] < 3:
                self._retime_at += 1
            return
        try:
            positions, lead, stall_ms, stall_events = self._timed_positions()
            p = _plan(positions, q["room"], h2d_gbps=q["h2d_gbps"], d2h_gbps=q["d2h_gbps"], lead_ms=lead)
            first_ms = q["backward_ms"] + q["lead_ms"]
            # The timeline where the activations have a plan that moves something (as the profile's).
            self._adopt(p, positions, lead, stall_events, ap if ap and ap.get("groups") else None)
        except Exception as e:  # noqa: BLE001 - an optimisation: the profile's plan stays
            q["retime_error"] = f"{type(e).__name__}: {e}"
            return
        q["first_iteration_ms"] = first_ms
        q["timed_stall_ms"] = stall_ms
        q["timed_iteration"] = self._iteration
        self._st["retimed_at"] = self._iteration

    def _adopt(self, p, positions, lead, stall_events, ap):
        """Plan p (on these positions) becomes the one every later iteration follows, and the profile's."""
        self._profile.pop("timeline_text", None)  # an earlier iteration's, which no longer matches
        self._profile.pop("timeline_error", None)
        self._plan = p
        self._profile.update(positions=positions, backward_ms=positions[-1]["t_ms"] if positions else 0.0,
                             lead_ms=lead,
                             plan=dict(resident=[positions[k]["param"] for k in p["resident"]],
                                       tiered=[positions[k]["param"] for k in p["tiered"]],
                                       window_bytes=p["window_bytes"], resident_bytes=p["resident_bytes"],
                                       stall_ms=p["stall_ms"], link_ms=p["link_ms"], predicted_ms=p["predicted_ms"]))
        if self._act is not None and self._act.timeline and self._fwd_event is not None and ap is not None:
            try:
                h2d, d2h = self._profile["h2d_gbps"], self._profile["d2h_gbps"]
                self._profile["timeline_text"] = self._timeline_text(stall_events, positions, p, ap, h2d, d2h)
            except (ValueError, KeyError, RuntimeError) as e:  # a profile is an extra: training goes on
                self._profile["timeline_error"] = str(e)
        tiered_params = {positions[k]["param"] for k in p["tiered"]}
        self._tiered = [i in tiered_params for i in range(len(self._params))]
        self._issue_at = {}
        self._restore_pos = {positions[k]["param"]: p["issue"][k] for k in p["tiered"]}
        for k in p["tiered"]:
            at = p["issue"][k]  # -1: at the end of the previous iteration (before forward)
            if at == k:
                continue  # no lookahead: restored at its use (on demand)
            self._issue_at.setdefault(at, []).append(positions[k]["param"])
        # What the plan keeps resident comes back now.
        for i in range(len(self._params)):
            if not self._tiered[i]:
                self._restore(i, planned=True, wait=True)
                self._ready(i)

    # ---- observability
    def stats(self):
        r = _res.residency_stats(device=self.device)
        out = dict(self._st, iteration=self._iteration, planned=self._plan is not None,
                   tiered_params=sum(self._tiered), params=len(self._params),
                   host_tier_used=r["host_used"], evicted_bytes_now=r["evicted_bytes_now"],
                   # the disk tier's own file I/O (busy time of each direction, and of either); disk_write_s /
                   # disk_read_s above are the host's: issuing the demotions, waiting in restores for reads
                   disk_io_written=r.get("disk_written", 0), disk_io_read=r.get("disk_read", 0),
                   disk_io_write_s=r.get("disk_write_seconds", 0.0), disk_io_read_s=r.get("disk_read_seconds", 0.0),
                   disk_io_busy_s=r.get("disk_busy_seconds", 0.0), disk_fetches=r.get("fetches", 0),
                   disk_failures=r.get("disk_failures", 0), reclaimed=r.get("reclaimed", 0),
                   reclaimed_bytes=r.get("reclaimed_bytes", 0), pressure_waits=r.get("pressure_waits", 0),
                   pressure_s=r.get("pressure_seconds", 0.0))
        if self._plan:
            out.update(plan_window_bytes=self._plan["window_bytes"], plan_resident_bytes=self._plan["resident_bytes"],
                       plan_stall_ms=self._plan["stall_ms"])
        if self._act is not None:
            out.update(self._act.st, act_plans=self._act.plans())
        return out

    def profile(self):
        """The profile the plan was made from (None before it); with activation tiering, also the
        memory check of a later planned iteration against the activation plan (`memory_check`:
        act_tier.check_memory), once one ran."""
        if self._profile and self._act is not None:
            ap = self._act.last_plan()
            if ap is not None and ap.get("memory_check") is not None:
                self._profile["memory_check"] = ap["memory_check"]
        return self._profile

    def save_profile(self, path):
        """The profile iteration as a memlake profile (text): `memlake tier
        profile PATH` prints it with its plan, `memlake sim --profile PATH`
        simulates it on the machine its lines describe (the room this run's
        budget left, the link rates it planned with). With activation tiering
        the file holds the whole iteration (forward boundaries, backward reads
        and steps, saved storages as transient tensors) and the moves this run
        executes, which the simulator replays as the policy "recorded"."""
        if not self._profile or "plan" not in self._profile:
            raise Error("tier(): no profile yet (the first iteration is the profile, and it must have made a plan)")
        q = self._profile
        # With activations: the whole iteration and the moves this run executes ("recorded" in
        # `memlake sim --profile`); else the optimizer steps alone.
        text = q.get("timeline_text") or _profile_text(
            q["positions"], lead_ms=q["lead_ms"], name="tier",
            machine=_machine_lines(q["room"], q["h2d_gbps"], q["d2h_gbps"]))
        head, rest = text.split("\n", 1)
        with open(path, "w") as f:
            timed = (f"times of iteration {q['timed_iteration']} (the profile iteration's were {q['first_iteration_ms']:.3f} ms "
                     f"to its last step)" if "first_iteration_ms" in q else "times of the profile iteration")
            f.write(f"{head}\n# memlake.torch.tier(): budget {q['budget']} bytes, margin {q['margin']}, peak with every "
                    f"state tiered {q['peak_all_tiered']}{' (at the cap)' if q.get('profile_at_cap') else ''}; planned stall {q['plan']['stall_ms']:.3f} ms, predicted "
                    f"iteration {q['plan']['predicted_ms']:.3f} ms; {timed}\n")
            f.write(_act_transient_comment(q.get("activations")) + rest)

    def close(self):
        """Every state back on the GPU, the hooks and the optimizer's methods and the memory cap as
        they were (the budget was the tiering's: everything it moved needs more than the budget)."""
        if self.budget:
            _default().set_memory_cap(self._prev_cap)
        for h in self._hooks:
            h.remove()
        self._hooks = []
        if self._act is not None:
            self._act.close()
        for i in range(len(self._params)):
            self._restore(i, planned=True, wait=True)
            self._ready(i)
        _res.settle(device=self.device)
        self.optimizer.step, self.optimizer.state_dict = self._user_step, self._user_state_dict
        if self._deferred_error is not None:  # a disk move of the last backward failed, no step since
            e, self._deferred_error = self._deferred_error, None
            raise e


def tier(model, optimizer, budget=None, host="auto", **kw):
    """Trains past GPU memory: see this module's docstring. budget: bytes or
    '24G' (also set as memlake's memory cap); host: pinned host memory to
    reserve for the host tier now ("auto": twice the trainable parameters'
    bytes, AdamW's two states; None: grow on demand). activations: also move
    saved activations (with a budget; default True); act_window: bytes restored
    ahead of backward (default max(256 MiB, budget/32)); act_prefetch_room: also
    restore ahead beyond the window while memory has room (default True); host_limit: bytes of
    the host tier optimizer states may hold, the rest go to the disk tier (in
    backward a few steps after their eviction, and at each iteration's end;
    needs enable(disk_tier=DIR)), written, and read back
    ahead of their restores on the disk tier's I/O threads while the host tier
    holds at most host_limit + disk_window (default 1 GiB); retime_at: how many iterations after
    the profile one is timed again to plan the states on steady times (default 2; None: keep
    the profile's). Returns a Tiering handle."""
    return Tiering(model, optimizer, budget=budget, host=host, **kw)
