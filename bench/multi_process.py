#!/usr/bin/env python3
"""Many processes, one GPU: the memory daemon (issue 22).

One invocation starts `memlake daemon` and runs, each part in processes of
its own:

  dedup   N inference processes of one ~1.5 B model (Qwen2-1.5B's shape, HF
          transformers, bf16, weights from a fixed seed, the same in every
          process). Each loads its own copy, computes logits, then calls
          memlake.torch.share_weights(model) and computes them again. Reported:
          parameter bytes held per process before and after (torch's own
          allocator) and the daemon's shared bytes; GPU memory in use
          device-wide (nvidia-smi) with N private copies and after sharing;
          every logits tensor hashed (bit-identical across processes and
          before/after); then one process writes to a shared weight: it must
          fail there, and everyone else's logits must stay the same.
  attach  one process publishes a 16 GiB buffer (explicit id, 1 GiB handles);
          another attaches and detaches it R times, timing each attach
          (import + map + read-only access of every handle), and reads its
          last byte back.
  pool    3 workers (memlake allocators on the daemon's pool, no PyTorch) with
          out-of-phase bursts under one cap: each in turn grows by --step
          until --target or out of memory, keeps a base allocation between
          bursts and leaves its burst cached (the daemon asks it to trim when
          another needs the pages). The same with a static 1/3 split
          (memory_cap = cap / 3 per worker, no daemon).
  reclaim an idle client caches --reclaim bytes of pool pages (1 GiB handles);
          another asks for 1 GiB of a pool that has no more: the time of that
          request is the reclaim (trim, the idle client's empty_cache, the
          retry), R times (--take bytes over a pool of --reclaim + --take); then a client holding pages is SIGKILLed and the
          time until the daemon shows them free again is measured.

    python3 bench/multi_process.py [--parts dedup,attach,pool,reclaim] [--procs 8] [--json OUT]
    python3 bench/multi_process.py --backend host --parts pool,reclaim   # the no-GPU parts on the CPU
"""
import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

GiB = 1 << 30
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))


def cli():
    for b in ("build-gpu", "build"):
        p = os.path.join(ROOT, b, "memlake")
        if os.path.exists(p):
            return p
    raise SystemExit("multi_process: build memlake first (cmake --build build --target memlake)")


def smi_used():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20).stdout.split()
        return int(out[0]) << 20
    except Exception:
        return None


class Daemon:
    def __init__(self, args, pool, chunk="1G", tag="d"):
        self.dir = tempfile.mkdtemp(prefix="memlaked_")
        self.sock = os.path.join(self.dir, tag + ".sock")
        self.log = open(os.path.join(args.out_dir, f"daemon_{tag}.log"), "w")
        self.p = subprocess.Popen([cli(), "daemon", "--backend", args.backend, "--pool", pool, "--chunk", chunk,
                                   "--socket", self.sock], stderr=self.log)
        for _ in range(500):
            if os.path.exists(self.sock):
                break
            time.sleep(0.01)

    def status(self):
        import memlake
        return memlake.daemon_status(self.sock)

    def close(self):
        self.p.terminate()
        self.p.wait(timeout=30)
        self.log.close()
        subprocess.run(["rm", "-rf", self.dir])


PROCS = []  # every worker started, killed when a part fails


