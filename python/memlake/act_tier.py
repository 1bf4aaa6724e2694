"""Activations off the GPU between forward and backward, at the same
addresses (the activation half of memlake.torch.tier(); docs/design/tiering.md).

What autograd saves for backward (saved-tensor hooks) is grouped by storage;
a storage whose last forward use is behind leaves the GPU through the
residency engine (its virtual address stays reserved, the tensors over it
stay valid) and comes back before backward reads it. Nothing is copied into
new tensors and nothing the model holds changes.

When a storage may leave is learnt, never guessed. Forward pre-hooks on every
module number the forward's *boundaries*. In a profile iteration a dispatch
mode sees every operator's tensor arguments (reads and writes alike): it
records the last boundary at which each saved storage is used, and if it
finds an argument that already left (the profile iteration evicts eagerly,
a few boundaries after each storage's last use so far) it brings it back
before the operator runs, so the profile iteration is correct whatever the
model does. Later iterations run without the dispatch mode: a storage leaves
at the boundary after its last use in the profile, which has been queued on
the GPU by then (an eviction waits for the work queued on the storage's
stream). They are checked against the profile as they go: the input shapes
select the profile (a new shape is profiled first: variable sequence
lengths each get their own), and any saved storage that does not match the
profile's (count, size, boundary) stops every eviction for the rest of that
iteration and profiles that shape again.

Backward: a saved tensor's unpack restores its storage if it is away (on
demand), and each unpack issues the planned restores of the storages
backward reads next, while the bytes restored ahead stay within a window.
The restores and the evictions are the residency engine's: asynchronous, on
their own streams, ordered with compute by events.

Not handled (documented, not detected): operators that read device memory
behind the dispatcher's back (a custom extension given a raw pointer, a
torch.compile'd region: use tier() on eager models), and data-dependent
control flow that changes which tensors a step reads without changing its
input shapes.
"""
import weakref

import torch as _torch

try:
    from torch.utils._python_dispatch import TorchDispatchMode as _DispatchMode
    from torch.utils._pytree import tree_flatten as _flatten
except ImportError:  # pragma: no cover - every torch memlake supports has them
    _DispatchMode = object
    _flatten = None

__all__ = ["ActivationTiering", "ResidencyMover"]


def storage_of(t):
    """(start address, bytes) of a tensor's storage."""
    s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    return s.data_ptr(), s.nbytes()


class ResidencyMover:
    """Moves storages through memlake's residency engine (the default)."""

    def __init__(self, device, min_bytes):
        from . import residency
        self._res, self.device, self.min_bytes = residency, device, min_bytes

    def eligible(self, t):
        return t.is_cuda and storage_of(t)[1] >= self.min_bytes

    def evict(self, key, t):
        from . import InvalidArgumentError
        try:
            self._res.evict(key, device=self.device, wait=False)
        except InvalidArgumentError:
            return False  # not a whole memlake allocation of its own (a slab), or unmovable
        return True

    def restore(self, key, t):
        self._res.restore(key, device=self.device)

    def settle(self):
        self._res.settle(device=self.device)

    def allocated(self):
        from . import _default
        return _default().stats(self.device)["allocated_bytes.all.current"]


class _Group:
    """One saved storage in this iteration."""
    __slots__ = ("key", "nbytes", "first", "refs", "away", "ahead", "last_use", "bwd_rank", "evictable")

    def __init__(self, key, nbytes, first):
        self.key, self.nbytes, self.first = key, nbytes, first
        self.refs = []          # weak references to the tensors packed on it (liveness)
        self.away = False       # evicted (or leaving)
        self.ahead = False      # restored ahead of its first unpack
        self.last_use = -1      # profile: the last boundary at which an operator used it
        self.bwd_rank = None    # profile: order of its first unpack in backward
        self.evictable = True

    def alive(self):
        return self.tensor() is not None

    def tensor(self):
        """A live tensor on the storage (None once every one packed on it is gone)."""
        for r in self.refs:
            t = r()
            if t is not None:
                return t
        return None


