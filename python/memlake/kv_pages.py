"""The KV cache's page bookkeeping over one virtual tensor (no torch needed).

A KV cache of `layers` layers, K and V, `batch` rows of `max_len` positions,
`heads` KV heads of `head_dim` elements of `itemsize` bytes lives in ONE
memlake virtual tensor (memlake.vt.VirtualTensor). Two byte orders:

"tokens" (the default)
    storage [batch, max_len, layers, K/V, heads, head_dim], each row padded
    to whole pages. One token of one row is one run of `token_bytes` bytes
    (every layer's K and V), so a row grows through ONE region: at most one
    page of slack per row, whatever the number of layers and heads. Each
    layer's K (or V) is exposed as a strided [batch, heads, max_len,
    head_dim] tensor (last dimension contiguous).

"rows"
    storage [layers, K/V, batch, max_len, heads, head_dim], each row of each
    layer's K (or V) padded to whole pages. Each (row, layer, K/V) grows
    through its own region: at most one page of slack per (row, layer, K/V),
    the issue's bound. Each layer's K (or V) is a [batch, heads, max_len,
    head_dim] view of a [batch, max_len, heads, head_dim] tensor (flash
    attention's own order), which the cache's update writes (so a compiled
    step updates it in place, as StaticCache's; results §18c). group=N puts N
    consecutive K/V tensors in one region, position by position: a row grows
    through 2 x layers / N regions; "tokens" is one group of all of them.

"heads"
    storage [layers, K/V, batch, heads, max_len, head_dim]: each layer's K
    and V are exactly StaticCache's contiguous tensors. Each (row, layer,
    K/V, head) grows in its own region, so slack is up to one page per
    head. Needs max_len * head_dim * itemsize to be a whole number of pages.

Rows: an active row has positions [start, written) live and pages mapped
(private, zeroed) over [start, mapped); its other positions read the shared
zero page. An inactive row (finished, or not yet added) is backed by the
sink page everywhere, so the writes a batched step still makes to it go
nowhere. Every page belongs to one row.
"""
from . import InvalidArgumentError
from .vt import VirtualTensor

__all__ = ["KVPages", "KVGeometry"]


