#!/usr/bin/python3
"""PyTorch baseline for `memcap reproduce`: the same experiments at the same sample sizes.

The PyTorch peer of reproduce_numpy.py, with the same structure and the same output,
written the way one writes it in PyTorch on a CPU: everything batched over seeds,
episodes, queries and pairs (bmm / baddbmm / broadcast matmul), FFTs through
torch.fft.rfft/irfft, the probe's ridge normal equations through torch.linalg.solve,
autograd off (torch.inference_mode), all cores (torch.set_num_threads). The only
Python loop over data is the rotation RNN's recurrence over time steps (sequential by
nature), one baddbmm per step over every episode and seed of a cell. Memory states are
float32 like memcap's; the probe's least squares and the diagnostics are float64 like
memcap's (and like the numpy baseline's).

It does not reproduce memcap's or numpy's random streams (it uses torch.Generator);
it computes the same quantities, so its numbers agree with theirs within sampling
error, not bit for bit.

Experiments (harness/reproduce.cpp; the list of reproduce_numpy.py):
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

Threads: --threads N (default: OPENBLAS_NUM_THREADS, else OMP_NUM_THREADS, else the
cores this process may run on) sets torch's intra-op threads and, because Debian's
torch does its GEMMs and LAPACK in OpenBLAS, OpenBLAS's threads too. Run it as
scripts/compare-baseline.sh does: on OpenBLAS's OpenMP build, so torch's ops and its
GEMMs share one thread pool (LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp,
package libopenblas0-openmp), and, on a shared machine, with OMP_WAIT_POLICY=passive.

Usage: reproduce_torch.py [--seed S] [--quiet] [--timings] [--threads N]
"""
import argparse
import math
import os
import sys
import time

D = 64          # key/value dimension
QUERIES = 32    # reads per assoc-recall memory
SEEDS3 = 20     # essay 004 Part 3: 20 memories
SEEDS1 = 5      # Part 1: 5 rotations
VOCAB = 16
TRAIN, TEST = 2000, 1000
RIDGE = 1e-6

torch = None    # imported in main(), after OpenBLAS's thread count is set
F32, F64 = None, None


def unit(x):
    return x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)


def nearest(reads, cands):
    """Index of the candidate nearest (Euclidean) to each read. reads (..., m, d), cands (..., c, d)."""
    sq = (cands * cands).sum(-1)
    return (sq.unsqueeze(-2) - 2.0 * (reads @ cands.transpose(-1, -2))).argmin(-1)


def gather_rows(x, idx):
    """x (S, n, d), idx (S, m) -> (S, m, d)."""
    return torch.gather(x, 1, idx.unsqueeze(-1).expand(-1, -1, x.shape[-1]))


def randn(gen, *shape, dtype=None):
    return torch.randn(shape, generator=gen, dtype=dtype or F32)


def randint(gen, high, *shape):
    return torch.randint(0, high, shape, generator=gen)


# ------------------------------------------------------------------ associative recall (Part 3, Part 2)

def assoc_data(gen, seeds, n, d=D, queries=QUERIES):
    k = unit(randn(gen, seeds, n, d))
    v = unit(randn(gen, seeds, n, d))
    target = randint(gen, n, seeds, queries)
    return k, v, target


def read_cache(k, v, q, beta=16.0):
    return torch.softmax(beta * (q @ k.transpose(-1, -2)), dim=-1) @ v   # two bmm around a softmax


def read_grid(k, v, q):
    m = v.transpose(-1, -2) @ k                  # M = sum_i v_i k_i^T, one bmm over the seeds
    return q @ m.transpose(-1, -2)               # M q for every query


def read_hrr(k, v, q):
    d = k.shape[-1]
    rfft, irfft = torch.fft.rfft, torch.fft.irfft
    trace = irfft((rfft(k) * rfft(v)).sum(1), n=d)                    # T = sum_i k_i (*) v_i
    ft = rfft(trace).unsqueeze(1)
    return irfft(torch.conj(rfft(q)) * ft, n=d)                       # correlation with q


