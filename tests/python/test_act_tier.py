"""Activation tiering's logic on the CPU (memlake.act_tier): what autograd saves leaves at the
boundary after its last forward use and is back before backward reads it.

The stand-in mover poisons a storage with NaN when it "evicts" it and puts the bytes back when
it "restores" it: a storage read while away (in forward or backward) turns the loss or the
gradients into NaN, so equality with the same training without tiering, bit for bit, is the
check. The real mover (the residency engine) runs in tests/python/test_tiering_gpu.py."""
import pytest

torch = pytest.importorskip("torch", reason="PyTorch not installed")

from memlake.act_tier import ActivationTiering, storage_of  # noqa: E402


class PoisonMover:
    """The residency engine's contract on the CPU: an evicted storage reads NaN until restored; a
    storage freed while away is forgotten (as memlake forgets a freed allocation)."""

    def __init__(self, min_bytes=4096):
        self.min_bytes, self.away, self.evictions, self.restores = min_bytes, {}, 0, 0
        self.pending, self.readied = set(), 0  # restores without a wait, not yet ready()
        self.refs = {}

    def live_away(self):
        """Keys of storages away and still alive."""
        return [k for k in self.away if not self.refs[k].expired()]

    def eligible(self, t):
        return t.dtype.is_floating_point and storage_of(t)[1] >= self.min_bytes

    @staticmethod
    def _base(t):
        """A flat tensor over t's whole storage (not kept: the storage dies with its graph)."""
        s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
        if hasattr(t, "untyped_storage"):
            return torch.tensor([], dtype=torch.uint8).set_(s).view(t.dtype)
        return torch.tensor([], dtype=t.dtype).set_(s)

    def evict(self, key, t):
        if key in self.away and self.refs[key].expired():  # freed while away: forgotten, as memlake does
            del self.away[key]
        assert key not in self.away and t is not None
        base = self._base(t)
        from torch.multiprocessing.reductions import StorageWeakRef
        self.away[key] = base.clone()
        self.refs[key] = StorageWeakRef(t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage())
        base.fill_(float("nan"))
        self.evictions += 1
        return True

    def restore(self, key, t, wait=True):
        assert t is not None, "a restore needs a live tensor on the storage"
        self._base(t).copy_(self.away.pop(key))
        self.restores += 1
        if not wait:
            self.pending.add(key)

    def ready(self, key):
        # The engine refuses an address that is no allocation any more (a freed storage).
        assert key not in self.refs or not self.refs[key].expired(), "ready() of a freed storage"
        self.pending.discard(key)
        self.readied += 1

    def settle(self):
        pass

    def gpu_bytes(self):
        return None


class Blocks(torch.nn.Module):
    """A residual stack (transformer-like), with an optional skip from the first block's output
    to the end that no operator saves (torch.cat saves nothing): a use the tiering must see."""

    def __init__(self, n=6, width=64, skip=False, expose=False):
        super().__init__()
        self.expose = expose  # also return the first block's output (the caller reads it)
        self.inp = torch.nn.Linear(width, width)
        self.blocks = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.LayerNorm(width), torch.nn.Linear(width, 2 * width), torch.nn.GELU(),
                                torch.nn.Linear(2 * width, width)) for _ in range(n))
        self.skip = skip
        self.out = torch.nn.Linear(2 * width if skip else width, 1)

    def forward(self, x):
        h = self.inp(x)
        first = None
        for b in self.blocks:
            h = h + b(h)
            first = h if first is None else first
        if self.skip:
            h = torch.cat([h, first], dim=-1)
        loss = self.out(h).square().mean()
        return (loss, first) if self.expose else loss