def spawn(role, *extra, env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--role", role, *extra], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, env=e)
    PROCS.append(p)
    return p


def ask(p, line, timeout=600):
    p.stdin.write(line + "\n")
    p.stdin.flush()
    return expect(p, timeout)


def expect(p, timeout=600):
    while True:  # a library may print to stdout: only our JSON lines count
        out = p.stdout.readline()
        if not out:
            raise RuntimeError(f"worker {p.pid} ended (exit {p.poll()})")
        if out.startswith("{"):
            return json.loads(out)
        print(f"[worker {p.pid}] {out.rstrip()}", flush=True)


def say(obj):
    print(json.dumps(obj), flush=True)


# ---------------------------------------------------------------- workers

def role_model(args):
    """One inference process: its own copy, logits, share_weights, logits again."""
    import torch
    import memlake
    import memlake.torch as mt
    from transformers import Qwen2Config, Qwen2ForCausalLM
    a = memlake.Allocator(backend="cuda", daemon_socket=args.socket)
    cfg = Qwen2Config(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12,
                      num_key_value_heads=2, vocab_size=151936, max_position_embeddings=4096, tie_word_embeddings=True)
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)  # built in bf16 on the GPU: no fp32 copy on the way
    with torch.device("cuda"):
        model = Qwen2ForCausalLM(cfg).eval()
    torch.set_default_dtype(torch.float32)
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):  # the same bytes in every process
            g = torch.Generator(device="cuda").manual_seed(1000 + i)
            p.normal_(0.0, 0.02, generator=g)
    ids = (torch.arange(128, device="cuda") * 7919 % cfg.vocab_size).view(1, -1)

    def logits_hash():
        with torch.no_grad():
            out = model(ids).logits
        torch.cuda.synchronize()
        return hashlib.sha256(out.float().cpu().numpy().tobytes()).hexdigest()

    param_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    h0 = logits_hash()
    torch.cuda.empty_cache()
    say({"loaded": True, "param_bytes": param_bytes, "torch_allocated": torch.cuda.memory_allocated(),
         "torch_reserved": torch.cuda.memory_reserved(), "free_before": torch.cuda.mem_get_info()[0], "logits_private": h0})
    sys.stdin.readline()  # everyone holds a private copy now
    t = time.perf_counter()
    sw = mt.share_weights(model, allocator=a)
    share_s = time.perf_counter() - t
    t = time.perf_counter()
    cid = memlake.content_id(sw.buffer.address, sw.nbytes, allocator=a)
    hash_s = time.perf_counter() - t
    h1 = logits_hash()
    private_params = sum(p.numel() * p.element_size() for p in model.parameters()
                         if not (sw.buffer.address <= p.data_ptr() < sw.buffer.address + sw.nbytes))
    reserved = torch.cuda.memory_reserved()
    torch.cuda.empty_cache()
    say({"shared": True, "id": sw.id, "id_again": cid, "nbytes": sw.nbytes, "share_s": share_s, "hash_s": hash_s,
         "torch_allocated": torch.cuda.memory_allocated(), "torch_reserved": reserved,
         "torch_reserved_after_empty_cache": torch.cuda.memory_reserved(), "free_after": torch.cuda.mem_get_info()[0],
         "private_param_bytes": private_params, "logits_shared": h1})
    cmd = sys.stdin.readline().strip()
    if cmd == "write":
        p = next(model.parameters())
        try:
            with torch.no_grad():
                p.add_(1)
            torch.cuda.synchronize()
            say({"write": "succeeded"})
        except Exception as e:  # the expected outcome: this process's CUDA context is lost
            say({"write": "failed", "error": str(e).splitlines()[0][:200]})
        os._exit(0)
    say({"logits_after_write": logits_hash()})
    sys.stdin.readline()


def role_publish16(args):
    import torch
    import memlake
    a = memlake.Allocator(backend="cuda", daemon_socket=args.socket)
    n = args.attach_bytes
    t = torch.empty(n, dtype=torch.uint8, device="cuda")
    t.fill_(7)
    t[-1] = 42
    torch.cuda.synchronize()
    s = time.perf_counter()
    buf = memlake.share(t, n, id="a5" * 32, allocator=a)
    publish_s = time.perf_counter() - s
    del t
    torch.cuda.empty_cache()
    say({"published": n, "publish_s": publish_s})
    sys.stdin.readline()
    buf.close()


def role_attach(args):
    import memlake
    a = memlake.Allocator(backend="cuda", daemon_socket=args.socket)
    a.free(a.alloc(2 << 20))  # the CUDA context and the device's backend, before any timing
    times = []
    for _ in range(args.repeats):
        s = time.perf_counter()
        buf = memlake.attach("a5" * 32, allocator=a)
        times.append(time.perf_counter() - s)
        buf.close()
    buf = memlake.attach("a5" * 32, allocator=a)
    import torch
    v = torch.as_tensor(buf, device="cuda")
    last, first = int(v[-1].item()), int(v[0].item())
    say({"attach_s": times, "bytes": buf.nbytes, "last_byte": last, "first_byte": first})
    sys.stdin.readline()


