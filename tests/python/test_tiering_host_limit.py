"""tier(host_limit=...)'s bookkeeping on the CPU: the optimizer states in the host tier stay within
the limit at every step of backward, not only at the iteration's end; the read-ahead and the
demotions keep their counts exact; a disk error in backward is raised by the step, not inside
backward.

memlake.torch.tier() itself needs CUDA (and torch >= 2.1's post-accumulate-grad hooks), so its GPU
test is tests/python/test_tiering_gpu.py. Here a Tiering's methods run the way its hooks call them
(restore, step, evict, then _demote_in_backward and _fetch_ahead per parameter; the iteration's
end), over a stand-in residency engine that keeps where every state is (gpu, host, disk) and
checks each move is legal, as the engine does."""
import pytest

pytest.importorskip("torch", reason="PyTorch not installed")

import memlake  # noqa: E402
import memlake.tiering as tiering  # noqa: E402

MIB = 1 << 20


class State:
    """An optimizer state tensor: its bytes only (the engine's moves are stand-ins)."""

    def __init__(self, nbytes, name):
        self.nbytes, self.name = nbytes, name

    def __repr__(self):
        return self.name


class FakeResidency:
    """Where each state is, with the engine's rules: evict from the GPU, restore from the host or the
    disk, demote from the host, fetch (read ahead) from the disk; errors injected by name."""

    def __init__(self):
        self.where, self.fetched, self.fail_demote, self.settle_error = {}, set(), set(), None
        self.reads = 0  # restores that read from disk themselves (not read ahead)

    def evict(self, v, device=0, wait=True):
        assert self.where.get(v, "gpu") == "gpu", (v, self.where.get(v))
        self.where[v] = "host"

    def restore(self, v, device=0, wait=True):
        w = self.where.get(v)
        assert w in ("host", "disk"), (v, w)
        if w == "disk" and v not in self.fetched:
            self.reads += 1
        self.fetched.discard(v)
        self.where[v] = "gpu"

    def ready(self, v, device=0):
        pass

    def demote(self, v, device=0, wait=True):
        assert self.where.get(v) == "host", (v, self.where.get(v))
        if v.name in self.fail_demote:
            raise memlake.OutOfMemoryError(f"disk full demoting {v}")
        self.where[v] = "disk"

    def fetch(self, v, device=0):
        assert self.where.get(v) == "disk", (v, self.where.get(v))
        self.fetched.add(v)

    def settle(self, wait=True, device=0):
        if self.settle_error is not None:
            e, self.settle_error = self.settle_error, None
            raise e
        return 0

    def host_bytes(self):
        """States in the host tier (not on disk): what host_limit bounds."""
        return sum(v.nbytes for v, w in self.where.items() if w == "host")

    def fetched_bytes(self):
        return sum(v.nbytes for v in self.fetched)


def make(n, state_bytes, host_limit, disk_window, monkeypatch):
    """A Tiering of n parameters with two states of state_bytes each, every state tiered, no plan."""
    res = FakeResidency()
    monkeypatch.setattr(tiering, "_res", res)
    t = tiering.Tiering.__new__(tiering.Tiering)
    t.device, t.min_bytes, t.host_limit, t.disk_window = 0, 0, host_limit, disk_window
    t._params = list(range(n))
    t._names = [f"p{i}" for i in range(n)]
    states = [[State(state_bytes, f"p{i}.m"), State(state_bytes, f"p{i}.v")] for i in range(n)]
    t._states = lambda i: states[i]
    t._where, t._on_disk, t._tiered, t._stepped = ["gpu"] * n, [False] * n, [True] * n, [False] * n
    t._out, t._arriving = [[] for _ in range(n)], [[] for _ in range(n)]
    t._host_bytes, t._fetched = [0] * n, [0] * n
    t._host_states = t._fetched_total = 0
    t._recent, t._demotable, t._disk_queue = [], [], []
    t._read_from_disk, t._stalls, t._restore_pos, t._issue_at = set(), [], {}, {}
    t._deferred_error, t._order, t._timing, t._plan = None, [], False, None
    t._st = dict(steps_in_backward=0, restores_planned=0, restores_on_demand=0, evictions=0, evicted_bytes=0,
                 restored_bytes=0, demoted_bytes=0, disk_write_s=0.0, fetched_bytes=0, disk_restored_bytes=0,
                 disk_read_s=0.0, prefetch_deferred=0, host_states_peak=0)
    return t, res