class Cnn(torch.nn.Module):
    """Bottleneck-style blocks as in ResNet: batch norm (buffers written in place), in-place ReLU on
    a tensor another operator saved, strided downsampling on the residual path."""

    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        blocks, cin = [], 16
        for cout, stride in ((16, 1), (32, 2), (32, 1), (64, 2)):
            blocks.append(nn.ModuleDict(dict(
                body=nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout),
                                   nn.ReLU(inplace=True), nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
                                   nn.BatchNorm2d(cout)),
                down=nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                if stride != 1 or cin != cout else nn.Identity())))
            cin = cout
        self.blocks = nn.ModuleList(blocks)
        self.head = nn.Linear(cin, 10)

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            x = torch.relu_(b["body"](x) + b["down"](x))
        return self.head(x.mean((2, 3))).square().mean()


def _train(tier, steps=4, shapes=None, skip=False, keep=None, window=1 << 30, expose=False, cnn=False, mover=None):
    torch.manual_seed(0)
    model = Cnn() if cnn else Blocks(skip=skip, expose=expose)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    mover = mover or PoisonMover()
    act = None
    if tier:
        params = {storage_of(p)[0] for p in model.parameters()}
        act = ActivationTiering(model, mover, window=window, exclude=params, keep_bytes=keep)
    g = torch.Generator().manual_seed(1)
    losses, grads = [], []
    for i in range(steps):
        n = shapes[i] if shapes else 32
        x = torch.randn(n, 3, 24, 24, generator=g) if cnn else torch.randn(n, 64, generator=g)
        loss = model(x)
        if expose:  # the caller reads a tensor of the forward after it, outside the model
            loss, first = loss
            loss = loss + first.square().mean()
        _finish_step(loss, model, opt, act, losses, grads)
    return losses, grads, act, mover


def _finish_step(loss, model, opt, act, losses, grads):
    """Backward, the gradients kept, the tiering's end of iteration, the optimizer's step."""
    loss.backward()
    grads.append(torch.cat([p.grad.flatten() for p in model.parameters()]))
    if act:
        act.finish()
    opt.step()
    opt.zero_grad()
    losses.append(loss.item())


def _same(a, b):
    assert a[0] == b[0], (a[0], b[0])
    for ga, gb in zip(a[1], b[1]):
        assert torch.equal(ga, gb)


def test_saved_activations_leave_and_come_back_unchanged():
    plain = _train(False)
    tiered = _train(True)
    _same(tiered, plain)
    st, mover = tiered[2].st, tiered[3]
    assert st["act_profiles"] == 1 and st["act_iterations"] == 4 and st["act_mismatches"] == 0, st
    assert st["act_evictions"] > 0 and mover.evictions == st["act_evictions"]
    assert mover.restores == mover.evictions and not mover.away  # everything came back
    plan = tiered[2].last_plan()
    assert plan["evicted_bytes"] > 0 and plan["kept_bytes"] == 0
    # Planned iterations restore ahead of backward, not on demand, and each such restore's stream
    # waits at its own read.
    assert st["act_restores_planned"] > 0
    assert mover.readied == st["act_restores_planned"] and not mover.pending


def test_a_use_no_operator_saves_is_seen_and_kept():
    # The first block's output is read again at the end by torch.cat, which saves nothing: the
    # profile iteration brings it back when cat reads it; later iterations keep it.
    plain = _train(False, skip=True)
    tiered = _train(True, skip=True)
    _same(tiered, plain)
    st = tiered[2].st
    assert st["act_late_uses"] >= 1, st
    assert st["act_evictions"] > 0


def test_a_use_after_the_forward_outside_the_model_is_kept():
    plain = _train(False, expose=True)
    tiered = _train(True, expose=True)
    _same(tiered, plain)
    assert tiered[2].st["act_late_uses"] == 0  # seen in the profile: never evicted, never late


def test_a_cnn_with_batch_norm_and_in_place_relu():
    plain = _train(False, cnn=True, shapes=[8, 8, 8, 8])
    tiered = _train(True, cnn=True, shapes=[8, 8, 8, 8])
    _same(tiered, plain)
    st = tiered[2].st
    assert st["act_evictions"] > 0 and st["act_mismatches"] == 0, st