def per_seed_accuracy(reads, v, target):
    return (nearest(reads, v) == target).double().mean(-1)


def part3(gen):
    sizes = [4, 8, 16, 32, 64, 128, 256, 512]
    out = {"cache": {}, "grid": {}, "hrr": {}, "shuffled": {}}
    for n in sizes:
        k, v, target = assoc_data(gen, SEEDS3, n)
        q = gather_rows(k, target)
        out["cache"][n] = per_seed_accuracy(read_cache(k, v, q), v, target)
        out["grid"][n] = per_seed_accuracy(read_grid(k, v, q), v, target)
        out["hrr"][n] = per_seed_accuracy(read_hrr(k, v, q), v, target)
    for n in (4, 512):  # control: a random query instead of a stored key
        k, v, target = assoc_data(gen, SEEDS3, n)
        q = unit(randn(gen, SEEDS3, QUERIES, D))
        out["shuffled"][n] = per_seed_accuracy(read_cache(k, v, q), v, target)
    return out


def beta_sweep(gen):
    betas = torch.tensor([0, 1, 2, 4, 8, 16, 32, 64], dtype=F32)
    k, v, target = assoc_data(gen, SEEDS3, 64)
    q = unit(gather_rows(k, target) + 0.12 * randn(gen, SEEDS3, QUERIES, D))
    scores = q @ k.transpose(-1, -2)                                   # shared by every beta (paired)
    reads = torch.softmax(betas.view(-1, 1, 1, 1) * scores, dim=-1) @ v   # (betas, seeds, queries, d)
    acc = (nearest(reads, v) == target).double().mean(-1)               # (betas, seeds)
    dist = torch.linalg.vector_norm(reads - gather_rows(v, target), dim=-1).mean(-1)
    return betas, acc, dist


# ------------------------------------------------------------------ attention diagnostics (Parts 2, 4)