def step(t, i):
    """Parameter i's step in backward as its hook runs it: its states back, the step, evicted again,
    then the demotion and the read-ahead."""
    t._order.append(i)
    t._restore(i, planned=False)  # on demand (a planned restore differs only in when it is issued)
    t._where[i] = "gpu"
    t._evict(i)
    t._demote_in_backward(i)
    if t._disk_queue and t._deferred_error is None:
        t._fetch_ahead()


def backward(t, res, order, check=None):
    """One backward as the hooks run it, then the iteration's end."""
    for i in order:
        step(t, i)
        assert t._host_states == res.host_bytes(), (t._host_states, res.host_bytes())
        assert t._fetched_total == res.fetched_bytes()
        if check:
            check()
    t._order, t._demotable, t._recent = [], [], []
    t._demote_past_limit()
    t._fetch_ahead()
    assert t._host_states == res.host_bytes() <= t.host_limit
    assert t._fetched_total == res.fetched_bytes()


def test_the_states_in_the_host_tier_stay_within_the_limit_in_backward(monkeypatch):
    n, sb = 32, 8 * MIB  # 16 MiB of states a parameter, 512 MiB in all
    limit, window = 128 * MIB, 32 * MIB
    t, res = make(n, sb, limit, window, monkeypatch)
    order = list(reversed(range(n)))  # backward: the last layer steps first
    bound = limit + (tiering._DEMOTE_LAG + 1) * 2 * sb
    peak = []

    def check():
        peak.append(res.host_bytes())
        assert res.host_bytes() <= bound, (res.host_bytes(), bound)

    for _ in range(4):
        backward(t, res, order, check)
    # The bound is reached (states do go through the disk) and nothing is lost.
    assert max(peak) > limit and t._st["demoted_bytes"] > 0
    assert all(res.where[v] in ("host", "disk") for i in range(n) for v in t._out[i])
    assert sum(len(o) for o in t._out) == 2 * n  # every state evicted once, still there
    # The stat's peak is right after an eviction, before its step's demotion: the bound holds there too.
    assert max(peak) <= t._st["host_states_peak"] <= bound


def test_the_states_read_last_go_to_disk_and_are_read_ahead(monkeypatch):
    # With room for about half the states, the ones the next backward restores last go to disk: the
    # first steps of a backward find their states in the host tier (no read on the critical path).
    n, sb = 16, 4 * MIB
    t, res = make(n, sb, 64 * MIB, 16 * MIB, monkeypatch)
    order = list(reversed(range(n)))
    backward(t, res, order)  # the profile iteration: no plan, so the latest stepped go to disk
    # Stepped late (low indices), but not the last _DEMOTE_LAG: their copies out were left to finish,
    # and the demotions before them brought the count back within the limit.
    on_disk = {i for i in range(n) if t._on_disk[i]}
    lag = tiering._DEMOTE_LAG
    assert on_disk == set(range(lag, lag + len(on_disk))) and lag + len(on_disk) < n, on_disk
    reads_before = res.reads
    first = [i for i in order if not t._on_disk[i]]
    for i in first[: len(first) // 2]:
        step(t, i)
        assert res.reads == reads_before  # from the host tier


def test_a_disk_error_in_backward_is_raised_by_the_step_not_inside_backward(monkeypatch):
    n, sb = 12, 4 * MIB
    t, res = make(n, sb, 16 * MIB, 8 * MIB, monkeypatch)
    res.fail_demote = {f"p{i}.m" for i in range(n)}  # every demotion fails at its first tensor
    order = list(reversed(range(n)))
    for i in order:  # no exception leaves a hook
        step(t, i)
    assert isinstance(t._deferred_error, memlake.OutOfMemoryError)
    # Nothing was marked on disk or uncounted: every state is still in the host tier, and counted.
    assert not any(t._on_disk) and t._host_states == res.host_bytes() == 2 * n * sb