def test_a_new_input_shape_is_profiled_then_planned():
    shapes = [32, 48, 32, 48, 48]
    plain = _train(False, steps=5, shapes=shapes)
    tiered = _train(True, steps=5, shapes=shapes)
    _same(tiered, plain)
    st = tiered[2].st
    assert st["act_profiles"] == 2 and st["act_mismatches"] == 0, st
    assert len(tiered[2].plans()) == 2


def test_a_smaller_shape_runs_a_larger_ones_plan_without_a_profile():
    shapes = [48, 32, 40, 32, 48, 16]
    plain = _train(False, steps=6, shapes=shapes)
    tiered = _train(True, steps=6, shapes=shapes)
    _same(tiered, plain)
    act, mover = tiered[2], tiered[3]
    st = act.st
    assert st["act_profiles"] == 1 and st["act_covered"] == 4 and st["act_mismatches"] == 0, st
    assert len(act.plans()) == 1  # only the profiled shape has a plan of its own
    assert mover.evictions >= 6 * 20  # every iteration moved its storages (21 in the profiled one)
    assert not mover.live_away()


def test_a_smaller_shape_that_saves_differently_gets_its_own_profile():
    # At 8 rows some saved tensors fall under the mover's 4 KiB minimum: the packs differ from
    # the 48-row plan's, so that iteration stops evicting and the next 8-row one is profiled.
    shapes = [48, 8, 8, 8, 48]
    plain = _train(False, steps=5, shapes=shapes)
    tiered = _train(True, steps=5, shapes=shapes)
    _same(tiered, plain)
    st = tiered[2].st
    assert st["act_covered"] == 1 and st["act_mismatches"] == 1 and st["act_profiles"] == 2, st
    assert len(tiered[2].plans()) == 2 and not tiered[3].live_away()


class SparePressureMover(PoisonMover):
    """The worst case of spare marks: memory pressure takes every spare storage at once (poisoned
    until its owner's ready() brings it back)."""

    def __init__(self):
        super().__init__()
        self.spared, self.taken, self.taken_bytes = 0, {}, 0

    def spare(self, key, t):
        self.spared += 1
        self.evict(key, t)
        self.taken[key] = t
        self.taken_bytes += storage_of(t)[1]
        return True

    def reclaimed_bytes(self):
        return self.taken_bytes

    def ready(self, key):
        t = self.taken.pop(key, None)
        if t is not None:
            self.restore(key, t)
        super().ready(key)


def test_kept_activations_are_spare_and_come_back_when_taken():
    plain = _train(False)
    mover = SparePressureMover()
    some = _train(True, keep=40 << 10, mover=mover)
    _same(some, plain)
    assert mover.spared > 0 and not mover.taken, "every spare storage taken came back at its read"
    st = some[2].st  # the pressure is counted where it came: here at the spare marks, in the forwards
    assert st["act_reclaimed_fwd_bytes"] == mover.taken_bytes > 0 and st["act_reclaimed_bwd_bytes"] == 0


def test_keep_bytes_keeps_the_latest_used():
    plain = _train(False)
    some = _train(True, keep=40 << 10)
    _same(some, plain)
    plan = some[2].last_plan()
    assert 0 < plan["kept_bytes"] <= 40 << 10 and plan["evicted_bytes"] > 0
    every = _train(True)
    assert every[2].last_plan()["evicted_bytes"] > plan["evicted_bytes"]


def test_a_small_window_restores_on_demand_and_stays_correct():
    plain = _train(False)
    tiered = _train(True, window=0)
    _same(tiered, plain)
    assert tiered[2].st["act_restores_on_demand"] > 0


