#!/usr/bin/python3
"""numpy baseline for `memcap reproduce`: the same experiments at the same sample sizes.

Written the way one would write it fast in numpy, as a fair peer of memcap:
everything is vectorised over seeds, episodes, queries and pairs (batched matmul /
einsum), FFTs go through numpy.fft.rfft/irfft, the probe readout solves its ridge
normal equations with numpy.linalg.solve, and the only Python loop over data is the
rotation RNN's recurrence over time steps (sequential by nature), vectorised over
every episode and seed of a cell.  Memory states are float32 like memcap's; the
probe's least squares and the diagnostics are float64 like memcap's.

It does not reproduce memcap's random streams (it uses numpy.random.default_rng);
it computes the same quantities, so its numbers agree with memcap's
`reproduce/REPRODUCTION.md` within sampling error, not bit for bit.

Experiments (harness/reproduce.cpp):
  * assoc. recall, d = 64, n = 4..512: softmax cache (beta = 16), linear grid d x d,
    HRR (D = d) -- 20 seeds x 32 queries; shuffled query (cache) at n = 4, 512
  * beta sweep: n = 64, query noise 0.12, beta in {0,1,2,4,8,16,32,64}, 20 seeds
  * sqrt(d) statistics: d in {4,16,64,256,1024}, 64 keys, 2000 trials
  * lag recall: rotation RNN (Haar R, D = 64), rho in {0.8,0.9,0.97}, T = 80,
    lags 1..60, probe fitted on 2000 and scored on 1000 episodes, 5 seeds
  * copying: rho in {0.9,0.97}, L in {5,10,20,40,60}, same probe, 5 seeds;
    position-keyed softmax cache copying, 1000 episodes x 5 seeds
  * weight vs influence: 2000 layers x 16 records, d = 32, beta = 16, sigma in {0,0.5,1.5}
  * the worked examples and lab checks of essays 000 and 004

Usage: reproduce_numpy.py [--seed S] [--quiet] [--timings]
"""
import argparse
import sys
import time

import numpy as np

D = 64          # key/value dimension
QUERIES = 32    # reads per assoc-recall memory
SEEDS3 = 20     # essay 004 Part 3: 20 memories
SEEDS1 = 5      # Part 1: 5 rotations
VOCAB = 16
TRAIN, TEST = 2000, 1000
RIDGE = 1e-6


