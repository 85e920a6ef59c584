#!/usr/bin/python3
"""numpy peer of one associative-recall sweep block of memcap:

    memcap run -m softmax -m linear -m delta -m hrr -t assoc_recall \\
        --n 4 8 16 32 64 128 256 512 --seeds 200 --d 64

The same work at the same sizes, each memory at its natural size (no budget):
  * softmax: unbounded cache, read softmax(beta K q)^T V, beta = 16 on raw dot products;
  * linear:  grid M (d x d), M += v k^T, read M q;
  * delta:   grid M (d x d), M += beta_w (v - M k) k^T with beta_w = 1, one pass in
             write order (sequential over the pairs; batched over the seeds), keys and
             queries normalised to unit length, read M q;
  * hrr:     trace T of D = d floats, T += k (*) v (circular convolution), read by
             circular correlation irfft(conj(F q) . F T).
Per seed one episode: n unit Gaussian (key, value) pairs, 32 queries drawn with
replacement from the stored keys; a read is correct when it is nearest (Euclidean) to
the right value among the n stored values. Every memory sees the same episodes
(paired, as in memcap). Also computed, as memcap does: the mean distance of the read
to the right value.

Written the way one writes it fast in numpy: batched over the seeds (batched matmul,
numpy.fft.rfft/irfft); the only Python loop over data is the delta rule's pass over
the pairs. States float32 like memcap's. Its random streams are numpy's, not memcap's:
the accuracies agree with memcap's within sampling error, not bit for bit.

Usage: assoc_block_numpy.py [--seed S] [--seeds 200] [--d 64] [--n 4 8 ...] [--quiet] [--timings]
"""
import argparse
import sys
import time

import numpy as np

MEMORIES = ("softmax", "linear", "delta", "hrr")


def unit(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def episodes(rng, seeds, n, d, queries):
    k = unit(rng.standard_normal((seeds, n, d), dtype=np.float32))
    v = unit(rng.standard_normal((seeds, n, d), dtype=np.float32))
    target = rng.integers(0, n, size=(seeds, queries))
    q = np.take_along_axis(k, target[..., None], axis=1)              # stored keys, with replacement
    return k, v, q, target


def read_softmax(k, v, q, beta):
    return softmax(beta * (q @ np.swapaxes(k, -1, -2))) @ v


def read_linear(k, v, q):
    m = np.swapaxes(v, -1, -2) @ k                                    # M = sum_i v_i k_i^T
    return q @ np.swapaxes(m, -1, -2)                                  # M q


def read_delta(k, v, q, beta_w=1.0):
    phi = unit(k)
    seeds, n, d = k.shape
    m = np.zeros((seeds, v.shape[-1], d), dtype=np.float32)
    for i in range(n):                                                 # sequential in write order
        f = phi[:, i, :]
        err = v[:, i, :] - np.einsum("svd,sd->sv", m, f)               # v - M k
        m += (beta_w * err)[:, :, None] * f[:, None, :]
    return unit(q) @ np.swapaxes(m, -1, -2)


def read_hrr(k, v, q):
    d = k.shape[-1]
    trace = np.fft.irfft((np.fft.rfft(k) * np.fft.rfft(v)).sum(axis=1), n=d)   # T = sum_i k_i (*) v_i
    return np.fft.irfft(np.conj(np.fft.rfft(q)) * np.fft.rfft(trace)[:, None, :], n=d)


def score(reads, v, target):
    """Per seed: fraction of reads nearest their target value, mean distance to it."""
    sq = np.einsum("snd,snd->sn", v, v)
    best = (sq[:, None, :] - 2.0 * reads @ np.swapaxes(v, -1, -2)).argmin(axis=-1)
    right = np.take_along_axis(v, target[..., None], axis=1)
    return (best == target).mean(axis=-1), np.linalg.norm(reads - right, axis=-1).mean(axis=-1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="seed of numpy.random.default_rng (default 0)")
    ap.add_argument("--seeds", type=int, default=200, help="episodes (memcap seeds) per n (default 200)")
    ap.add_argument("--d", type=int, default=64, help="key/value dimension (default 64)")
    ap.add_argument("--n", type=int, nargs="+", default=[4, 8, 16, 32, 64, 128, 256, 512], help="stored pairs")
    ap.add_argument("--queries", type=int, default=32, help="reads per episode (default 32)")
    ap.add_argument("--beta", type=float, default=16.0, help="softmax cache beta (default 16)")
    ap.add_argument("--quiet", action="store_true", help="print nothing but the total time")
    ap.add_argument("--timings", action="store_true", help="print the time of each memory")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)

    reads = {"softmax": lambda k, v, q: read_softmax(k, v, q, args.beta),
             "linear": read_linear, "delta": read_delta, "hrr": read_hrr}
    acc = {m: {} for m in MEMORIES}
    dist = {m: {} for m in MEMORIES}
    times = dict.fromkeys(("episodes",) + MEMORIES, 0.0)
    t_all = time.perf_counter()
    for n in args.n:
        t = time.perf_counter()
        k, v, q, target = episodes(rng, args.seeds, n, args.d, args.queries)
        times["episodes"] += time.perf_counter() - t
        for m in MEMORIES:
            t = time.perf_counter()
            acc[m][n], dist[m][n] = score(reads[m](k, v, q), v, target)
            times[m] += time.perf_counter() - t
    total = time.perf_counter() - t_all

    if args.quiet:
        print(f"numpy assoc block: {total:.3f} s")
        return 0
    print(f"numpy peer of the assoc-recall block (numpy {np.__version__}): d = {args.d}, "
          f"{args.seeds} seeds x {args.queries} queries")
    print("accuracy in % (mean over seeds) / mean distance to the right value")
    print("     n" + "".join(f"  {m:>15s}" for m in MEMORIES))
    for n in args.n:
        print(f"  {n:4d}" + "".join(f"  {100 * acc[m][n].mean():6.1f} / {dist[m][n].mean():5.3f}" for m in MEMORIES))
    if args.timings:
        print("\ntimings (s)")
        for name, t in times.items():
            print(f"  {t:7.3f}  {name}")
    print(f"\ntotal {total:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