def test_beyond_the_window_restores_go_ahead_only_while_memory_has_room():
    # No window: with room, every planned restore is issued at backward's first read (none on
    # demand); with none, each waits for its own read; bit for bit the untiered run either way.
    plain = _train(False)
    asked = []

    def room(n):
        return lambda: asked.append(n) or n
    for bytes_, on_demand in ((1 << 40, False), (0, True)):
        torch.manual_seed(0)
        model, mover = Blocks(), PoisonMover()
        act = ActivationTiering(model, mover, window=0, exclude={storage_of(p)[0] for p in model.parameters()})
        act.room_fn = room(bytes_)
        opt = torch.optim.SGD(model.parameters(), lr=1e-2)
        g = torch.Generator().manual_seed(1)
        losses, grads = [], []
        for i in range(4):
            if i == 3:  # the last iteration's timeline: where each restore ahead was issued (no CUDA events here)
                act.timeline = []
                act._mark = lambda kind, key: act.timeline.append((kind, key, None))
            _finish_step(model(torch.randn(32, 64, generator=g)), model, opt, act, losses, grads)
        _same((losses, grads), plain)
        issued = [key for kind, key, _ in act.timeline if kind == "r"]
        reads = [key for kind, key, _ in act.timeline if kind == "u"]
        planned, demand = act.st["act_restores_planned"], act.st["act_restores_on_demand"]
        assert act.st["act_evictions"] == planned + demand and asked  # each eviction came back once
        assert act.st["act_host_s"] > 0  # the hooks' own host time
        if on_demand:
            assert planned == 0 and demand > 0 and not issued
        else:
            plan = act.last_plan()
            assert planned == 3 * len(plan["restore_order"]) > 0  # the three planned iterations'
            assert [q for q, _ in issued] == plan["restore_order"] and {r for _, r in issued} == {reads[0]}


def test_no_grad_forward_is_left_alone():
    torch.manual_seed(0)
    model = Blocks()
    mover = PoisonMover()
    act = ActivationTiering(model, mover)
    with torch.no_grad():
        model(torch.randn(8, 64))
    act.finish()
    assert act.st["act_iterations"] == 0 and mover.evictions == 0
    act.close()


def _rig(**kw):
    torch.manual_seed(0)
    model = Blocks(**kw)
    mover = PoisonMover()
    act = ActivationTiering(model, mover, exclude={storage_of(p)[0] for p in model.parameters()})
    return model, mover, act


def _step(model, act, x):
    model(x).backward()
    act.finish()
    model.zero_grad()


def test_a_forward_without_backward_gives_everything_back():
    model, mover, act = _rig()
    x = torch.randn(32, 64)
    for _ in range(2):  # profile, then planned
        _step(model, act, x)
    before = x.clone()
    loss = model(x)  # planned: storages leave; then the graph is dropped without a backward
    assert mover.away, "the planned iteration evicted"
    del loss
    act.finish()
    assert not mover.live_away() and torch.equal(x, before)
    assert act.st["act_returned_at_end"] > 0


def test_a_forward_that_raises_leaves_no_hook_and_no_storage_away():
    model, mover, act = _rig()
    x = torch.randn(32, 64)
    for _ in range(2):
        _step(model, act, x)
    boom = {"on": True}

    def fail(module, args):
        if boom["on"]:
            raise ValueError("boom")
    h = model.blocks[4].register_forward_pre_hook(fail)
    with pytest.raises(ValueError):
        model(x)
    act.finish()  # what tier()'s optimizer step (or the next forward) does; torch >= 2 also ends it at once
    assert not mover.live_away()
    y = torch.randn(8, requires_grad=True)  # unrelated autograd work: no hook of ours left
    (y.exp() * 2).sum().backward()
    assert torch.equal(y.grad, 2 * y.exp().detach())
    h.remove()
    _step(model, act, x)  # and training goes on