def unit(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def nearest(reads, cands):
    """Index of the candidate nearest (Euclidean) to each read. reads (..., m, d), cands (..., c, d)."""
    sq = np.einsum("...cd,...cd->...c", cands, cands)
    return (sq[..., None, :] - 2.0 * reads @ np.swapaxes(cands, -1, -2)).argmin(axis=-1)


def gather_rows(x, idx):
    """x (S, n, d), idx (S, m) -> (S, m, d)."""
    return np.take_along_axis(x, idx[..., None], axis=1)


# ------------------------------------------------------------------ associative recall (Part 3, Part 2)

def assoc_data(rng, seeds, n, d=D, queries=QUERIES):
    k = unit(rng.standard_normal((seeds, n, d), dtype=np.float32))
    v = unit(rng.standard_normal((seeds, n, d), dtype=np.float32))
    target = rng.integers(0, n, size=(seeds, queries))
    return k, v, target


def read_cache(k, v, q, beta=16.0):
    return softmax(beta * (q @ np.swapaxes(k, -1, -2))) @ v  # two batched GEMMs around a softmax


def read_grid(k, v, q):
    m = np.swapaxes(v, -1, -2) @ k                 # M = sum_i v_i k_i^T, one GEMM per memory
    return q @ np.swapaxes(m, -1, -2)               # M q for every query


def read_hrr(k, v, q):
    d = k.shape[-1]
    trace = np.fft.irfft((np.fft.rfft(k) * np.fft.rfft(v)).sum(axis=1), n=d)   # T = sum_i k_i (*) v_i
    ft = np.fft.rfft(trace)[:, None, :]
    return np.fft.irfft(np.conj(np.fft.rfft(q)) * ft, n=d)                      # correlation with q


def per_seed_accuracy(reads, v, target):
    return (nearest(reads, v) == target).mean(axis=-1)


def part3(rng):
    sizes = [4, 8, 16, 32, 64, 128, 256, 512]
    out = {"cache": {}, "grid": {}, "hrr": {}, "shuffled": {}}
    for n in sizes:
        k, v, target = assoc_data(rng, SEEDS3, n)
        q = gather_rows(k, target)
        out["cache"][n] = per_seed_accuracy(read_cache(k, v, q), v, target)
        out["grid"][n] = per_seed_accuracy(read_grid(k, v, q), v, target)
        out["hrr"][n] = per_seed_accuracy(read_hrr(k, v, q), v, target)
    for n in (4, 512):  # control: a random query instead of a stored key
        k, v, target = assoc_data(rng, SEEDS3, n)
        q = unit(rng.standard_normal((SEEDS3, QUERIES, D), dtype=np.float32))
        out["shuffled"][n] = per_seed_accuracy(read_cache(k, v, q), v, target)
    return out


def beta_sweep(rng):
    betas = np.array([0, 1, 2, 4, 8, 16, 32, 64], dtype=np.float32)
    k, v, target = assoc_data(rng, SEEDS3, 64)
    q = unit(gather_rows(k, target) + 0.12 * rng.standard_normal((SEEDS3, QUERIES, D), dtype=np.float32))
    scores = q @ np.swapaxes(k, -1, -2)                                   # shared by every beta (paired)
    reads = softmax(betas[:, None, None, None] * scores) @ v             # (betas, seeds, queries, d)
    acc = (nearest(reads, v) == target).mean(axis=-1)                    # (betas, seeds)
    dist = np.linalg.norm(reads - gather_rows(v, target), axis=-1).mean(axis=-1)
    return betas, acc, dist


# ------------------------------------------------------------------ attention diagnostics (Parts 2, 4)

def sqrt_d_stats(rng, dims=(4, 16, 64, 256, 1024), keys=64, trials=2000, chunk_floats=1 << 22):
    out = []
    for d in dims:
        logits = []
        step = max(1, chunk_floats // (keys * d))
        for start in range(0, trials, step):
            t = min(step, trials - start)
            k = rng.standard_normal((t, keys, d), dtype=np.float32)
            q = rng.standard_normal((t, d, 1), dtype=np.float32)
            logits.append((k @ q)[..., 0].astype(np.float64))
        logits = np.concatenate(logits)
        for scaled in (False, True):
            p = softmax(logits / np.sqrt(d) if scaled else logits)
            with np.errstate(divide="ignore", invalid="ignore"):
                h = -np.where(p > 0, p * np.log(p), 0.0).sum(axis=-1)
            stats = {"max weight": p.max(axis=-1), "entropy": h, "sum p(1-p)": (p * (1 - p)).sum(axis=-1)}
            out.append((d, scaled, {name: (x.mean(), x.std() / np.sqrt(trials)) for name, x in stats.items()}))
    return out


def ranks(x):
    return np.argsort(np.argsort(x, axis=-1), axis=-1).astype(np.float64)


def weight_vs_influence(rng, sigmas=(0.0, 0.5, 1.5), records=16, d=32, beta=16.0, layers=2000):
    k = unit(rng.standard_normal((layers, records, d)))
    q = unit(rng.standard_normal((layers, d)))[..., None]
    v_dir = unit(rng.standard_normal((layers, records, d)))
    z = rng.standard_normal((layers, records, 1))       # the same draws for every sigma (paired)
    p = softmax(beta * (k @ q)[..., 0])                 # (layers, records)
    out = {}
    for sigma in sigmas:
        v = v_dir * np.exp(sigma * z)
        o = np.einsum("lr,lrd->ld", p, v)[:, None, :]
        without = (o - p[..., None] * v) / (1 - p)[..., None]   # read with record i removed, rest renormalised
        influence = np.linalg.norm(o - without, axis=-1)
        mismatch = (p.argmax(-1) != influence.argmax(-1)).mean()
        ra, rb = ranks(p), ranks(influence)
        ra -= ra.mean(-1, keepdims=True)
        rb -= rb.mean(-1, keepdims=True)
        rho = (ra * rb).sum(-1) / np.sqrt((ra * ra).sum(-1) * (rb * rb).sum(-1))
        out[sigma] = (mismatch, rho.mean(), rho.std() / np.sqrt(layers))
    return out


# ------------------------------------------------------------------ rotation RNN + probe (Part 1)

def haar(rng, dim):
    g = rng.standard_normal((dim, dim))
    qm, r = np.linalg.qr(g)
    return qm * np.sign(np.diag(r))   # Mezzadri's sign fix: exactly Haar


def rnn_probe(rng, rhos, length, slots_of):
    """Rotation RNN (s <- rho R s + x_t, s_0 = 0, x_t = code of token t) read by a least-squares probe.

    One call runs every (rho, seed) of one stream length together: the recurrence is
    one batched GEMM per time step over (rho x seed) x (train + test) episodes.
    `slots_of(length)` gives, per slot, the position whose token is the target.
    Returns accuracy (rho, seed, slot).
    """
    g = len(rhos) * SEEDS1
    episodes = TRAIN + TEST
    codes = unit(rng.standard_normal((g, VOCAB, D))).astype(np.float32)              # new codes per seed
    trans = np.stack([rho * haar(rng, D) for rho in rhos for _ in range(SEEDS1)])     # new R per seed
    trans_t = np.ascontiguousarray(np.swapaxes(trans, -1, -2)).astype(np.float32)
    tokens = rng.integers(0, VOCAB, size=(g, episodes, length))
    table = codes.reshape(g * VOCAB, D)
    rows = tokens + VOCAB * np.arange(g)[:, None, None]                                # row of x_t in `table`
    s = np.zeros((g, episodes, D), dtype=np.float32)
    for t in range(length):                                                            # sequential in t
        s = s @ trans_t
        s += table.take(rows[:, :, t], axis=0)                                         # + x_t, (g, E, D)

    pos = slots_of(length)                                                             # (slots,)
    nslots = len(pos)
    target = tokens[:, :, pos]                                                         # (g, E, slots)
    feats = np.concatenate([s.astype(np.float64), np.ones((g, episodes, 1))], axis=-1)  # [s, 1]
    xtr, xte = feats[:, :TRAIN], feats[:, TRAIN:]
    y = np.zeros((g, TRAIN, nslots, VOCAB))                                            # one-hot per slot
    np.put_along_axis(y, target[:, :TRAIN, :, None], 1.0, axis=-1)
    y = y.reshape(g, TRAIN, nslots * VOCAB)
    gram = np.swapaxes(xtr, -1, -2) @ xtr
    lam = RIDGE * np.einsum("gii->g", gram) / gram.shape[-1]
    gram += lam[:, None, None] * np.eye(gram.shape[-1])
    w = np.linalg.solve(gram, np.swapaxes(xtr, -1, -2) @ y)                           # all slots at once
    pred = (xte @ w).reshape(g, TEST, nslots, VOCAB).argmax(-1)
    return (pred == target[:, TRAIN:]).mean(axis=1).reshape(len(rhos), SEEDS1, nslots)


def lag_recall(rng, rhos=(0.8, 0.9, 0.97), length=80, lags=60):
    acc = rnn_probe(rng, rhos, length, lambda n: n - 1 - np.arange(lags))   # slot k-1 <-> lag k
    return dict(zip(rhos, acc))


def copying(rng, rhos=(0.9, 0.97), lengths=(5, 10, 20, 40, 60)):
    out = {}
    for n in lengths:
        acc = rnn_probe(rng, rhos, n, lambda n: np.arange(n))
        for rho, a in zip(rhos, acc):
            out[(rho, n)] = a.mean(axis=-1)   # per seed: mean over positions
    return out


def cache_copying(rng, lengths=(5, 10, 20, 40, 60), episodes=TEST):
    """Position-keyed softmax cache: keys = position codes, values = token codes, query = position code."""
    out = {}
    for n in lengths:
        codes = unit(rng.standard_normal((SEEDS1, VOCAB, D), dtype=np.float32))
        pos = unit(rng.standard_normal((SEEDS1, n, D), dtype=np.float32))
        tokens = rng.integers(0, VOCAB, size=(SEEDS1, episodes, n))
        by_pos = tokens.transpose(0, 2, 1)                                             # (S, n, E)
        v = codes.reshape(-1, D).take(by_pos + VOCAB * np.arange(SEEDS1)[:, None, None], axis=0)  # (S, n, E, D)
        # keys and queries are the position codes, the same in every episode: the weights are
        # one n x n softmax per seed, and the reads of all episodes are one GEMM per seed
        w = softmax(16.0 * (pos @ np.swapaxes(pos, -1, -2)))                           # (S, n, n)
        reads = (w @ v.reshape(SEEDS1, n, episodes * D)).reshape(SEEDS1, n * episodes, D)
        out[n] = (nearest(reads, codes) == by_pos.reshape(SEEDS1, -1)).mean(axis=-1)
    return out


# ------------------------------------------------------------------ worked examples and lab (essay 000, 004)

def lab():
    scale = 1 / np.sqrt(2)
    k = np.array([[2, 0], [0, 2], [1.2, 0.8]])
    v = np.array([[10, 0], [0, 10], [6, 4]])
    q = np.array([2, 0])

    def read(k, v, q, beta, mask=None):
        s = beta * (k @ q)
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        w = softmax(s)
        return w @ v, w

    out, w = read(k, v, q, scale)
    perm = [2, 0, 1]
    kk = np.array([[2, 0], [0, 2], [1, -2]])
    ws = read(kk, np.eye(3), np.array([0.5, -1.5]), scale)[1]
    wu = read(kk, np.eye(3), np.array([0.5, -1.5]), 1.0)[1]
    mw = read(k, v, q, scale, np.array([False, True, True]))[1]
    rv = np.array([[1, 0], [0, 1], [0.5, 0.5]])
    checks = {
        "q = [2, 0] -> output": (out, [8.638, 1.362]),
        "Kannada weights, scaled": (ws, [0.145, 0.009, 0.847]),
        "Kannada weights, unscaled": (wu, [0.076, 0.001, 0.923]),
    }
    lab_checks = {
        "positive read: weights 0.724 > 0.233 > 0.043": w[0] > w[2] > w[1] and abs(w[0] - 0.724) < 5e-4,
        "paired permutation: same output": np.abs(read(k[perm], v[perm], q, scale)[0] - out).max() < 1e-9,
        "key collision: 0 and 100 read 50": abs(read(np.array([[1, 0], [1, 0]]), np.array([[0], [100]]),
                                                     np.array([1, 0]), scale)[0][0] - 50) < 1e-9,
        "two different routes, same output": np.abs(np.array([.5, .5, 0]) @ rv - np.array([0, 0, 1]) @ rv).max() < 1e-12,
        "uniform weights give the exact mean 8": abs(read(np.array([[0.3], [-1], [2]]), np.array([[2], [8], [14]]),
                                                          np.array([5]), 0.0)[0][0] - 8) < 1e-9,
        "structural mask: weights [0, 0.155, 0.845]": mw[0] == 0 and abs(mw[1] - 0.155) < 5e-4 and abs(mw[2] - 0.845) < 5e-4,
    }
    return checks, lab_checks


# ------------------------------------------------------------------ main

def pct(x):
    return f"{100 * x:5.1f}"


def mean_sd(x):
    x = np.asarray(x, dtype=np.float64)
    return f"{100 * x.mean():5.1f} ± {100 * x.std(ddof=1):4.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="seed of numpy.random.default_rng (default 0)")
    ap.add_argument("--quiet", action="store_true", help="print nothing but the total time")
    ap.add_argument("--timings", action="store_true", help="print the time of each experiment")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)

    times = {}
    t_all = time.perf_counter()

    def timed(name, fn, *a):
        t = time.perf_counter()
        r = fn(*a)
        times[name] = time.perf_counter() - t
        return r

    p3 = timed("assoc recall (cache, grid, HRR, shuffled)", part3, rng)
    betas, bacc, bdist = timed("beta sweep", beta_sweep, rng)
    sq = timed("sqrt(d) statistics", sqrt_d_stats, rng)
    lag = timed("lag recall (rotation + probe)", lag_recall, rng)
    cp = timed("copying (rotation + probe)", copying, rng)
    cc = timed("copying (position-keyed cache)", cache_copying, rng)
    wi = timed("weight vs influence", weight_vs_influence, rng)
    examples, lab_checks = timed("worked examples and lab", lab)
    total = time.perf_counter() - t_all

    if args.quiet:
        print(f"numpy baseline: {total:.3f} s")
        return 0

    print("numpy baseline of `memcap reproduce` (accuracy in %, mean ± sd across seeds)\n")
    print("assoc. recall, d = 64, 20 seeds x 32 queries")
    print("    n   cache beta=16      grid d x d        HRR D = d")
    for n in p3["cache"]:
        print(f"  {n:4d}  {mean_sd(p3['cache'][n])}    {mean_sd(p3['grid'][n])}    {mean_sd(p3['hrr'][n])}")
    for n, a in p3["shuffled"].items():
        print(f"  shuffled query, n = {n}: {mean_sd(a)}  (essay {'24.7' if n == 4 else '0.2'})")
    print("\nbeta sweep, n = 64, noise 0.12: accuracy, distance to the right value")
    for b, a, dd in zip(betas, bacc, bdist):
        print(f"  beta = {b:4g}: {mean_sd(a)}   {dd.mean():.3f}")
    print("\nsqrt(d) statistics, 64 keys, 2000 trials: max weight, entropy (nats), sum p(1-p)")
    for d, scaled, st in sq:
        vals = "  ".join(f"{m:.3f}" for m, _ in st.values())
        print(f"  {'scaled  ' if scaled else 'unscaled'} d = {d:4d}: {vals}")
    print("\nlag recall, rotation RNN D = 64 (Haar R), probe 2000/1000 episodes, 5 seeds")
    for rho, a in lag.items():
        m = a.mean(axis=0)
        print(f"  rho = {rho:4}: lag 1 {pct(m[0])}, 2 {pct(m[1])}, 3 {pct(m[2])}, 8 {pct(m[7])}, "
              f"9 {pct(m[8])}, 20 {pct(m[19])}, 60 {pct(m[59])}")
    print("\ncopying, mean over positions: rotation rho = 0.9 / rho = 0.97 / position-keyed cache")
    for n in cc:
        print(f"  L = {n:2d}: {mean_sd(cp[(0.9, n)])}  {mean_sd(cp[(0.97, n)])}  {mean_sd(cc[n])}")
    print("\nweight vs influence, 2000 layers: top weight not most influential, rank correlation")
    for sigma, (mm, rho, se) in wi.items():
        print(f"  sigma = {sigma:3}: {pct(mm)}   {rho:.3f} ± {se:.3f}")
    print("\nworked examples")
    for name, (got, want) in examples.items():
        ok = np.allclose(got, want, atol=5e-4)
        print(f"  {name}: {np.round(got, 3).tolist()} (essay {want}) {'agrees' if ok else 'DIFFERS'}")
    print(f"  lab checks of essay 000: {sum(lab_checks.values())} of {len(lab_checks)} pass")
    if args.timings:
        print("\ntimings (s)")
        for name, t in times.items():
            print(f"  {t:7.3f}  {name}")
    print(f"\ntotal {total:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