class _Tracker(_DispatchMode):
    """Profile iterations: every operator's tensor arguments are uses."""

    def __init__(self, owner):
        super().__init__()
        self.owner = owner

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        o = self.owner
        if o._busy:  # the mover's own operators
            return func(*args, **kwargs)
        for a in _flatten((args, kwargs))[0]:
            if isinstance(a, _torch.Tensor) and o._groups:
                o._used(a)
        return func(*args, **kwargs)


class ActivationTiering:
    """See the module's doc. window: bytes restored ahead in backward; keep_bytes: bytes of
    movable saved storages that stay (None: budget_fn decides); exclude: storage addresses never
    moved (parameters). mover: ResidencyMover or a stand-in with the same methods (tests)."""

    LAG = 4  # profile iterations: boundaries between a storage's last use so far and its eviction

    def __init__(self, model, mover, window=1 << 30, exclude=(), keep_bytes=None):
        self.model, self.mover, self.window = model, mover, window
        self.keep_bytes = keep_bytes  # bytes of evictable saved storages that stay resident (None: plan)
        self.stall_log = None         # a list: on-demand restores append (CUDA event before, after)
        self.timeline = None          # a list: profile iterations append (kind, key, CUDA event) at every
        #                               boundary ("b", counter), the forward's end ("end", counter) and each
        #                               storage's first read in backward ("u", group)
        self._exclude = set(exclude)  # storage addresses never moved (parameters)
        self._plans = {}              # input signature -> plan (dict)
        self._last_plan = None
        self._plan = None             # this iteration's plan, None in a profile iteration
        self._in_forward = False
        self._hooks_ctx = None
        self._tracker = None
        self._busy = False
        self._reset()
        self.st = dict(act_iterations=0, act_profiles=0, act_mismatches=0, act_evictions=0, act_evicted_bytes=0,
                       act_restores_planned=0, act_restores_on_demand=0, act_late_uses=0, act_restored_bytes=0)
        self._handles = [model.register_forward_pre_hook(self._on_start, with_kwargs=True)
                         if _takes_kwargs() else model.register_forward_pre_hook(self._on_start_args)]
        self._handles += [m.register_forward_pre_hook(self._on_boundary) for m in model.modules()]
        self._handles.append(model.register_forward_hook(self._on_end))

    def _reset(self):
        self._counter = 0
        self._groups = {}       # storage address -> _Group
        self._order = []        # groups in first-pack order
        self._packs = []        # (group index, boundary) of every pack, in order
        self._bwd = 0           # unpacks so far (first unpacks rank the groups)
        self._queue_pos = 0
        self._ahead_bytes = 0
        self._halted = False    # a mismatch: no more evictions this iteration
        self._fwd_end_counter = None
        self._nonact = None

    # ---- forward
    def _on_start_args(self, module, args):
        self._start(args, {})

    def _on_start(self, module, args, kwargs):
        self._start(args, kwargs)

    def _start(self, args, kwargs):
        self.finish()
        if not _torch.is_grad_enabled():
            return
        self._reset()
        sig = tuple((tuple(a.shape), str(a.dtype)) for a in _flatten((args, kwargs))[0]
                    if isinstance(a, _torch.Tensor))
        self._sig = sig
        self._plan = self._plans.get(sig)
        self._in_forward = True
        self.st["act_iterations"] += 1
        if self._plan is None:
            self.st["act_profiles"] += 1
            self._tracker = _Tracker(self)
            self._tracker.__enter__()
        self._hooks_ctx = _torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._hooks_ctx.__enter__()

    def _on_boundary(self, module, args):
        if not self._in_forward:
            return
        self._counter += 1
        c = self._counter
        if self.timeline is not None and self._plan is None:
            self._mark("b", c)
        if self._plan is not None:
            if self._halted:
                return
            for first in self._plan["evict_at"].get(c, ()):
                g = self._order[first] if first < len(self._order) else None
                if g is None or g.away or g.nbytes != self._plan["nbytes"][first]:
                    self._mismatch()
                    return
                self._evict(g)
        else:  # profile: evict what has not been used for LAG boundaries (a later use brings it back)
            for g in self._order:
                if not g.away and g.evictable and g.last_use <= c - self.LAG:
                    self._evict(g)

    def _on_end(self, module, args, output):
        if not self._in_forward:
            return
        self._hooks_ctx.__exit__(None, None, None)
        self._hooks_ctx = None
        self._in_forward = False
        self._fwd_end_counter = self._counter
        if self.timeline is not None and self._plan is None:
            self._mark("end", self._counter)
        if self._plan is None:
            # What the forward's end holds besides the saved storages (weights, the output, small
            # tensors): measured once the evictions have unmapped, for the plan.
            self.mover.settle()
            here = sum(g.nbytes for g in self._order if not g.away)
            alloc = self.mover.allocated()
            self._nonact = None if alloc is None else max(0, alloc - here)

    def _pack(self, t):
        if not isinstance(t, _torch.Tensor) or not self.mover.eligible(t):
            return (t, None)
        key, nbytes = storage_of(t)
        if key in self._exclude:
            return (t, None)
        g = self._groups.get(key)
        if g is None or (not g.alive() and not g.away):
            g = _Group(key, nbytes, len(self._order))
            self._groups[key] = g
            self._order.append(g)
        g.refs.append(weakref.ref(t))
        self._packs.append((g.first, self._counter))
        g.last_use = max(g.last_use, self._counter)
        if self._plan is not None and not self._halted:
            k = len(self._packs) - 1
            exp, nb = self._plan["packs"], self._plan["nbytes"]
            if k >= len(exp) or exp[k] != (g.first, self._counter) or g.first >= len(nb) or nb[g.first] != g.nbytes:
                self._mismatch()
        return (t, g)

    def _used(self, t):
        g = self._groups.get(storage_of(t)[0])
        if g is None:
            return
        if self._in_forward:
            g.last_use = max(g.last_use, self._counter)
        elif self._bwd == 0:  # used between the forward and backward (outside the model): it stays
            g.last_use = max(g.last_use, self._counter + 1)
        if g.away:
            if self._in_forward:
                self.st["act_late_uses"] += 1
            self._restore(g, planned=False)

    def _mismatch(self):
        # The iteration left the profile: stop evicting, profile this shape again next time.
        if not self._halted:
            self._halted = True
            self.st["act_mismatches"] += 1
            self._plans.pop(self._sig, None)

    def _evict(self, g):
        self._busy = True
        try:
            ok = self.mover.evict(g.key, g.tensor())
        finally:
            self._busy = False
        if ok:
            g.away = True
            self.st["act_evictions"] += 1
            self.st["act_evicted_bytes"] += g.nbytes
        else:
            g.evictable = False

    def _restore(self, g, planned):
        log = self.stall_log if not planned else None
        if log is not None:
            a = _torch.cuda.Event(enable_timing=True)
            a.record()
        self._busy = True
        try:
            self.mover.restore(g.key, g.tensor())
        finally:
            self._busy = False
        if log is not None:
            b = _torch.cuda.Event(enable_timing=True)
            b.record()
            log.append((a, b))
        g.away = False
        self.st["act_restores_planned" if planned else "act_restores_on_demand"] += 1
        self.st["act_restored_bytes"] += g.nbytes

    # ---- backward
    def _unpack(self, packed):
        t, g = packed
        if g is None:
            return t
        if g.bwd_rank is None:
            g.bwd_rank = self._bwd
            self._bwd += 1
            if self.timeline is not None and self._plan is None:
                self._mark("u", g.first)
            if g.ahead:
                g.ahead = False
                self._ahead_bytes -= g.nbytes
        if g.away:
            self._restore(g, planned=False)
        if self._plan is not None and not self._halted:
            q = self._plan["restore_order"]
            while self._queue_pos < len(q) and self._ahead_bytes < self.window:
                first = q[self._queue_pos]
                self._queue_pos += 1
                h = self._order[first] if first < len(self._order) else None
                if h is not None and h.away and not h.alive():
                    h.away = False  # freed while away (a branch backward never reads): memlake dropped it
                    continue
                if h is not None and h.away and h.bwd_rank is None:
                    self._restore(h, planned=True)
                    h.ahead = True
                    self._ahead_bytes += h.nbytes
        return t

    def finish(self):
        """The iteration's end (the optimizer step, or the next forward): a profile iteration's plan
        is made here."""
        if self._tracker is not None:
            self._tracker.__exit__(None, None, None)
            self._tracker = None
            if self._order and not self._halted and self._fwd_end_counter is not None:
                self._plans[self._sig] = self._last_plan = self._make_plan()
        if self._hooks_ctx is not None:  # a forward that never reached its end (an exception)
            self._hooks_ctx.__exit__(None, None, None)
            self._hooks_ctx = None
        self._in_forward = False

    def _make_plan(self):
        end = self._fwd_end_counter
        cand = [g for g in self._order if g.evictable and g.last_use < end]  # used again before the end: stays
        ids = set(map(id, cand))
        must = sum(g.nbytes for g in self._order if id(g) not in ids)
        keep = self.keep_bytes
        if keep is None:
            keep = self.budget_fn(self._nonact, must, sum(g.nbytes for g in cand)) if self._nonact is not None else 0
        # Keep the storages used last in the forward (their stay on the GPU is the shortest); the
        # earliest leave first, since they have the longest way to go before backward needs them.
        cand.sort(key=lambda g: g.last_use)
        kept, evict = 0, []
        for g in reversed(cand):
            if kept + g.nbytes <= keep:
                kept += g.nbytes
            else:
                evict.append(g)
        evict_at = {}
        for g in evict:
            evict_at.setdefault(g.last_use + 1, []).append(g.first)
        ranked = sorted((g for g in evict if g.bwd_rank is not None), key=lambda g: g.bwd_rank)
        return dict(packs=list(self._packs), nbytes=[g.nbytes for g in self._order], evict_at=evict_at,
                    restore_order=[g.first for g in ranked], evicted_bytes=sum(g.nbytes for g in evict),
                    kept_bytes=kept, must_keep_bytes=must, nonact_bytes=self._nonact, groups=len(self._order),
                    boundaries=end)

    def _mark(self, kind, key):
        ev = _torch.cuda.Event(enable_timing=True)
        ev.record()
        self.timeline.append((kind, key, ev))

    def profile_groups(self):
        """This iteration's saved storages (index = group): bytes, the boundary of their first save
        and of their last use (past the forward's end: used after it)."""
        first = {}
        for g, c in self._packs:
            first.setdefault(g, c)
        return [dict(nbytes=g.nbytes, first_pack=first.get(g.first, 0), last_use=g.last_use) for g in self._order]

    def budget_fn(self, nonact, must_keep, candidates):
        """Bytes of movable saved storages that may stay at the forward's end, given what else it
        holds (nonact: weights, outputs, small tensors; must_keep: saved storages that cannot
        leave). tier() replaces it with what its budget leaves; alone: none stay."""
        return 0

    def plans(self):
        return {str(k): {kk: v for kk, v in p.items() if kk in ("evicted_bytes", "kept_bytes", "must_keep_bytes", "groups",
                                                                 "boundaries")}
                for k, p in self._plans.items()}

    def last_plan(self):
        """The plan of the latest profiled shape (None before the first)."""
        return self._last_plan

    def close(self):
        self.finish()
        for h in self._handles:
            h.remove()
        self._handles = []


def _takes_kwargs():
    import inspect
    try:
        return "with_kwargs" in inspect.signature(_torch.nn.Module.register_forward_pre_hook).parameters
    except (TypeError, ValueError):
        return False
