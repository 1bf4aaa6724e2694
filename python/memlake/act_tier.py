"""Activations off the GPU between forward and backward, at the same
addresses (the activation half of memlake.torch.tier(); docs/design/tiering.md).

What autograd saves for backward (saved-tensor hooks) is grouped by storage;
a storage whose last forward use is behind leaves the GPU through the
residency engine (its virtual address stays reserved, the tensors over it
stay valid) and comes back before backward reads it. Nothing is copied into
new tensors and nothing the model holds changes.

When a storage may leave is learnt, never guessed. Forward pre-hooks on every
module number the forward's *boundaries*. In a profile iteration a dispatch
mode sees every operator's tensor arguments (reads and writes alike), from
the forward until the optimizer step: it records the last boundary at which
each saved storage is used, pins a storage used after the forward (the
caller's code) or read in backward other than through autograd's saved
tensors (a checkpoint's recomputation), and if it finds an argument that
already left (the profile iteration evicts eagerly, a few boundaries after
each storage's last use so far) it brings it back before the operator runs,
so the profile iteration is correct whatever the model does. Later
iterations run without the dispatch mode: a storage leaves at the boundary
after its last use in the profile, which has been queued on the GPU by then
(an eviction waits for the work queued on the storage's stream). They are
checked against the profile as they go: the input signature (tensor shapes
and dtypes, and the plain values passed with them) selects the profile (a
new signature is profiled first; at most `max_plans` are kept, and a
signature whose iterations keep leaving its profile is no longer tiered),
and any saved storage that does not match the profile's (count, size,
boundary) stops every eviction for the rest of that iteration.

Backward: a saved tensor's unpack restores its storage if it is away (on
demand), and each unpack issues the planned restores of the storages
backward reads next, while the bytes restored ahead stay within a window.
A planned restore does not make the stream wait when it is issued, only at
the storage's own unpack, so its copy overlaps the backward work between.

Safety nets: an iteration that ends without its backward (a forward that
raised, a forward whose graph was dropped) brings every storage back in
finish(); a storage is known by its address and a weak reference to it, so
a freed one is never taken for a new one at the same address; an in-place
change to a saved tensor is the error autograd gives without hooks.

Not handled (documented, not detected): operators that read device memory
behind the dispatcher's back (a custom extension given a raw pointer, a
torch.compile'd region: use tier() on eager models), and data-dependent
control flow that changes which tensors a step reads without changing its
input signature. While another dispatch mode is active when a profile
iteration starts, that iteration is not profiled (no activation moves).
"""
import functools
import math
import sys
import time
import weakref

import torch as _torch

try:
    from torch.utils._python_dispatch import TorchDispatchMode as _DispatchMode
    from torch.utils._python_dispatch import _get_current_dispatch_mode, _len_torch_dispatch_stack
    from torch.utils._pytree import tree_flatten as _flatten
except ImportError:  # pragma: no cover - every torch memlake supports has them
    _DispatchMode = object
    _flatten = _get_current_dispatch_mode = _len_torch_dispatch_stack = None
from torch.multiprocessing.reductions import StorageWeakRef as _StorageRef

__all__ = ["ActivationTiering", "ResidencyMover", "check_memory", "fit_boundaries", "host_timed", "storage_of"]

_SCALARS = (bool, int, float, str, type(None))


def _storage(t):
    return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()


def storage_of(t):
    """(start address, bytes) of a tensor's storage."""
    s = _storage(t)
    return s.data_ptr(), s.nbytes()


def timed_wait(log, fn):
    """fn(), and where log is a list, the (CUDA event before, event after) pair around it: an
    on-demand restore's wait on the stream, which a profile takes off its timeline (waits_in)."""
    if log is None:
        return fn()
    a = _torch.cuda.Event(enable_timing=True)
    a.record()
    out = fn()
    b = _torch.cuda.Event(enable_timing=True)
    b.record()
    log.append((a, b))
    return out