def test_a_shape_with_nothing_to_move_is_profiled_once():
    # Every saved tensor is under the mover's minimum: the profile finds nothing, and the shape's
    # plan is "nothing" (no operator tracking on later iterations, which run as planned).
    torch.manual_seed(0)
    model = Blocks()
    mover = PoisonMover(min_bytes=1 << 40)
    act = ActivationTiering(model, mover, exclude={storage_of(p)[0] for p in model.parameters()})
    x = torch.randn(32, 64)
    _step(model, act, x)  # the profile
    for _ in range(3):
        _step(model, act, x)
        assert act.current_plan() is not None and act.current_plan()["groups"] == 0
    assert act.st["act_profiles"] == 1 and act.st["act_mismatches"] == 0, act.st
    assert act.last_plan() is None and mover.evictions == 0  # no plan to budget for, nothing moved
    # A later storage that could move leaves that plan: its shape is profiled again.
    mover.min_bytes = 4096
    _step(model, act, x)
    assert act.st["act_mismatches"] == 1 and act.current_plan() is None
    _step(model, act, x)
    assert act.st["act_profiles"] == 2 and act.last_plan() is not None
    act.close()


def test_an_in_place_change_to_a_saved_tensor_is_autograds_error():
    torch.manual_seed(0)
    lin = torch.nn.Sequential(torch.nn.Linear(64, 64))
    act = ActivationTiering(lin, PoisonMover(min_bytes=1 << 40))  # moves nothing: the check alone
    x = torch.randn(32, 64, requires_grad=True)
    h = x * 2
    y = lin(h)  # Linear saves h
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    act.close()


def test_saved_outputs_are_freed_with_their_graph():
    import gc
    model, mover, act = _rig()
    x = torch.randn(32, 64)
    loss = model(x)
    groups = list(act._order)
    assert groups
    try:
        del loss
        gc.collect()
        xs = storage_of(x)[0]
        assert all(not g.alive() or g.key == xs for g in groups), "a saved tensor outlived its graph (a cycle)"
    finally:
        act.finish()


def test_plain_arguments_are_part_of_the_signature():
    class Flag(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(64, 256), torch.nn.Linear(256, 64)

        def forward(self, x, double=False):
            h = torch.relu(self.a(x))
            if double:
                h = h + h
            return self.b(h).square().mean()
    torch.manual_seed(0)
    model = Flag()
    act = ActivationTiering(model, PoisonMover(min_bytes=1024))
    x = torch.randn(64, 64)
    for flag in (False, True, False, True):
        model(x, flag).backward()  # positional: torch < 2 shows pre-hooks no keyword arguments
        act.finish()
    assert act.st["act_profiles"] == 2 and act.st["act_mismatches"] == 0, act.st


def test_a_no_grad_forward_between_forward_and_backward_keeps_the_profile():
    model, mover, act = _rig()
    x = torch.randn(32, 64)
    loss = model(x)
    with torch.no_grad():
        model(x)  # a reference pass
    loss.backward()
    act.finish()
    assert act.st["act_profiles"] == 1
    assert act.last_plan() is not None and act.last_plan()["restore_order"], act.last_plan()


def test_another_dispatch_mode_makes_the_iteration_passive():
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        n = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Count.n += 1
            return func(*args, **(kwargs or {}))
    model, mover, act = _rig()
    x = torch.randn(32, 64)
    with Count():
        _step(model, act, x)
    assert act.st["act_passive"] == 1 and mover.evictions == 0 and Count.n > 0
    _step(model, act, x)  # no mode: profiled now
    assert act.st["act_profiles"] == 1 and mover.evictions > 0


def test_a_backward_that_raises_part_way_then_finish():
    # Planned iteration: restores are issued ahead in backward; backward raises before reading
    # them; the graph is dropped; finish() must not touch the freed storages.
    model, mover, act = _rig()
    x = torch.randn(32, 64)
    for _ in range(2):
        _step(model, act, x)
    act.window = 1 << 40  # everything ahead at the first read
    loss = model(x)

    def boom(grad):
        raise ValueError("boom")
    h = model.blocks[3][1].weight.register_hook(boom)
    raised = False
    try:
        loss.backward()
    except ValueError:
        raised = True
    assert raised and act._ahead, "restores were issued ahead before the error"
    h.remove()
    del loss
    import gc
    gc.collect()
    act.finish()
    assert not mover.live_away()
    _step(model, act, x)  # training goes on