def role_pool(args):
    """A memlake allocator (no PyTorch): a base allocation, bursts on request."""
    import memlake
    opts = {"backend": args.backend}
    if args.socket:
        opts.update(daemon_pool=1, daemon_socket=args.socket)
    else:
        opts["memory_cap"] = str(args.static_cap)
    if args.large_handles:
        opts["large_handle_size"] = args.large_handles
    a = memlake.Allocator(**opts)
    base = a.alloc(args.base) if args.base else 0
    say({"ready": True})
    for line in sys.stdin:
        cmd = line.split()
        if not cmd or cmd[0] == "quit":
            break
        if cmd[0] == "burst":  # grow by step until target or out of memory; then free (cached)
            held, reached, oom, err = [], 0, False, ""
            s = time.perf_counter()
            while reached < args.target:
                try:
                    held.append(a.alloc(args.step))
                    reached += args.step
                except memlake.OutOfMemoryError as e:
                    oom, err = True, str(e)[:200]
                    break
            burst_s = time.perf_counter() - s
            for p in held:
                a.free(p)
            say({"reached": reached, "oom": oom, "error": err, "burst_s": burst_s})
        elif cmd[0] == "take":  # one allocation of N bytes, timed, then freed (and returned)
            n = int(cmd[1])
            s = time.perf_counter()
            try:
                p = a.alloc(n)
                ok = True
            except memlake.OutOfMemoryError as e:
                ok, p = False, str(e)[:200]
            took = time.perf_counter() - s
            if ok:
                a.free(p)
                a.empty_cache()
            say({"ok": ok, "take_s": took, "error": "" if ok else p})
        elif cmd[0] == "hold":  # allocate and free N bytes: they stay cached, idle
            n = int(cmd[1])
            p = a.alloc(n)
            a.free(p)
            say({"held": n})
    if base:
        a.free(base)


# ---------------------------------------------------------------- parts

def part_dedup(args, res):
    d = Daemon(args, "100G", "1G", "dedup")
    try:
        idle = smi_used()
        ws = [spawn("model", "--socket", d.sock) for _ in range(args.procs)]
        loaded = [expect(w) for w in ws]
        private_used = smi_used()
        for w in ws:
            w.stdin.write("go\n")
            w.stdin.flush()
        shared = [expect(w) for w in ws]
        shared_used = smi_used()
        st = d.status()
        ws[-1].stdin.write("write\n")
        ws[-1].stdin.flush()
        wr = expect(ws[-1])
        ws[-1].wait(timeout=120)
        after = [ask(w, "check") for w in ws[:-1]]
        for w in ws[:-1]:
            w.stdin.write("quit\n")
            w.stdin.flush()
            w.wait(timeout=120)
        st_end = d.status()
    finally:
        d.close()
    param = loaded[0]["param_bytes"]
    logits = {x["logits_private"] for x in loaded} | {x["logits_shared"] for x in shared}
    after_ok = all(x["logits_after_write"] == loaded[0]["logits_private"] for x in after)
    separate = args.procs * param
    with_sharing = st["shared_bytes"] + sum(x["private_param_bytes"] for x in shared)
    res["dedup"] = {
        "procs": args.procs, "param_bytes_per_process": param, "weights_separate_bytes": separate,
        "weights_shared_bytes": with_sharing, "weights_reduction": separate / with_sharing if with_sharing else None,
        "daemon_shared_bytes": st["shared_bytes"], "daemon_saved_bytes": st["saved_bytes"],
        "holders": [b["holders"] for b in st["buffers"]], "ids_equal": len({x["id"] for x in shared}) == 1,
        "id_recomputed_equal": all(x["id"] == x["id_again"] for x in shared),
        "torch_allocated_before": [x["torch_allocated"] for x in loaded],
        "torch_allocated_after": [x["torch_allocated"] for x in shared],
        "torch_reserved_before": [x["torch_reserved"] for x in loaded],
        "torch_reserved_after": [x["torch_reserved"] for x in shared],
        "torch_reserved_after_empty_cache": [x["torch_reserved_after_empty_cache"] for x in shared],
        "device_free_before": [x["free_before"] for x in loaded], "device_free_after": [x["free_after"] for x in shared],
        "smi_used_idle": idle, "smi_used_private_copies": private_used, "smi_used_shared": shared_used,
        "smi_weights_reduction": ((private_used - idle) / (shared_used - idle)) if idle is not None and shared_used and shared_used > idle else None,
        "share_weights_s": [round(x["share_s"], 3) for x in shared], "content_id_s": [round(x["hash_s"], 3) for x in shared],
        "logits_bit_identical": len(logits) == 1, "write": wr, "others_logits_unchanged_after_write": after_ok,
        "daemon_used_after_all_exit": st_end["used_bytes"],
    }
    print("dedup:", json.dumps(res["dedup"]), flush=True)


