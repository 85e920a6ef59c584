#!/usr/bin/python3
"""PyTorch peer of one associative-recall sweep block of memcap:

    memcap run -m softmax -m linear -m delta -m hrr -t assoc_recall \\
        --n 4 8 16 32 64 128 256 512 --seeds 200 --d 64

The same work as assoc_block_numpy.py (see there for the memories and the protocol),
written the way one writes it in PyTorch on a CPU: batched over the seeds (bmm,
baddbmm_, torch.fft.rfft/irfft), autograd off (torch.inference_mode), all cores
(torch.set_num_threads). The only Python loop over data is the delta rule's pass over
the pairs (sequential by nature): per pair one bmm for M k and one in-place rank-1
baddbmm_ for the update, over all seeds at once. States float32 like memcap's. Its
random streams are torch's, not memcap's: the accuracies agree with memcap's within
sampling error, not bit for bit.

Threads: --threads N (default: OPENBLAS_NUM_THREADS, else OMP_NUM_THREADS, else the
cores this process may run on) sets torch's intra-op threads and, because Debian's
torch does its GEMMs and LAPACK in OpenBLAS, OpenBLAS's threads too. Run it as
scripts/compare-baseline.sh does: on OpenBLAS's OpenMP build, so torch's ops and its
GEMMs share one thread pool (LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp,
package libopenblas0-openmp), and, on a shared machine, with OMP_WAIT_POLICY=passive.

Usage: assoc_block_torch.py [--seed S] [--seeds 200] [--d 64] [--n 4 8 ...] [--threads N] [--quiet] [--timings]
"""
import argparse
import os
import sys
import time

MEMORIES = ("softmax", "linear", "delta", "hrr")
torch = None    # imported in main(), after OpenBLAS's thread count is set


def unit(x):
    return x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)


def episodes(gen, seeds, n, d, queries):
    k = unit(torch.randn(seeds, n, d, generator=gen))
    v = unit(torch.randn(seeds, n, d, generator=gen))
    target = torch.randint(0, n, (seeds, queries), generator=gen)
    q = torch.gather(k, 1, target.unsqueeze(-1).expand(-1, -1, d))    # stored keys, with replacement
    return k, v, q, target


def read_softmax(k, v, q, beta):
    return torch.softmax(beta * (q @ k.transpose(-1, -2)), dim=-1) @ v


def read_linear(k, v, q):
    m = v.transpose(-1, -2) @ k                                        # M = sum_i v_i k_i^T
    return q @ m.transpose(-1, -2)                                     # M q


def read_delta(k, v, q, beta_w=1.0):
    phi = unit(k).transpose(0, 1).contiguous()                         # (n, seeds, d): pair i is phi[i]
    vals = v.transpose(0, 1).contiguous()
    n, seeds, d = phi.shape
    m = torch.zeros(seeds, vals.shape[-1], d)
    for i in range(n):                                                 # sequential in write order
        f = phi[i].unsqueeze(2)                                        # (seeds, d, 1)
        err = vals[i].unsqueeze(2) - torch.bmm(m, f)                   # v - M k
        m.baddbmm_(err, f.transpose(1, 2), alpha=beta_w)               # M += beta_w err k^T
    return unit(q) @ m.transpose(-1, -2)


def read_hrr(k, v, q):
    d = k.shape[-1]
    rfft, irfft = torch.fft.rfft, torch.fft.irfft
    trace = irfft((rfft(k) * rfft(v)).sum(1), n=d)                     # T = sum_i k_i (*) v_i
    return irfft(torch.conj(rfft(q)) * rfft(trace).unsqueeze(1), n=d)


def score(reads, v, target):
    """Per seed: fraction of reads nearest their target value, mean distance to it."""
    sq = (v * v).sum(-1)
    best = (sq.unsqueeze(1) - 2.0 * (reads @ v.transpose(-1, -2))).argmin(-1)
    right = torch.gather(v, 1, target.unsqueeze(-1).expand(-1, -1, v.shape[-1]))
    return (best == target).double().mean(-1), torch.linalg.vector_norm(reads - right, dim=-1).double().mean(-1)


def default_threads():
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        if os.environ.get(var, "").isdigit() and int(os.environ[var]) > 0:
            return int(os.environ[var])
    return len(os.sched_getaffinity(0))


def main():
    global torch
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="seed of the torch.Generator (default 0)")
    ap.add_argument("--seeds", type=int, default=200, help="episodes (memcap seeds) per n (default 200)")
    ap.add_argument("--d", type=int, default=64, help="key/value dimension (default 64)")
    ap.add_argument("--n", type=int, nargs="+", default=[4, 8, 16, 32, 64, 128, 256, 512], help="stored pairs")
    ap.add_argument("--queries", type=int, default=32, help="reads per episode (default 32)")
    ap.add_argument("--beta", type=float, default=16.0, help="softmax cache beta (default 16)")
    ap.add_argument("--threads", type=int, default=default_threads(),
                    help="torch and OpenBLAS threads (default: OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, else nproc)")
    ap.add_argument("--quiet", action="store_true", help="print nothing but the total time")
    ap.add_argument("--timings", action="store_true", help="print the time of each memory")
    args = ap.parse_args()
    if args.threads < 1:
        ap.error("--threads must be positive")
    os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)   # read by OpenBLAS when torch loads it
    import torch as _torch
    torch = _torch
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(args.seed)

    reads = {"softmax": lambda k, v, q: read_softmax(k, v, q, args.beta),
             "linear": read_linear, "delta": read_delta, "hrr": read_hrr}
    acc = {m: {} for m in MEMORIES}
    dist = {m: {} for m in MEMORIES}
    times = dict.fromkeys(("episodes",) + MEMORIES, 0.0)
    t_all = time.perf_counter()
    with torch.inference_mode():
        for n in args.n:
            t = time.perf_counter()
            k, v, q, target = episodes(gen, args.seeds, n, args.d, args.queries)
            times["episodes"] += time.perf_counter() - t
            for m in MEMORIES:
                t = time.perf_counter()
                acc[m][n], dist[m][n] = score(reads[m](k, v, q), v, target)
                times[m] += time.perf_counter() - t
    total = time.perf_counter() - t_all

    if args.quiet:
        print(f"torch assoc block: {total:.3f} s")
        return 0
    print(f"torch peer of the assoc-recall block (torch {torch.__version__}, {args.threads} threads): "
          f"d = {args.d}, {args.seeds} seeds x {args.queries} queries")
    print("accuracy in % (mean over seeds) / mean distance to the right value")
    print("     n" + "".join(f"  {m:>15s}" for m in MEMORIES))
    for n in args.n:
        print(f"  {n:4d}" + "".join(f"  {100 * acc[m][n].mean().item():6.1f} / {dist[m][n].mean().item():5.3f}"
                                    for m in MEMORIES))
    if args.timings:
        print("\ntimings (s)")
        for name, t in times.items():
            print(f"  {t:7.3f}  {name}")
    print(f"\ntotal {total:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