class KVGeometry:
    """Where each layer's K and V, and each row's positions, lie in the virtual tensor.

    "tokens" and "rows" are one scheme: the 2 x layers K/V tensors fall in groups of `group`
    consecutive ones (tokens: one group of all of them; rows: `group`, default 1), and each
    (group, row) is one region of whole pages holding, position after position, the group's
    tensors' heads. A row grows through `regions_per_row` regions."""

    def __init__(self, layers, batch, heads, head_dim, max_len, itemsize, page_size, order="tokens", group=None):
        for name, v in (("layers", layers), ("batch", batch), ("heads", heads), ("head_dim", head_dim),
                        ("max_len", max_len), ("itemsize", itemsize)):
            if not isinstance(v, int) or v <= 0:
                raise InvalidArgumentError(f"KV cache: {name} must be a positive integer, got {v!r}")
        if order not in ("tokens", "rows", "heads"):
            raise InvalidArgumentError(f"KV cache: layout must be 'tokens', 'rows' or 'heads', got {order!r}")
        if group is not None and (order != "rows" or isinstance(group, bool) or not isinstance(group, int)
                                  or group <= 0 or (2 * layers) % group):
            raise InvalidArgumentError(
                f"KV cache: group (K/V tensors per region) is for layout 'rows' and must divide 2 x layers = "
                f"{2 * layers}, got {group!r} with layout {order!r}")
        self.layers, self.batch, self.heads, self.head_dim = layers, batch, heads, head_dim
        self.max_len, self.itemsize, self.page_size, self.order = max_len, itemsize, page_size, order
        self.tensor_token_bytes = heads * head_dim * itemsize  # one token of one (row, layer, K/V)
        self.token_bytes = 2 * layers * self.tensor_token_bytes  # one token of one row: every layer, K and V
        if order == "heads":
            head_bytes = max_len * head_dim * itemsize
            if head_bytes % page_size:
                raise InvalidArgumentError(
                    f"KV cache layout 'heads': one head's positions ({head_bytes} bytes) are not a whole number of "
                    f"{page_size}-byte pages; use layout='tokens' or a max length that makes them so")
            self.group = self.row_bytes = None
            self.region_token_bytes = head_dim * itemsize  # a region: one (row, layer, K/V, head)
            self.regions_per_row = 2 * layers * heads
            self.nbytes = 2 * layers * batch * heads * head_bytes
            return
        self.group = 2 * layers if order == "tokens" else (group or 1)
        self.regions_per_row = 2 * layers // self.group
        self.region_token_bytes = self.group * self.tensor_token_bytes  # one token of one region
        self.row_bytes = -(-max_len * self.region_token_bytes // page_size) * page_size  # one region, padded
        self.nbytes = self.regions_per_row * batch * self.row_bytes

    def tensor(self, layer, kv):
        """(byte offset, shape, strides in elements) of layer `layer`'s K (kv=0) or V (kv=1)."""
        el = self.itemsize
        shape = (self.batch, self.heads, self.max_len, self.head_dim)
        if self.order == "heads":
            off = (layer * 2 + kv) * self.batch * self.heads * self.max_len * self.head_dim * el
            return off, shape, (self.heads * self.max_len * self.head_dim, self.max_len * self.head_dim,
                                self.head_dim, 1)
        q, m = divmod(layer * 2 + kv, self.group)
        off = q * self.batch * self.row_bytes + m * self.tensor_token_bytes
        return off, shape, (self.row_bytes // el, self.head_dim, self.region_token_bytes // el, 1)

    def row_ranges(self, row, start, end):
        """Byte ranges (offset, length) holding positions [start, end) of `row`."""
        if end <= start:
            return []
        if self.order != "heads":
            per = self.region_token_bytes
            return [((q * self.batch + row) * self.row_bytes + start * per, (end - start) * per)
                    for q in range(self.regions_per_row)]
        el, hd = self.itemsize, self.head_dim
        out = []
        for lk in range(2 * self.layers):
            for h in range(self.heads):
                base = ((lk * self.batch + row) * self.heads + h) * self.max_len * hd * el
                out.append((base + start * hd * el, (end - start) * hd * el))
        return out

    def row_region(self, row):
        """Byte ranges of the whole of `row` (every position), page-aligned."""
        if self.order != "heads":
            return [((q * self.batch + row) * self.row_bytes, self.row_bytes) for q in range(self.regions_per_row)]
        return self.row_ranges(row, 0, self.max_len)

    @property
    def tokens_per_page(self):
        """Positions of one row that one page of one of its regions holds (at least 1)."""
        return max(1, self.page_size // self.region_token_bytes)

    def covered(self, end):
        """The positions of a row that the pages holding its positions below `end` hold whole."""
        per, p = self.region_token_bytes, self.page_size
        return min(self.max_len, -(-end * per // p) * p // per)

    @property
    def slack_allowance(self):
        """The bound's slack: one page per (row, layer, K/V)."""
        return 2 * self.layers * self.page_size


class KVPages:
    """Rows of a KV cache over one virtual tensor: grow, finish, add, reset.

    All rows start active at position 0 (rows=None) or only those listed.
    `margin`: a row's next pages are mapped once the position to write is
    within `margin` positions of its mapped end (ahead of the step, never
    inside it)."""

    def __init__(self, geometry_args, device=0, memory_limit=0, allocator=None, rows=None, margin=2,
                 stream_fn=None, vt_factory=None):
        self._stream_fn = stream_fn or (lambda: None)
        # The virtual tensor first (its page size decides the geometry's padding).
        g = dict(geometry_args)
        probe_page = g.pop("page_size", None)
        if vt_factory is None:
            def vt_factory(nbytes, limit=0):
                return VirtualTensor(nbytes, device=device, memory_limit=limit, allocator=allocator)
        if probe_page is None:
            # The backend's page size, from a one-page tensor.
            probe = vt_factory(1)
            probe_page = probe.page_size
            probe.close()
        self.geometry = KVGeometry(page_size=probe_page, **g)
        self.vt = vt_factory(self.geometry.nbytes, memory_limit)
        if self.vt.page_size != probe_page:
            raise InvalidArgumentError("KV cache: the page size changed between two virtual tensors")
        self.margin = int(margin)
        b = self.geometry.batch
        self.active = [False] * b
        self.start = [0] * b
        self.written = [0] * b  # positions [start, written) are live
        self.mapped = [0] * b   # positions [start, mapped) lie in private pages
        self._min_mapped = 0    # over active rows; a step at p needs no work while p + margin < this
        active = range(b) if rows is None else rows
        for r in range(b):
            if r not in active:
                self._backing(r, "sink")
        for r in active:
            self._check_row(r)
            self.active[r] = True
        self._refresh()

    # ---- rows
    def _check_row(self, row):
        if isinstance(row, bool) or not isinstance(row, int):
            raise InvalidArgumentError(f"KV cache: row must be an integer, got {type(row).__name__}")
        if row < 0 or row >= self.geometry.batch:
            raise InvalidArgumentError(f"KV cache: row {row} is out of range (0..{self.geometry.batch - 1})")

    def _check_position(self, pos, what="position"):
        if pos < 0 or pos > self.geometry.max_len:
            raise InvalidArgumentError(f"KV cache: {what} {pos} is past the reserved maximum length "
                                       f"{self.geometry.max_len} (max_cache_len)")

    def _backing(self, row, backing):
        for off, n in self.geometry.row_region(row):
            self.vt.unmap_bytes(off, n, backing, self._stream_fn())

    def _map(self, row, start, end):
        for off, n in self.geometry.row_ranges(row, start, end):
            self.vt.map_bytes(off, n, self._stream_fn())

    def _refresh(self):
        m = [self.mapped[r] for r in range(self.geometry.batch) if self.active[r]]
        self._min_mapped = min(m) if m else self.geometry.max_len + self.margin + 1

    def add_row(self, row, start=0, length=0):
        """Row `row` (inactive) begins a sequence whose positions [start, start+length) are live
        (written by the caller, e.g. a prefill copied in); the positions below `start` read zeros."""
        self._check_row(row)
        if self.active[row]:
            raise InvalidArgumentError(f"KV cache: row {row} is already active (finish it first)")
        self._check_position(start, "start")
        self._check_position(start + length, "end")
        self._backing(row, "zero")
        self.start[row] = self.written[row] = self.mapped[row] = start
        self.active[row] = True
        try:
            self._grow_row(row, start + length)
        except BaseException:
            self.active[row] = False
            self._backing(row, "sink")
            self._refresh()
            raise
        self.written[row] = start + length
        self._refresh()

    def finish_row(self, row):
        """Row `row`'s sequence ends: its pages go back; its later writes go to the sink."""
        self._check_row(row)
        if not self.active[row]:
            raise InvalidArgumentError(f"KV cache: row {row} is not active (finished twice, or never added)")
        self._backing(row, "sink")
        self.active[row] = False
        self.start[row] = self.written[row] = self.mapped[row] = 0
        self._refresh()

    def _grow_row(self, row, end):
        """Maps row `row` so that positions below `end` are private (and a page more ahead)."""
        g = self.geometry
        if end <= self.mapped[row]:
            return
        if g.regions_per_row > 1:  # no page ahead, or the slack could pass a page per region
            target = g.covered(end)
        else:
            target = min(g.max_len, end + self.margin + g.tokens_per_page)
        self._map(row, self.start[row], target)  # pages already private are kept (no driver call)
        self.mapped[row] = target

    def grow(self, row, end):
        """One row's positions below `end` become live (per-row growth, e.g. rows at different positions)."""
        if end <= self.mapped[row] and self.active[row]:
            if self.written[row] < end:
                self.written[row] = end
            return
        self._check_row(row)
        if not self.active[row]:
            raise InvalidArgumentError(f"KV cache: row {row} is not active")
        self._check_position(end)
        try:
            self._grow_row(row, end)
        finally:
            self._refresh()
        if self.written[row] < end:
            self.written[row] = end

    def prepare(self, position, count=1):
        """Before a step that writes positions [position, position+count) of every active row:
        maps what they need (and ahead). Cheap when nothing is needed. Raises
        memlake.OutOfMemoryError (rows grown so far keep their pages; no row loses any)."""
        end = position + count
        if end + self.margin < self._min_mapped:
            for r in range(self.geometry.batch):
                if self.active[r] and self.written[r] < end:
                    self.written[r] = end
            return
        self._check_position(end, "end of the step")
        try:
            for r in range(self.geometry.batch):
                if self.active[r] and self.mapped[r] < end + self.margin:
                    self._grow_row(r, end)
        finally:
            self._refresh()
        for r in range(self.geometry.batch):
            if self.active[r] and self.written[r] < end:
                self.written[r] = end

    def reset(self):
        """Every active row starts again at position 0: pages go back, reads give zeros."""
        for r in range(self.geometry.batch):
            if self.active[r]:
                self._backing(r, "zero")
                self.start[r] = self.written[r] = self.mapped[r] = 0
        self._refresh()

    # ---- numbers
    def live_bytes(self):
        g = self.geometry
        return sum((self.written[r] - self.start[r]) * g.token_bytes for r in range(g.batch) if self.active[r])

    def stats(self):
        s = self.vt.stats()
        g = self.geometry
        live = self.live_bytes()
        mapped = s["private_pages"] * s["page_size"]
        active = sum(self.active)
        allowance = active * g.slack_allowance
        if g.order != "heads":  # a row that starts mid-page has a partial page at each region's start too
            per = g.region_token_bytes
            allowance += sum(g.regions_per_row * g.page_size for r in range(g.batch)
                             if self.active[r] and (self.start[r] * per) % g.page_size)
        return {
            "reserved_bytes": s["bytes"],
            "mapped_bytes": mapped,                    # private pages
            "shared_bytes": 2 * s["page_size"],        # the zero and sink pages
            "physical_bytes": s["physical_bytes"],     # mapped + shared
            "physical_peak": s["physical_peak"],
            "live_bytes": live,                        # tokens written, every layer, K and V
            "slack_bytes": mapped - live,
            # live + one page per (row, layer, K/V), and one more per region for a row starting mid-page
            "bound_bytes": live + allowance,
            "active_rows": active,
            "page_size": s["page_size"],
            "pages_mapped": s["pages_mapped"],
            "pages_unmapped": s["pages_unmapped"],
            "syncs": s["syncs"],
            "layout": g.order,
            "group": g.group,                          # K/V tensors per region ("tokens": all)
        }

    def close(self):
        self.vt.close()