def host_timed(stats, key):
    """A method decorator: the host's seconds in it add up in self.<stats>[key] (the hooks' own time,
    beside the GPU's: where the host falls behind, the GPU idles between kernels)."""
    def wrap(fn):
        @functools.wraps(fn)
        def timed(self, *args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(self, *args, **kwargs)
            finally:
                getattr(self, stats)[key] += time.perf_counter() - t0
        return timed
    return wrap


def waits_in(waits, lo, hi):
    """Milliseconds of the (start, end) waits that fall within [lo, hi]."""
    return sum(max(0.0, min(e, hi) - max(s, lo)) for s, e in waits)


def _plain(t):
    """A dense tensor with a storage of its own kind (not sparse, nested, meta or a subclass)."""
    return type(t) in (_torch.Tensor, _torch.nn.Parameter) and t.layout == _torch.strided and not t.is_meta


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

    def restore(self, key, t, wait=True):
        self._res.restore(key, device=self.device, wait=wait)

    def ready(self, key):
        self._res.ready(key, device=self.device)

    def spare(self, key, t=None):
        """Kept on the GPU until backward, not touched before ready(): evicted only under pressure."""
        from . import InvalidArgumentError
        try:
            self._res.spare(key, device=self.device)
        except InvalidArgumentError:
            return False
        return True

    def settle(self):
        self._res.settle(device=self.device)

    def reclaimed_bytes(self):
        """Bytes the engine has taken back under memory pressure so far (restores issued ahead, spares)."""
        return self._res.residency_stats(device=self.device)["reclaimed_bytes"]

    def watermark(self, reset=True):
        """(allocated bytes now, the most allocated since the last reset): a profile reads it at
        every forward boundary, for what each module allocates and frees inside itself (cuDNN's
        workspaces are no tensors the profile sees). Evicted allocations stay allocated, so the
        profile's own evictions and restores leave peak - start alone. memlake_watermark: apart
        from the peaks the user sees and resets."""
        from . import _default
        return _default().watermark(self.device, reset)

    def memory(self):
        """(bytes of live allocations on the GPU, of them still leaving, physical bytes reserved,
        bytes taken back under pressure so far): the host's view, which is what an allocation at
        the cap meets. A planned iteration's memory check reads it at every boundary."""
        from . import _default
        s = _default().stats(self.device)
        r = self._res.residency_stats(device=self.device)
        return (s["allocated_bytes.all.current"] - r["evicted_bytes_now"], r["leaving_bytes_now"],
                s["reserved_bytes.all.current"], r["reclaimed_bytes"])

    def gpu_bytes(self):
        """Bytes of live allocations on the GPU now (allocated, less what is evicted)."""
        return self.memory()[0]


class _Group:
    """One saved storage in this iteration."""
    __slots__ = ("key", "nbytes", "first", "ref", "views", "away", "ahead", "last_use", "bwd_rank", "evictable",
                 "spare", "gone")

    def __init__(self, key, nbytes, first, storage):
        self.key, self.nbytes, self.first = key, nbytes, first
        self.ref = _StorageRef(storage)  # the storage itself: dead once freed, whatever holds its tensors
        self.views = []         # weak references to the tensors packed on it (a live one for the mover)
        self.away = False       # evicted (or leaving)
        self.ahead = False      # restored ahead of its first unpack, its stream not yet waiting
        self.last_use = -1      # profile: the last boundary at which an operator used it
        self.bwd_rank = None    # order of its first unpack in backward
        self.evictable = True
        self.spare = False      # kept by the plan, marked spare: the engine may evict it under pressure
        self.gone = None        # profile: the first boundary at which it was seen freed (None: alive at the end)

    def alive(self):
        return not self.ref.expired()

    def tensor(self):
        for r in self.views:
            t = r()
            if t is not None:
                return t
        return None


class _Tracker(_DispatchMode):
    """Profile iterations: every operator's tensor arguments are uses."""

    def __init__(self, owner):
        super().__init__()
        self.owner = owner
        self.disabled = False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        o = self.owner
        if self.disabled or o._busy:  # left behind on the stack, or the mover's own operators
            return func(*args, **kwargs)
        if o._groups:
            for a in _flatten((args, kwargs))[0]:
                if isinstance(a, _torch.Tensor) and _plain(a):
                    o._used(a)
        out = func(*args, **kwargs)
        if o._in_forward:  # the forward's largest new tensor: what its transient peak is sized by
            for t in _flatten(out)[0]:
                if isinstance(t, _torch.Tensor) and t.is_cuda and _plain(t):
                    o._largest_out = max(o._largest_out, storage_of(t)[1])
        return out


class ActivationTiering:
    """See the module's doc. window: bytes restored ahead in backward; keep_bytes: bytes of
    movable saved storages that stay (None: budget_fn decides); exclude: storage addresses never
    moved (parameters). mover: ResidencyMover or a stand-in with the same methods (tests)."""

    LAG = 4  # profile iterations: boundaries between a storage's last use so far and its eviction

    def __init__(self, model, mover, window=1 << 30, exclude=(), keep_bytes=None, max_plans=16):
        self.model, self.mover, self.window = model, mover, window
        self.keep_bytes = keep_bytes  # bytes of evictable saved storages that stay resident (None: plan)
        self.max_plans = max_plans
        self.room_fn = None           # () -> bytes restores ahead may take now beyond the window (None: the
        #                               window alone); tier() sets what its budget leaves
        self.other_bytes_fn = None    # () -> bytes the owner keeps on the GPU beside the plan's count (the
        #                               optimizer states its own plan keeps): added to the memory check's plan
        self.memory_check_run = 3     # a plan's run whose boundaries are checked against it (0: none; tier()
        #                               times the second run again, the third runs as every later one)
        self.stall_log = None         # a list: on-demand restores and the waits for restores issued ahead
        #                               append (CUDA event before, after)
        self.timeline = None          # a list: while set (by the owner, for the iterations it times), every
        #                               boundary ("b", counter), the forward's end ("end", counter) and each
        #                               storage's first read in backward ("u", group) append (kind, key, event);
        #                               each planned restore ("r", (group, the group whose read issued it), None)
        self._exclude = set(exclude)  # storage addresses never moved (parameters)
        self._plans = {}              # input signature -> plan (dict)
        self._unstable = {}           # signature -> iterations that left its plan
        self._own = set()             # signatures that left a larger shape's plan: profiled next time
        self._covering = False        # this iteration runs a larger shape's plan (sizes may be smaller)
        self._last_plan = None
        self._plan = None             # this iteration's plan, None in a profile iteration
        self._active = False          # an iteration is under way (hooks seen its forward start)
        self._in_forward = False
        self._hooks_ctx = None
        self._tracker = None
        self._busy = False
        self._sig = None
        self._exc_at_start = None
        self._reset()
        self.st = dict(act_iterations=0, act_profiles=0, act_mismatches=0, act_evictions=0, act_evicted_bytes=0,
                       act_restores_planned=0, act_restores_on_demand=0, act_late_uses=0, act_restored_bytes=0,
                       act_passive=0, act_aborted=0, act_returned_at_end=0, act_covered=0, act_prefetch_deferred=0,
                       act_reclaimed_fwd_bytes=0, act_reclaimed_bwd_bytes=0, act_host_s=0.0)
        self._reclaimed_mark = None  # the engine's reclaimed bytes at the forward's start, then at its end
        start = self._on_start if _takes("register_forward_pre_hook", "with_kwargs") else self._on_start_args
        kw = dict(with_kwargs=True) if start == self._on_start else {}
        self._handles = [model.register_forward_pre_hook(start, **kw)]
        self._handles += [m.register_forward_pre_hook(self._on_boundary) for m in model.modules()]
        kw = dict(always_call=True) if _takes("register_forward_hook", "always_call") else {}
        self._handles.append(model.register_forward_hook(self._on_end, **kw))

    def _reset(self):
        self._counter = 0
        self._groups = {}       # storage address -> _Group (the latest at that address)
        self._order = []        # groups in first-pack order
        self._packs = []        # (group index, boundary) of every pack, in order
        self._bwd = 0           # first unpacks so far (they rank the groups)
        self._queue_pos = 0
        self._ahead_bytes = 0
        self._ahead = []        # groups restored ahead and not read yet
        self._halted = False    # a mismatch: no more evictions this iteration
        self._fwd_end_counter = None
        self._nonact = None
        self._largest_out = 0         # profile: bytes of the forward's largest new CUDA tensor
        self._wm = None               # profile: the mover's watermark, where it has one
        self._at = []                 # profile, measured: (allocated bytes, saved storages' bytes) at each
        #                               boundary (index = counter; 0: the forward's start), then at its end
        self._trans = []              # profile, measured: each forward interval's transient (index = the
        #                               boundary that starts it): allocated peak in it less allocated at its start
        self._mem = None              # a checked planned iteration: mover.memory() at each boundary

    # ---- forward
    def _on_start_args(self, module, args):
        self._start(args, {})

    def _on_start(self, module, args, kwargs):
        self._start(args, kwargs)

    def _signature(self, args, kwargs):
        out = []
        for a in _flatten((args, kwargs))[0]:
            if isinstance(a, _torch.Tensor):
                out.append((tuple(a.shape), str(a.dtype), str(a.device)))
            elif isinstance(a, _SCALARS):
                out.append((type(a).__name__, a))
            else:
                out.append(type(a).__name__)
        return tuple(out)

    @host_timed("st", "act_host_s")
    def _start(self, args, kwargs):
        if not _torch.is_grad_enabled():
            return  # an evaluation forward (under no_grad) saves nothing: the iteration goes on
        self.finish()
        self._reset()
        self._active = True
        self._in_forward = True
        self._exc_at_start = sys.exc_info()[1]  # a forward run inside an except block is not an abort
        self.st["act_iterations"] += 1
        self._reclaimed_mark = self._reclaimed()
        sig = self._signature(args, kwargs)
        self._sig = sig
        self._plan = self._plans.get(sig)
        self._covering = False
        if self._plan is not None:  # its own plan: counted, and checked on one of its runs
            self._plan["runs"] = self._plan.get("runs", 0) + 1
            if self._plan["runs"] == self.memory_check_run and self._plan.get("resident_plan") and \
                    hasattr(self.mover, "memory"):
                self._mem = [self.mover.memory()]
        if self._plan is None and sig not in self._own and self._unstable.get(sig, 0) < 2:
            # A shape no larger than a profiled one runs that one's plan at once (no profile
            # iteration): the same operators save the same storages, none larger, so what the
            # plan keeps fits where the larger one's did. Every pack is still checked.
            self._plan = self._cover(sig)
            if self._plan is not None:
                self._covering = True
                self.st["act_covered"] += 1
        if self._plan is None:
            modes = _len_torch_dispatch_stack() if _len_torch_dispatch_stack else 0
            if self._unstable.get(sig, 0) >= 2 or len(self._plans) >= self.max_plans or modes:
                self._plan = _PASSIVE  # not profiled: nothing moves this iteration
                self.st["act_passive"] += 1
            else:
                self.st["act_profiles"] += 1
                self._largest_out = 0
                self._tracker = _Tracker(self)
                self._tracker.__enter__()
                # Each forward interval's transient, from the allocator's watermark (a stand-in mover
                # without one: the plan falls back to twice the largest new tensor).
                wm = getattr(self.mover, "watermark", None)
                w = wm(True) if wm is not None else None
                if w is not None:
                    self._wm, self._at = wm, [(w[0], 0)]
        self._hooks_ctx = _torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._hooks_ctx.__enter__()

    def _cover(self, sig):
        """The plan of the smallest profiled signature that covers `sig` (same arguments, each
        tensor of the same dtype, device and rank and no dimension larger), or None."""
        best, best_size = None, None
        for other, plan in self._plans.items():
            size = _covers(other, sig)
            if size is not None and (best_size is None or size < best_size):
                best, best_size = plan, size
        return best

    @host_timed("st", "act_host_s")
    def _on_boundary(self, module, args):
        if not self._in_forward:
            return
        self._counter += 1
        c = self._counter
        if self._wm is not None:
            self._measure()
        if self.timeline is not None:
            self._mark("b", c)
        if self._plan is _PASSIVE:
            return
        if self._plan is not None:
            if self._halted:
                return
            for first in self._plan["evict_at"].get(c, ()):
                g = self._order[first] if first < len(self._order) else None
                if g is None or g.away or not g.alive() or not self._fits(g.nbytes, self._plan["nbytes"][first]):
                    self._mismatch()
                    return
                self._evict(g)
            spare = getattr(self.mover, "spare", None)
            for first in (self._plan.get("spare_at", {}).get(c, ()) if spare is not None else ()):
                g = self._order[first] if first < len(self._order) else None
                if g is not None and not g.away and g.alive() and g.bwd_rank is None:
                    g.spare = spare(g.key, g.tensor())
            if self._mem is not None:
                self._mem.append(self.mover.memory())
        else:  # profile: evict what has not been used for LAG boundaries (a later use brings it back)
            for g in self._order:
                if not g.away and g.evictable and g.last_use <= c - self.LAG and g.alive():
                    self._evict(g)

    def _measure(self):
        """Profile: closes the forward interval that ends here (a boundary, or the forward's end)
        and opens the next. Its transient is the allocator's peak since the interval's start less
        what was allocated at its start: what the module allocated and freed inside itself on top
        of what it began with (its output and the storages it saved included; they are in the next
        boundary's count from then on). Eviction does not change allocated bytes (an evicted
        allocation is still one), so the profile's own evictions, leaving or gone, and its on-demand
        restores cancel out of that difference; only allocations inside the interval count."""
        now, peak = self._wm(True)
        self._trans.append(max(0, peak - self._at[-1][0]))
        here = 0
        for g in self._order:
            if g.gone is None:
                if g.alive():
                    here += g.nbytes
                else:
                    g.gone = len(self._at)
        self._at.append((now, here))

    @host_timed("st", "act_host_s")
    def _on_end(self, module, args, output):
        if not self._in_forward:
            return
        if self._hooks_ctx is not None:
            self._hooks_ctx.__exit__(None, None, None)
            self._hooks_ctx = None
        self._in_forward = False
        exc = sys.exc_info()[1]
        if exc is not None and exc is not self._exc_at_start:  # it raised (an always_call hook runs in its except)
            self.st["act_aborted"] += 1
            self._halted = True
            self.finish()
            return
        self._fwd_end_counter = self._counter
        if self._mem is not None:
            if not self._halted:
                other = self.other_bytes_fn() if self.other_bytes_fn is not None else 0
                mc = check_memory([b + other for b in self._plan["resident_plan"]], self._mem)
                self._plan["memory_check"] = dict(mc, other_bytes=other)
            self._mem = None
        if self._wm is not None:
            self._measure()
            self._wm = None
        self._count_reclaimed("act_reclaimed_fwd_bytes")
        if self.timeline is not None:
            self._mark("end", self._counter)
        if self._plan is None:
            # What the forward's end holds besides the saved storages (weights, the output, small
            # tensors): measured once the evictions have unmapped, for the plan.
            self.mover.settle()
            here = sum(g.nbytes for g in self._order if not g.away and g.alive())
            gpu = self.mover.gpu_bytes()
            self._nonact = None if gpu is None else max(0, gpu - here)

    @host_timed("st", "act_host_s")
    def _pack(self, t):
        if not isinstance(t, _torch.Tensor):
            return (t, None, None)
        # Not t itself where it has a grad_fn: a saved output would then hold its own grad_fn (a cycle).
        saved = t.detach() if t.grad_fn is not None else t
        version = t._version
        if not _plain(t) or not self.mover.eligible(t) or self._plan is _PASSIVE:
            return (saved, None, version)
        key, nbytes = storage_of(t)
        if key in self._exclude:
            return (saved, None, version)
        g = self._groups.get(key)
        if g is None or not g.alive():  # a new storage (at a freed one's address, maybe)
            g = _Group(key, nbytes, len(self._order), _storage(t))
            self._groups[key] = g
            self._order.append(g)
        g.views.append(weakref.ref(saved))
        self._packs.append((g.first, self._counter))
        g.last_use = max(g.last_use, self._counter)
        if self._plan is not None and not self._halted:
            k = len(self._packs) - 1
            exp, nb = self._plan["packs"], self._plan["nbytes"]
            if k >= len(exp) or exp[k] != (g.first, self._counter) or g.first >= len(nb) or \
                    not self._fits(g.nbytes, nb[g.first]):
                self._mismatch()
        return (saved, g, version)

    def _used(self, t):
        g = self._groups.get(storage_of(t)[0])
        if g is None or not g.alive():
            return
        if self._in_forward:
            g.last_use = max(g.last_use, self._counter)
        elif self._bwd == 0:  # used between the forward and backward (outside the model): it stays
            g.last_use = max(g.last_use, self._counter + 1)
        elif g.bwd_rank is None:  # read in backward before autograd's own read (a recomputation): it stays
            g.evictable = False
        if g.away:
            if self._in_forward:
                self.st["act_late_uses"] += 1
            self._restore(g, planned=False)

    def _fits(self, nbytes, planned):
        return nbytes <= planned if self._covering else nbytes == planned

    def _mismatch(self):
        # The iteration left the profile: stop evicting, profile this signature again next time
        # (twice in a row: it is not tiered any more). Left a larger shape's plan: its own profile next.
        if not self._halted:
            self._halted = True
            self.st["act_mismatches"] += 1
            if self._covering:
                self._own.add(self._sig)
            elif self._plans.pop(self._sig, None) is not None:
                self._unstable[self._sig] = self._unstable.get(self._sig, 0) + 1

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
        self._busy = True
        try:
            timed_wait(None if planned else self.stall_log,
                       lambda: self.mover.restore(g.key, g.tensor(), wait=not planned))
        finally:
            self._busy = False
        g.away = False
        self.st["act_restores_planned" if planned else "act_restores_on_demand"] += 1
        self.st["act_restored_bytes"] += g.nbytes

    # ---- backward
    @host_timed("st", "act_host_s")
    def _unpack(self, packed):
        t, g, version = packed
        if version is not None and t._version != version:
            raise RuntimeError("one of the variables needed for gradient computation has been modified by an "
                               f"inplace operation: a saved {tuple(t.shape)} tensor is at version {t._version}; "
                               f"expected version {version} (memlake.torch.tier() saved it)")
        if g is None:
            return t
        if g.bwd_rank is None:
            g.bwd_rank = self._bwd
            self._bwd += 1
            if self.timeline is not None:
                self._mark("u", g.first)
        if g.spare:  # kept, marked spare: back if the engine took it under pressure, the mark ends
            g.spare = False
            timed_wait(self.stall_log, lambda: self.mover.ready(g.key))
        if g.ahead:  # restored ahead: its stream waits for the copy here, not when it was issued
            g.ahead = False
            self._ahead.remove(g)
            self._ahead_bytes -= g.nbytes
            timed_wait(self.stall_log, lambda: self.mover.ready(g.key))
        if g.away:
            self._restore(g, planned=False)
        if self._plan is not None and self._plan is not _PASSIVE and not self._halted:
            for h in [h for h in self._ahead if not h.alive()]:  # freed before their read: out of the window
                self._ahead.remove(h)
                h.ahead = False
                self._ahead_bytes -= h.nbytes
            q = self._plan["restore_order"]
            while self._queue_pos < len(q):
                first = q[self._queue_pos]
                h = self._order[first] if first < len(self._order) else None
                if h is None or not h.away or h.bwd_rank is not None:
                    self._queue_pos += 1
                    continue
                if not h.alive():  # freed while away (a branch backward never reads): memlake dropped it
                    self._queue_pos += 1
                    h.away = False
                    continue
                # Within the window, or beyond it where memory has room now (backward frees what it
                # has read: the storages read last, which left first in the forward and have the
                # longest way back, can start back while the link would idle).
                if self._ahead_bytes >= self.window and (self.room_fn is None or self.room_fn() < h.nbytes):
                    break
                self._queue_pos += 1
                try:
                    self._restore(h, planned=True)
                except MemoryError:  # no room for it yet (a prefetch never takes another's): the next read retries
                    self._queue_pos -= 1
                    self.st["act_prefetch_deferred"] += 1
                    break
                h.ahead = True
                self._ahead.append(h)
                self._ahead_bytes += h.nbytes
                if self.timeline is not None:  # where it was issued: after g's read (no event)
                    self.timeline.append(("r", (h.first, g.first), None))
        return t

    def finish(self):
        """The iteration's end (the optimizer step, or the next forward): a profile iteration's plan
        is made here, and whatever is still away (no backward read it) comes back."""
        if not self._active:
            return
        self._active = False
        self._count_reclaimed("act_reclaimed_bwd_bytes" if self._fwd_end_counter is not None else "act_reclaimed_fwd_bytes")
        if self._hooks_ctx is not None:  # a forward that never reached its end (torch without always_call)
            self._hooks_ctx.__exit__(None, None, None)
            self._hooks_ctx = None
        self._in_forward = False
        if self._tracker is not None:
            tr, self._tracker = self._tracker, None
            if _get_current_dispatch_mode is None or _get_current_dispatch_mode() is tr:
                tr.__exit__(None, None, None)
            else:  # another mode was pushed over it and not popped, or popped it: leave the stack alone
                tr.disabled = True
                self._halted = True
            if not self._halted and self._fwd_end_counter is not None:
                if self._order:
                    self._plans[self._sig] = self._last_plan = self._make_plan()
                else:  # nothing it could move: not profiled again (a save that comes later leaves the plan)
                    self._plans[self._sig] = dict(_NOTHING)
        for g in self._order:
            if g.spare:  # never read by backward: the mark ends (and a spare taken comes back)
                g.spare = False
                if g.alive():
                    self.mover.ready(g.key)
            if g.ahead:
                g.ahead = False
                if g.alive():  # a freed one is no allocation any more (and the engine ordered its free)
                    self.mover.ready(g.key)
            if g.away and g.alive():
                self._restore(g, planned=False)
                self.st["act_returned_at_end"] += 1
        self._ahead_bytes = 0
        self._ahead = []

    def _reclaimed(self):
        f = getattr(self.mover, "reclaimed_bytes", None)  # a stand-in mover may have none
        return f() if f is not None else None

    def _count_reclaimed(self, key):
        """Adds what the engine took back under pressure since the last mark to `key` (the forward's
        share, then backward's and the rest of the iteration's): where the plan left too little room."""
        now = self._reclaimed()
        if now is not None and self._reclaimed_mark is not None:
            self.st[key] += now - self._reclaimed_mark
        self._reclaimed_mark = now

    def _make_plan(self):
        end = self._fwd_end_counter
        cand = [g for g in self._order if g.evictable and g.last_use < end]  # used again before the end: stays
        ids = set(map(id, cand))
        must = sum(g.nbytes for g in self._order if id(g) not in ids)
        keep = self.keep_bytes
        # What the forward's end does not show: tensors made and freed inside it. Measured (the
        # watermark): each forward interval's transient, the largest of which sizes the end's too;
        # it includes what the plan could not see before, cuDNN's workspaces (ResNet-152 at 20 GiB
        # lost ~4 GiB of kept activations per iteration to them, results §25b). Twice the forward's
        # largest new tensor stays the floor, and the whole estimate where nothing is measured:
        # the caller's loss after the forward's end (fp32 logits and their softmax) is in no
        # interval, and backward's own transients (gradients the size of a module's input, its
        # workspaces) are not measured at all; the forward's largest stands for them.
        measured = self._trans if self._at and len(self._trans) == end + 1 else None
        floor = 2 * self._largest_out
        transient = max([floor] + (measured or []))
        if keep is None:
            keep = (self.budget_fn(self._nonact + transient, must, sum(g.nbytes for g in cand))
                    if self._nonact is not None else 0)
        # Keep the storages used last in the forward (their stay on the GPU is the shortest); the
        # earliest leave first, since they have the longest way to go before backward needs them.
        cand.sort(key=lambda g: g.last_use)
        kept_set = set()
        kept = 0
        for g in reversed(cand):
            if kept + g.nbytes <= keep:
                kept += g.nbytes
                kept_set.add(id(g))
        fit = dict(fwd_peak_bytes=None, fit_evicted_bytes=0, over_bytes=0, resident_plan=None)
        if measured is not None and self.keep_bytes is None and self._nonact is not None:
            fit = self._fit(cand, kept_set, measured)
            kept -= fit["fit_evicted_bytes"]
        evict, spare_at = [], {}
        for g in cand:
            if id(g) in kept_set:
                # Kept: spare from the boundary after its last use, so that a transient the plan did
                # not foresee evicts it (its bytes copied out, back at its unpack) instead of failing.
                spare_at.setdefault(g.last_use + 1, []).append(g.first)
            else:
                evict.append(g)
        evict_at = {}
        for g in evict:
            evict_at.setdefault(g.last_use + 1, []).append(g.first)
        ranked = sorted((g for g in evict if g.bwd_rank is not None), key=lambda g: g.bwd_rank)
        return dict(packs=list(self._packs), nbytes=[g.nbytes for g in self._order], evict_at=evict_at,
                    spare_at=spare_at, restore_order=[g.first for g in ranked], evicted_bytes=sum(g.nbytes for g in evict),
                    kept_bytes=kept, must_keep_bytes=must, nonact_bytes=self._nonact, transient_bytes=transient,
                    transient_floor_bytes=floor, transient_by_boundary=list(measured) if measured else None,
                    transient_at=max(range(len(measured)), key=measured.__getitem__) if measured else None,
                    groups=len(self._order), profile_groups=self.profile_groups(),
                    boundaries=end, **fit)

    def _fit(self, cand, kept_set, trans):
        """The keep set checked at every forward boundary, not only at the end (kept_set: ids of the
        kept candidates, changed in place). Interval c (from boundary c to the next) holds, at its
        peak: what is on the GPU besides saved storages at boundary c, the interval's transient, the
        saved storages that cannot leave and those that may, created before c, not yet freed, and
        kept or not yet evicted (a storage the plan evicts leaves at last_use + 1). What the GPU
        holds besides saved storages at c is the forward end's (nonact, measured after the
        evictions settled) plus the difference in allocated bytes other than saved storages
        between c and the end: allocated bytes count evicted allocations too, so that difference
        is the same in the profile (which evicts eagerly) and the planned iteration. Where c does
        not fit what budget_fn leaves, kept storages whose last use is before c leave after it
        instead (fit_boundaries). Returns the plan's fit keys: fwd_peak_bytes (the most the forward
        holds at an interval's peak under the plan; plan_need takes it), fit_evicted_bytes (bytes
        this check made leave) and over_bytes (the most still over at a boundary: what the plan
        cannot avoid there, the engine's pressure path takes it). Not exact: a storage counts its
        own bytes and the allocator whole pages (large allocations), so what is not a saved
        storage at c is short by the rounding of the storages the profile had evicted by the end
        and the plan has not at c, at most a page each (none where activations are whole pages, as
        a CNN's and a transformer's large ones are); the end's own count has the same rounding."""
        end = self._fwd_end_counter
        first = {}
        for g, c in self._packs:
            first.setdefault(g, c)
        a_end, g_end = self._at[-1]
        n = end + 1  # intervals 0 .. end
        base = [max(0, self._nonact + (a - here) - (a_end - g_end)) for a, here in self._at[:n]]
        ids = set(map(id, cand))
        must = [0] * (n + 1)
        items = []
        for g in self._order:
            lo, hi = first.get(g.first, 0) + 1, min(end, g.gone - 1 if g.gone is not None else end)
            if id(g) in ids:
                items.append([g.nbytes, lo, hi, g.last_use, id(g) in kept_set])
            elif lo <= hi:
                must[lo] += g.nbytes
                must[hi + 1] -= g.nbytes
        for c in range(1, n):
            must[c] += must[c - 1]
        cand_bytes = sum(g.nbytes for g in cand)
        limits = [self.budget_fn(base[c] + trans[c], must[c], cand_bytes) for c in range(n)]
        by_item = [g for g in self._order if id(g) in ids]
        moved, res, over = fit_boundaries(items, limits)
        for k in moved:
            kept_set.discard(id(by_item[k]))
        return dict(fwd_peak_bytes=max(base[c] + trans[c] + must[c] + res[c] for c in range(n)),
                    fit_evicted_bytes=sum(items[k][0] for k in moved), over_bytes=over,
                    resident_plan=[base[c] + must[c] + res[c] for c in range(n)])

    def _mark(self, kind, key):
        ev = _torch.cuda.Event(enable_timing=True)
        ev.record()
        self.timeline.append((kind, key, ev))

    def profile_groups(self):
        """This iteration's saved storages (index = group): bytes, the boundary of their first save
        and of their last use (past the forward's end: used after it). Only a profile iteration sees
        every use (a planned one sees the saves alone): its list is kept in its plan."""
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

    def current_plan(self):
        """This iteration's plan where it ran whole (its own signature's, no mismatch); else None
        (a profile, a passive iteration, a larger shape's plan, or one that left its plan)."""
        p = self._plan
        if p is None or p is _PASSIVE or self._covering or self._halted:
            return None
        return p

    def last_plan(self):
        """The plan of the latest profiled signature (None before the first)."""
        return self._last_plan

    def close(self):
        self.finish()
        for h in self._handles:
            h.remove()
        self._handles = []


_PASSIVE = dict(packs=[], nbytes=[], evict_at={}, restore_order=[])  # an iteration that moves nothing
# The plan of a shape whose profile found no storage it could move: nothing moves, nothing is tracked.
_NOTHING = dict(packs=[], nbytes=[], evict_at={}, restore_order=[], groups=0, profile_groups=[], evicted_bytes=0,
                kept_bytes=0, must_keep_bytes=0, nonact_bytes=None, transient_bytes=0, transient_floor_bytes=0,
                transient_by_boundary=None, transient_at=None, fwd_peak_bytes=None, fit_evicted_bytes=0, over_bytes=0,
                resident_plan=None, boundaries=0)


def fit_boundaries(items, limits):
    """The per-boundary check of an activation plan (ActivationTiering._fit). items: the movable
    saved storages, each [nbytes, lo, hi, last_use, kept]: on the GPU at boundaries lo to hi (both
    included) if kept, else until it leaves at boundary last_use + 1. limits[c]: the bytes of them
    that boundary c's interval leaves room for. Walking the boundaries in order, where those on
    the GPU exceed the limit, kept ones that can leave by then (last_use < c) leave after their
    last use instead, the earliest used first (the end's own rule: the latest used stay), until
    they fit; a storage made to leave only lowers the later boundaries, so one walk is enough.
    Returns (the indices of the items made to leave, the bytes on the GPU at each boundary after
    that, the most bytes still over a limit: 0 where every boundary fits, else what even evicting
    every kept storage that may leave there does not free)."""
    n = len(limits)
    res = [0] * (n + 1)
    for nb, lo, hi, last, kept in items:
        top = min(hi, n - 1) if kept else min(hi, last, n - 1)
        if lo <= top:
            res[lo] += nb
            res[top + 1] -= nb
    for c in range(1, n):
        res[c] += res[c - 1]
    res.pop()
    order = sorted((k for k, it in enumerate(items) if it[4]), key=lambda k: items[k][3])
    moved, worst = [], 0
    for c in range(n):
        over = res[c] - limits[c]
        if over <= 0:
            continue
        for k in order:
            nb, lo, hi, last, kept = items[k]
            if not kept or last >= c or not lo <= c <= hi:
                continue
            items[k][4] = False
            moved.append(k)
            for c2 in range(c, min(hi, n - 1) + 1):
                res[c2] -= nb
            over -= nb
            if over <= 0:
                break
        worst = max(worst, over)
    return moved, res, worst


def check_memory(planned, points):
    """A planned iteration's forward against its plan, boundary by boundary (the plan's run number
    ActivationTiering.memory_check_run). planned[c]: the bytes the plan has on the GPU at boundary c
    once the evictions issued there are done (its per-boundary check's count, resident_plan);
    points[c]: mover.memory() there, after the plan's evictions at c were issued: (live bytes on the
    GPU, of them still leaving, physical bytes reserved, bytes taken back under pressure so far).
    What it tells apart, where an allocation at the cap had to take memory back: `excess` (on the
    GPU beyond the plan once every copy out is done: what the plan does not count), `leaving`
    (evictions the link has not finished: time, which an allocation at the cap waits for) and
    `overhead` (reserved beyond what is live: the allocator's cache and rounding). Returns the
    lists (reclaimed: since the forward's start) and their summary: the largest excess and where,
    the most leaving and the most overhead, the first boundary reached after memory was taken back
    (None: none was) and the state at the boundary before it."""
    n = min(len(planned), len(points))
    res, lv, rsv = ([int(p[k]) for p in points[:n]] for k in range(3))
    rec = [int(p[3] - points[0][3]) for p in points[:n]]
    excess = [res[c] - lv[c] - planned[c] for c in range(n)]
    over = [rsv[c] - res[c] for c in range(n)]
    at = max(range(n), key=excess.__getitem__) if n else None
    first = next((c for c in range(n) if rec[c] > 0), None)
    before = None
    if first:
        b = first - 1
        before = dict(boundary=b, planned=planned[b], resident=res[b], leaving=lv[b], reserved=rsv[b])
    return dict(boundaries=n, planned=list(planned[:n]), resident=res, leaving=lv, reserved=rsv, reclaimed=rec,
                excess_bytes=excess[at] if n else 0, excess_at=at, leaving_max_bytes=max(lv, default=0),
                overhead_max_bytes=max(over, default=0), first_reclaim_at=first, before_first_reclaim=before,
                reclaimed_bytes=rec[-1] if n else 0)


def _covers(big, small):
    """None unless signature `big` covers `small` (see ActivationTiering._cover); else big's
    elements in all its tensors (to prefer the tightest cover)."""
    if len(big) != len(small):
        return None
    size = 0
    for b, s in zip(big, small):
        tensor_b = isinstance(b, tuple) and len(b) == 3 and isinstance(b[0], tuple)
        tensor_s = isinstance(s, tuple) and len(s) == 3 and isinstance(s[0], tuple)
        if tensor_b and tensor_s:
            if b[1:] != s[1:] or len(b[0]) != len(s[0]) or any(x < y for x, y in zip(b[0], s[0])):
                return None
            size += math.prod(b[0])
        elif b != s:
            return None
    return size


def _takes(method, kw):
    import inspect
    try:
        return kw in inspect.signature(getattr(_torch.nn.Module, method)).parameters
    except (TypeError, ValueError, AttributeError):
        return False