def part_attach(args, res):
    d = Daemon(args, "100G", "1G", "attach")
    try:
        pub = spawn("publish16", "--socket", d.sock, "--attach-bytes", str(args.attach_bytes))
        p = expect(pub)
        att = spawn("attach", "--socket", d.sock, "--repeats", str(args.repeats))
        r = expect(att)
        att.stdin.write("quit\n")
        att.stdin.flush()
        att.wait(timeout=60)
        pub.stdin.write("quit\n")
        pub.stdin.flush()
        pub.wait(timeout=60)
    finally:
        d.close()
    t = sorted(r["attach_s"])
    res["attach"] = {"bytes": r["bytes"], "handles": -(-r["bytes"] // GiB), "publish_s": p["publish_s"],
                     "attach_ms": [round(x * 1e3, 3) for x in r["attach_s"]], "attach_ms_median": round(t[len(t) // 2] * 1e3, 3),
                     "attach_ms_max": round(t[-1] * 1e3, 3), "bytes_read_back_ok": r["last_byte"] == 42 and r["first_byte"] == 7}
    print("attach:", json.dumps(res["attach"]), flush=True)


def run_bursts(args, socket):
    extra = ["--backend", args.backend, "--base", str(args.base), "--step", str(args.step), "--target", str(args.target),
             "--large-handles", "512M"]
    extra += ["--socket", socket] if socket else ["--static-cap", str(args.cap // 3)]
    ws = [spawn("pool", *extra) for _ in range(3)]
    for w in ws:
        expect(w)
    rounds = []
    for r in range(2):  # out of phase: one burst at a time, twice round
        for k, w in enumerate(ws):
            x = ask(w, "burst")
            x["worker"], x["round"] = k, r
            rounds.append(x)
    for w in ws:
        w.stdin.write("quit\n")
        w.stdin.flush()
        w.wait(timeout=60)
    return rounds


def part_pool(args, res):
    d = Daemon(args, str(args.cap), "1G", "pool")
    try:
        pooled = run_bursts(args, d.sock)
        st = d.status()
    finally:
        d.close()
    static = run_bursts(args, None)
    best_pool = args.base + min(x["reached"] for x in pooled)  # peak = base + burst
    best_static = args.base + max(x["reached"] for x in static)
    res["pool"] = {"cap": args.cap, "base": args.base, "step": args.step, "target": args.target,
                   "pooled": pooled, "static_split": static, "pooled_any_oom": any(x["oom"] for x in pooled),
                   "static_any_oom": any(x["oom"] for x in static),
                   "largest_peak_pooled_min_over_workers": best_pool, "largest_peak_static_max_over_workers": best_static,
                   "peak_ratio": best_pool / best_static if best_static else None, "daemon_trims": st["trims"]}
    print("pool:", json.dumps({k: v for k, v in res["pool"].items() if k not in ("pooled", "static_split")}), flush=True)


def part_reclaim(args, res):
    d = Daemon(args, str(args.reclaim + args.take), "1G", "reclaim")
    try:
        common = ["--backend", args.backend, "--socket", d.sock, "--base", "0", "--large-handles", "1G"]
        idle = spawn("pool", *common)
        taker = spawn("pool", *common)
        expect(idle)
        expect(taker)
        ask(taker, f"take {args.take}")  # warm: its first handle
        times = []
        for _ in range(args.repeats):
            ask(idle, f"hold {args.reclaim}")  # cached by the idle client: the pool has `take` bytes left
            x = ask(taker, f"take {2 * args.take}")
            if not x["ok"]:
                raise RuntimeError("reclaim: " + x["error"])
            times.append(x["take_s"])
        # A client with pages, SIGKILLed: how long until the daemon has them back.
        victim = spawn("pool", "--backend", args.backend, "--socket", d.sock, "--base", str(args.reclaim // 4))
        expect(victim)
        held = d.status()["used_bytes"]
        s = time.perf_counter()
        os.kill(victim.pid, signal.SIGKILL)
        while d.status()["used_bytes"] >= held and time.perf_counter() - s < 10:
            time.sleep(0.001)
        back_s = time.perf_counter() - s
        victim.wait()
        for w in (idle, taker):
            w.stdin.write("quit\n")
            w.stdin.flush()
            w.wait(timeout=60)
    finally:
        d.close()
    t = sorted(times)
    res["reclaim"] = {"idle_cached_bytes": args.reclaim, "repeats": len(t), "reclaim_ms": [round(x * 1e3, 2) for x in times],
                      "reclaim_ms_median": round(t[len(t) // 2] * 1e3, 2), "reclaim_ms_max": round(t[-1] * 1e3, 2),
                      "sigkill_pages_back_ms": round(back_s * 1e3, 2), "sigkill_held_before_bytes": held}
    print("reclaim:", json.dumps(res["reclaim"]), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--role")
    ap.add_argument("--socket")
    ap.add_argument("--parts", default="attach,dedup,pool,reclaim")
    ap.add_argument("--dedup-limit", type=int, default=150)
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--attach-bytes", type=int, default=16 * GiB)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--cap", type=int, default=24 * GiB)
    ap.add_argument("--base", type=int, default=2 * GiB)
    ap.add_argument("--step", type=int, default=GiB)
    ap.add_argument("--target", type=int, default=16 * GiB)
    ap.add_argument("--static-cap", type=int, default=0)
    ap.add_argument("--large-handles", default="", help="large_handle_size of the pool workers (e.g. 1G)")
    ap.add_argument("--reclaim", type=int, default=32 * GiB)
    ap.add_argument("--take", type=int, default=GiB)
    ap.add_argument("--json")
    ap.add_argument("--out-dir", default=os.environ.get("OUT", tempfile.gettempdir()))
    args = ap.parse_args()
    if args.role:
        return {"model": role_model, "publish16": role_publish16, "attach": role_attach, "pool": role_pool}[args.role](args)
    res = {"device": None, "parts": args.parts, "backend": args.backend}
    try:
        res["device"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                       capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception:
        res["device"] = "no GPU (host backend)"
    def too_long(*_):
        raise TimeoutError("part ran past its time limit")

    signal.signal(signal.SIGALRM, too_long)
    limits = {"dedup": args.dedup_limit, "attach": 60, "pool": 90, "reclaim": 60}
    for part in args.parts.split(","):
        t = time.perf_counter()
        signal.alarm(limits[part])
        try:
            {"dedup": part_dedup, "attach": part_attach, "pool": part_pool, "reclaim": part_reclaim}[part](args, res)
        except Exception as e:
            res[part + "_error"] = repr(e)[:500]
            print(f"{part}: FAILED {e!r}", flush=True)
            for p in PROCS:
                if p.poll() is None:
                    p.kill()
        finally:
            signal.alarm(0)
        res[part + "_wall_s"] = round(time.perf_counter() - t, 1)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(res, f, indent=1)
    print(json.dumps({k: v for k, v in res.items() if not isinstance(v, dict)}))


if __name__ == "__main__":
    main()