def sqrt_d_stats(gen, dims=(4, 16, 64, 256, 1024), keys=64, trials=2000, chunk_floats=1 << 22):
    out = []
    for d in dims:
        logits = []
        step = max(1, chunk_floats // (keys * d))
        for start in range(0, trials, step):
            t = min(step, trials - start)
            k = randn(gen, t, keys, d)
            q = randn(gen, t, d, 1)
            logits.append(torch.bmm(k, q)[..., 0].double())
        logits = torch.cat(logits)
        for scaled in (False, True):
            p = torch.softmax(logits / math.sqrt(d) if scaled else logits, dim=-1)
            h = -torch.special.xlogy(p, p).sum(-1)                           # 0 log 0 = 0
            stats = {"max weight": p.max(-1).values, "entropy": h, "sum p(1-p)": (p * (1 - p)).sum(-1)}
            out.append((d, scaled, {name: (x.mean().item(), x.std(unbiased=False).item() / math.sqrt(trials))
                                    for name, x in stats.items()}))
    return out


def ranks(x):
    return torch.argsort(torch.argsort(x, dim=-1), dim=-1).double()


def weight_vs_influence(gen, sigmas=(0.0, 0.5, 1.5), records=16, d=32, beta=16.0, layers=2000):
    k = unit(randn(gen, layers, records, d, dtype=F64))
    q = unit(randn(gen, layers, d, dtype=F64)).unsqueeze(-1)
    v_dir = unit(randn(gen, layers, records, d, dtype=F64))
    z = randn(gen, layers, records, 1, dtype=F64)           # the same draws for every sigma (paired)
    p = torch.softmax(beta * torch.bmm(k, q)[..., 0], dim=-1)   # (layers, records)
    out = {}
    for sigma in sigmas:
        v = v_dir * torch.exp(sigma * z)
        o = torch.bmm(p.unsqueeze(1), v)                    # (layers, 1, d)
        without = (o - p.unsqueeze(-1) * v) / (1 - p).unsqueeze(-1)   # record i removed, rest renormalised
        influence = torch.linalg.vector_norm(o - without, dim=-1)
        mismatch = (p.argmax(-1) != influence.argmax(-1)).double().mean().item()
        ra, rb = ranks(p), ranks(influence)
        ra -= ra.mean(-1, keepdim=True)
        rb -= rb.mean(-1, keepdim=True)
        rho = (ra * rb).sum(-1) / torch.sqrt((ra * ra).sum(-1) * (rb * rb).sum(-1))
        out[sigma] = (mismatch, rho.mean().item(), rho.std(unbiased=False).item() / math.sqrt(layers))
    return out


# ------------------------------------------------------------------ rotation RNN + probe (Part 1)

def haar(gen, batch, dim):
    g = randn(gen, batch, dim, dim, dtype=F64)
    qm, r = torch.linalg.qr(g)
    return qm * torch.sign(torch.diagonal(r, dim1=-2, dim2=-1)).unsqueeze(-2)   # Mezzadri's sign fix: Haar


def rnn_probe(gen, rhos, length, slots_of):
    """Rotation RNN (s <- rho R s + x_t, s_0 = 0, x_t = code of token t) read by a least-squares probe.

    One call runs every (rho, seed) of one stream length together: the recurrence is
    one baddbmm per time step over (rho x seed) x (train + test) episodes.
    `slots_of(length)` gives, per slot, the position whose token is the target.
    Returns accuracy (rho, seed, slot).
    """
    g = len(rhos) * SEEDS1
    episodes = TRAIN + TEST
    codes = unit(randn(gen, g, VOCAB, D))                                              # new codes per seed
    rho = torch.tensor([r for r in rhos for _ in range(SEEDS1)], dtype=F64).view(g, 1, 1)
    trans_t = (rho * haar(gen, g, D)).transpose(-1, -2).contiguous().to(F32)          # new R per seed
    tokens = randint(gen, VOCAB, g, episodes, length)
    table = codes.reshape(g * VOCAB, D)
    rows = (tokens + VOCAB * torch.arange(g).view(g, 1, 1)).permute(2, 0, 1).contiguous()  # (t, g, E)
    s = torch.zeros(g, episodes, D, dtype=F32)
    for t in range(length):                                                            # sequential in t
        s = torch.baddbmm(table[rows[t]], s, trans_t)                                  # x_t + s (rho R)^T

    pos = slots_of(length)                                                             # (slots,)
    nslots = len(pos)
    target = tokens[:, :, pos]                                                         # (g, E, slots)
    feats = torch.cat([s.double(), torch.ones(g, episodes, 1, dtype=F64)], dim=-1)     # [s, 1]
    xtr, xte = feats[:, :TRAIN], feats[:, TRAIN:]
    y = torch.zeros(g, TRAIN, nslots, VOCAB, dtype=F64)                                # one-hot per slot
    y.scatter_(-1, target[:, :TRAIN].unsqueeze(-1), 1.0)
    y = y.reshape(g, TRAIN, nslots * VOCAB)
    xtr_t = xtr.transpose(-1, -2)
    gram = xtr_t @ xtr
    lam = RIDGE * torch.diagonal(gram, dim1=-2, dim2=-1).sum(-1) / gram.shape[-1]
    gram += lam.view(g, 1, 1) * torch.eye(gram.shape[-1], dtype=F64)
    w = torch.linalg.solve(gram, xtr_t @ y)                                           # all slots at once
    pred = (xte @ w).reshape(g, TEST, nslots, VOCAB).argmax(-1)
    return (pred == target[:, TRAIN:]).double().mean(1).reshape(len(rhos), SEEDS1, nslots)


def lag_recall(gen, rhos=(0.8, 0.9, 0.97), length=80, lags=60):
    acc = rnn_probe(gen, rhos, length, lambda n: n - 1 - torch.arange(lags))   # slot k-1 <-> lag k
    return dict(zip(rhos, acc))


def copying(gen, rhos=(0.9, 0.97), lengths=(5, 10, 20, 40, 60)):
    out = {}
    for n in lengths:
        acc = rnn_probe(gen, rhos, n, lambda n: torch.arange(n))
        for rho, a in zip(rhos, acc):
            out[(rho, n)] = a.mean(-1)   # per seed: mean over positions
    return out


def cache_copying(gen, lengths=(5, 10, 20, 40, 60), episodes=TEST):
    """Position-keyed softmax cache: keys = position codes, values = token codes, query = position code."""
    out = {}
    for n in lengths:
        codes = unit(randn(gen, SEEDS1, VOCAB, D))
        pos = unit(randn(gen, SEEDS1, n, D))
        tokens = randint(gen, VOCAB, SEEDS1, episodes, n)
        by_pos = tokens.transpose(1, 2)                                                 # (S, n, E)
        v = codes.reshape(-1, D)[by_pos + VOCAB * torch.arange(SEEDS1).view(-1, 1, 1)]   # (S, n, E, D)
        # keys and queries are the position codes, the same in every episode: the weights are
        # one n x n softmax per seed, and the reads of all episodes are one bmm over the seeds
        w = torch.softmax(16.0 * (pos @ pos.transpose(-1, -2)), dim=-1)                # (S, n, n)
        reads = (w @ v.reshape(SEEDS1, n, episodes * D)).reshape(SEEDS1, n * episodes, D)
        out[n] = (nearest(reads, codes) == by_pos.reshape(SEEDS1, -1)).double().mean(-1)
    return out


# ------------------------------------------------------------------ worked examples and lab (essay 000, 004)

def lab():
    t = lambda x: torch.tensor(x, dtype=F64)
    scale = 1 / math.sqrt(2)
    k = t([[2, 0], [0, 2], [1.2, 0.8]])
    v = t([[10, 0], [0, 10], [6, 4]])
    q = t([2, 0])

    def read(k, v, q, beta, mask=None):
        s = beta * (k @ q)
        if mask is not None:
            s = torch.where(mask, s, t(-math.inf))
        w = torch.softmax(s, dim=-1)
        return w @ v, w

    out, w = read(k, v, q, scale)
    perm = [2, 0, 1]
    kk = t([[2, 0], [0, 2], [1, -2]])
    ws = read(kk, torch.eye(3, dtype=F64), t([0.5, -1.5]), scale)[1]
    wu = read(kk, torch.eye(3, dtype=F64), t([0.5, -1.5]), 1.0)[1]
    mw = read(k, v, q, scale, torch.tensor([False, True, True]))[1]
    rv = t([[1, 0], [0, 1], [0.5, 0.5]])
    checks = {
        "q = [2, 0] -> output": (out, [8.638, 1.362]),
        "Kannada weights, scaled": (ws, [0.145, 0.009, 0.847]),
        "Kannada weights, unscaled": (wu, [0.076, 0.001, 0.923]),
    }
    lab_checks = {
        "positive read: weights 0.724 > 0.233 > 0.043": bool(w[0] > w[2] > w[1] and abs(w[0] - 0.724) < 5e-4),
        "paired permutation: same output": bool((read(k[perm], v[perm], q, scale)[0] - out).abs().max() < 1e-9),
        "key collision: 0 and 100 read 50": bool(abs(read(t([[1, 0], [1, 0]]), t([[0], [100]]),
                                                          t([1, 0]), scale)[0][0] - 50) < 1e-9),
        "two different routes, same output": bool((t([.5, .5, 0]) @ rv - t([0, 0, 1]) @ rv).abs().max() < 1e-12),
        "uniform weights give the exact mean 8": bool(abs(read(t([[0.3], [-1], [2]]), t([[2], [8], [14]]),
                                                               t([5]), 0.0)[0][0] - 8) < 1e-9),
        "structural mask: weights [0, 0.155, 0.845]": bool(mw[0] == 0 and abs(mw[1] - 0.155) < 5e-4
                                                          and abs(mw[2] - 0.845) < 5e-4),
    }
    return checks, lab_checks


# ------------------------------------------------------------------ main

def pct(x):
    return f"{100 * float(x):5.1f}"


def mean_sd(x):
    x = torch.as_tensor(x, dtype=F64)
    return f"{100 * x.mean().item():5.1f} ± {100 * x.std(unbiased=True).item():4.1f}"


def default_threads():
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        if os.environ.get(var, "").isdigit() and int(os.environ[var]) > 0:
            return int(os.environ[var])
    return len(os.sched_getaffinity(0))


def main():
    global torch, F32, F64
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="seed of the torch.Generator (default 0)")
    ap.add_argument("--quiet", action="store_true", help="print nothing but the total time")
    ap.add_argument("--timings", action="store_true", help="print the time of each experiment")
    ap.add_argument("--threads", type=int, default=default_threads(),
                    help="torch and OpenBLAS threads (default: OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, else nproc)")
    args = ap.parse_args()
    if args.threads < 1:
        ap.error("--threads must be positive")
    os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)   # read by OpenBLAS when torch loads it
    import torch as _torch
    torch = _torch
    F32, F64 = torch.float32, torch.float64
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(args.seed)

    times = {}
    t_all = time.perf_counter()

    def timed(name, fn, *a):
        t = time.perf_counter()
        r = fn(*a)
        times[name] = time.perf_counter() - t
        return r

    with torch.inference_mode():
        p3 = timed("assoc recall (cache, grid, HRR, shuffled)", part3, gen)
        betas, bacc, bdist = timed("beta sweep", beta_sweep, gen)
        sq = timed("sqrt(d) statistics", sqrt_d_stats, gen)
        lag = timed("lag recall (rotation + probe)", lag_recall, gen)
        cp = timed("copying (rotation + probe)", copying, gen)
        cc = timed("copying (position-keyed cache)", cache_copying, gen)
        wi = timed("weight vs influence", weight_vs_influence, gen)
        examples, lab_checks = timed("worked examples and lab", lab)
    total = time.perf_counter() - t_all

    if args.quiet:
        print(f"torch baseline: {total:.3f} s")
        return 0

    print(f"torch baseline of `memcap reproduce` (torch {torch.__version__}, {args.threads} threads; "
          "accuracy in %, mean ± sd across seeds)\n")
    print("assoc. recall, d = 64, 20 seeds x 32 queries")
    print("    n   cache beta=16      grid d x d        HRR D = d")
    for n in p3["cache"]:
        print(f"  {n:4d}  {mean_sd(p3['cache'][n])}    {mean_sd(p3['grid'][n])}    {mean_sd(p3['hrr'][n])}")
    for n, a in p3["shuffled"].items():
        print(f"  shuffled query, n = {n}: {mean_sd(a)}  (essay {'24.7' if n == 4 else '0.2'})")
    print("\nbeta sweep, n = 64, noise 0.12: accuracy, distance to the right value")
    for b, a, dd in zip(betas.tolist(), bacc, bdist):
        print(f"  beta = {b:4g}: {mean_sd(a)}   {dd.mean().item():.3f}")
    print("\nsqrt(d) statistics, 64 keys, 2000 trials: max weight, entropy (nats), sum p(1-p)")
    for d, scaled, st in sq:
        vals = "  ".join(f"{m:.3f}" for m, _ in st.values())
        print(f"  {'scaled  ' if scaled else 'unscaled'} d = {d:4d}: {vals}")
    print("\nlag recall, rotation RNN D = 64 (Haar R), probe 2000/1000 episodes, 5 seeds")
    for rho, a in lag.items():
        m = a.mean(0)
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
        ok = torch.allclose(got, torch.tensor(want, dtype=F64), rtol=1e-5, atol=5e-4)
        print(f"  {name}: {[round(x, 3) for x in got.tolist()]} (essay {want}) {'agrees' if ok else 'DIFFERS'}")
    print(f"  lab checks of essay 000: {sum(lab_checks.values())} of {len(lab_checks)} pass")
    if args.timings:
        print("\ntimings (s)")
        for name, t in times.items():
            print(f"  {t:7.3f}  {name}")
    print(f"\ntotal {total:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
