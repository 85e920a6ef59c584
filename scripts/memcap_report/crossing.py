"""Capacity as a crossing, with an interval: where mean accuracy along n crosses a threshold, and a
95% interval from a bootstrap over the scored seeds.

The crossing n*(t) of a curve (n, mean accuracy) at threshold t: take the largest n tried whose
mean accuracy is >= t (the power-of-two capacity's rule, common.capacity) and the next n tried
above it, whose mean is < t: n* is interpolated linearly in log n between the two, at the point
where the straight line between their means meets t. So n* lies between the old capacity and the
next n tried, and a curve that is not monotone (a smaller n missing below a larger one that
passes) is read at its last downward crossing, the same bracket the old rule chose. When the
largest n tried passes, n* is at least that n (a lower bound, printed "≥N"); when none passes, it
is below the smallest n tried ("<N").

The mean at each n is the mean over the seeds measured there, averaged over the summary rows at
that n as the capacity table averages them (slots; a part read as the lowest of several parts
takes the lowest part's mean). Seeds need not be the same at every n: a refined sweep measures
more seeds near the crossing.

The interval: RESAMPLES resamples of the seed numbers the curve holds (with replacement, as
many as there are); in each the mean at every n is recomputed from the drawn seeds measured there
(a seed drawn twice counts twice; an n none of whose seeds was drawn keeps its measured mean),
and n* again; the 2.5th and 97.5th percentiles of those n* (resamples beyond the tried range
counting as beyond it) are the interval. Two memories measured on the same seed numbers, task
and budget were measured on the same episodes: their ratio n*_A / n*_B gets a paired interval,
both recomputed from the same draws (seed numbers drawn from the union of theirs). The draws come
from a generator seeded with RNG_SEED for every curve and pair, so outputs are byte-identical run
to run and do not depend on which other curves a report holds."""
import csv
import math
import operator
import os

import numpy as np

from .common import ReportError, fnum

THRESHOLDS = (0.5, 0.9, 0.99)
RESAMPLES = 1000
RNG_SEED = 20250917
CI = (0.025, 0.975)
HALF_WIDTH = 0.05  # a point is "resolved" when its interval's half-width is at most 5% of n*

KEY_COLUMNS = ("memory_spec", "task_spec", "readout", "budget_floats", "d", "n", "slot", "tuned")


def key_of(r):
    """The cell a summary (or per-seed) row belongs to."""
    return tuple(r.get(c, "") for c in KEY_COLUMNS)


def read_seeds(path):
    """{cell key: (seed numbers, accuracies)} from a per-seed CSV (memcap sweep's), the rows whose
    status is ok; {} when the file is not there. The file is parsed once while unchanged (several
    sections read the largest, streams.csv twice): each call gets a dict of its own, but the
    (seeds, accuracies) lists are shared between calls and must not be changed in place."""
    try:
        f = open(path, newline="")
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise ReportError("%s: cannot read (%s)" % (path, e.strerror or e)) from None
    with f:
        st = os.fstat(f.fileno())
        real = (os.path.realpath(path), st.st_mtime_ns, st.st_size)
        if real not in _PARSED:
            _PARSED[real] = _parse_seeds(path, f)
    return dict(_PARSED[real])


def _parse_seeds(path, f):
    """read_seeds' parse of the open file f."""
    out = {}
    reader = csv.reader(f)
    head = next(reader, [])
    need = KEY_COLUMNS + ("seed", "accuracy_frac", "status")
    missing = [c for c in need if c not in head and c != "tuned"]
    if missing:
        raise ReportError("%s: no column '%s'" % (path, missing[0]))
    # a column the file lacks ("tuned" in older CSVs) reads as "": an empty field appended to each row
    pad = any(c not in head for c in KEY_COLUMNS)
    key = operator.itemgetter(*[head.index(c) if c in head else len(head) for c in KEY_COLUMNS])
    si, ai, st = head.index("seed"), head.index("accuracy_frac"), head.index("status")
    for row in reader:
        if row[st] != "ok" or row[ai] == "":
            continue
        if pad:
            row.append("")
        k = key(row)
        got = out.get(k)
        if got is None:
            got = out[k] = ([], [])
        got[0].append(int(row[si]))
        got[1].append(float(row[ai]))
    return out


# Every per-seed CSV the report has read (load_seeds): {cell key: (seed numbers, accuracies)}. A cell two
# sweeps both measured (the same memory, settings, task, budget, width and n) holds the seeds of both.
SEEDS = {}


_MEANS = {}  # Curve.means' memo (a report recomputes some curves: a study's tables and its plain rows)
_DRAWS = {}
_DRAWS_B = {}


_LOADED = set()  # the per-seed CSVs in SEEDS (a study reading another's CSV reads it once)
_PARSED = {}  # read_seeds' files, parsed: {(real path, mtime, size): {cell key: (seeds, accuracies)}}


_DONE = {}  # estimates' and ratio's memo, by the curves' contents (a report asks for some of them again)


def reset_seeds():
    SEEDS.clear()
    _MEANS.clear()
    _DONE.clear()
    _LOADED.clear()
    _PARSED.clear()


def load_seeds(path):
    """Adds a per-seed CSV's cells to SEEDS (nothing when the file is not there, or was loaded already)."""
    try:
        st = os.stat(path)
    except OSError:
        return
    real = (os.path.realpath(path), st.st_mtime_ns, st.st_size)
    if real in _LOADED:
        return
    _LOADED.add(real)
    for k, (s, a) in read_seeds(path).items():
        if k in SEEDS:
            have = set(SEEDS[k][0])
            extra = [(x, y) for x, y in zip(s, a) if x not in have]
            if extra:
                SEEDS[k] = (SEEDS[k][0] + [x for x, _ in extra], SEEDS[k][1] + [y for _, y in extra])
        else:
            SEEDS[k] = (s, a)


class Curve:
    """One capacity curve along n: xs (the n tried, rising), the point means at each (the summary's),
    and, when every cell's seeds are known, what the bootstrap needs. `readings`: per x, a list of
    readings, each a list of summary rows whose lowest mean is the reading (one row: its mean)."""

    def __init__(self, xs, readings, seeds):
        self.xs = np.array(xs, dtype=float)
        self.point = np.array([np.mean([min(fnum(r["accuracy_mean_frac"]) for r in rd) for rd in rds])
                               for rds in readings])
        self.cells = []   # (seed numbers, accuracies) per cell
        self.shape = []   # per x: [[cell index, ...] per reading]
        self.seeds = None
        cols = {}
        for rds in readings:
            at = []
            for rd in rds:
                ids = []
                for r in rd:
                    k = key_of(r)
                    if k not in seeds:
                        return  # no per-seed rows: a point without an interval
                    if k not in cols:
                        cols[k] = len(self.cells)
                        self.cells.append(seeds[k])
                    ids.append(cols[k])
                at.append(ids)
            self.shape.append(at)
        self.seeds = np.array(sorted({s for c in self.cells for s in c[0]}), dtype=np.int64)

    def means(self, w, universe):
        """(B x len(xs)) means under seed weights w (B x len(universe)); memoised per curve, universe
        and weights (the weights are always draws(len(universe)) or draws_unpaired(len(universe)),
        arrays that live as long as the run)."""
        # the weights by identity: both streams' arrays are kept for the run (draws, draws_unpaired)
        assert w is _DRAWS.get(len(universe)) or w is _DRAWS_B.get(len(universe)), "weights not from draws()"
        key = (tuple(id(c) for c in self.cells), tuple(tuple(map(tuple, at)) for at in self.shape),
               universe.tobytes(), id(w))
        got = _MEANS.get(key)
        if got is not None:
            return got[1]
        v = np.zeros((len(universe), len(self.cells)))
        fallback = np.empty(len(self.cells))
        # den: how many of a row's draws fall on each cell's seeds, one column per distinct seed set
        # (most cells share one): sums of whole numbers, so exact in any order, as w @ mask was
        sets, set_of = {}, np.empty(len(self.cells), dtype=np.int64)
        for j, (s, a) in enumerate(self.cells):
            cols = np.searchsorted(universe, np.array(s, dtype=np.int64))
            v[cols, j] = a
            set_of[j] = sets.setdefault(cols.tobytes(), (len(sets), cols))[0]
            fallback[j] = np.mean(a)
        mask = np.zeros((len(universe), len(sets)))
        for i, cols in sets.values():
            mask[cols, i] = 1.0
        num, den = w @ v, (w @ mask)[:, set_of]
        m = np.where(den > 0, num / np.where(den > 0, den, 1.0), fallback)
        out = np.empty((w.shape[0], len(self.xs)))
        for i, at in enumerate(self.shape):
            if len(at) == 1 and len(at[0]) == 1:
                out[:, i] = m[:, at[0][0]]
            else:
                out[:, i] = np.mean([m[:, ids].min(axis=1) for ids in at], axis=0)
        _MEANS[key] = (list(self.cells), out)  # the cells held, so no id in a key is reused while it is here
        return out


def crossing(xs, acc, t):
    """n* at threshold t of rows of means acc (B x len(xs)) along xs: +inf where the largest x
    passes (n* >= it), -inf where none passes (n* < the smallest), else interpolated in log n in the
    bracket above the largest passing x (the module's rule)."""
    acc = np.atleast_2d(acc)
    k = len(xs)
    ok = acc >= t
    j = k - 1 - np.argmax(ok[:, ::-1], axis=1)
    jn = np.minimum(j + 1, k - 1)
    rows = np.arange(acc.shape[0])
    a0, a1 = acc[rows, j], acc[rows, jn]
    lx = np.log(xs)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(a0 > a1, (a0 - t) / (a0 - a1), 0.0)
    out = np.exp(lx[j] + frac * (lx[jn] - lx[j]))
    out[j == k - 1] = np.inf
    out[~ok.any(axis=1)] = -np.inf
    return out


def _weights(seed, n_seeds):
    """RESAMPLES rows of how often each of n_seeds seeds was drawn, from the generator seeded `seed`."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n_seeds, size=(RESAMPLES, n_seeds))
    flat = (idx + n_seeds * np.arange(RESAMPLES)[:, None]).ravel()
    return np.bincount(flat, minlength=RESAMPLES * n_seeds).reshape(RESAMPLES, n_seeds).astype(float)


def draws(n_seeds):
    """The bootstrap's weights: RESAMPLES rows of how often each of n_seeds seeds was drawn."""
    if n_seeds not in _DRAWS:
        _DRAWS[n_seeds] = _weights(RNG_SEED, n_seeds)
    return _DRAWS[n_seeds]


def draws_unpaired(n_seeds):
    """The second curve's weights in an unpaired ratio: draws from a second generator stream."""
    if n_seeds not in _DRAWS_B:
        _DRAWS_B[n_seeds] = _weights(RNG_SEED + 1, n_seeds)
    return _DRAWS_B[n_seeds]


def percentiles(v):
    """The 2.5th and 97.5th percentiles of v (sorted; the nearest ranks, so no interpolation across
    infinities)."""
    s = np.sort(v)
    n = len(s)
    return s[int(math.floor(CI[0] * n))], s[int(math.ceil(CI[1] * n)) - 1]


class Estimate:
    """n* at one threshold: value (inf: >= the largest n tried; -inf: below the smallest), lo and hi
    (None without per-seed rows), the tried range."""

    def __init__(self, value, lo, hi, smallest, largest):
        self.value, self.lo, self.hi = float(value), lo, hi
        self.smallest, self.largest = smallest, largest

    @property
    def finite(self):
        return math.isfinite(self.value)

    def resolved(self):
        """The interval's half-width is at most HALF_WIDTH of n* (False for a bound or no interval)."""
        return (self.finite and self.lo is not None and math.isfinite(self.lo) and math.isfinite(self.hi)
                and (self.hi - self.lo) / 2 <= HALF_WIDTH * self.value)

    def as_n(self):
        """n* for the old rule's uses: the value, the largest n tried for ">=", None below."""
        if self.value == np.inf:
            return self.largest
        return None if self.value == -np.inf else self.value


def _signature(c):
    """What a curve's estimates depend on: its cells (held by the memo, so their ids stay theirs), readings,
    n and point means."""
    return (tuple(id(x) for x in c.cells), tuple(tuple(map(tuple, at)) for at in c.shape), c.xs.tobytes(),
            c.point.tobytes(), c.seeds is None)


def _memo(key, curves, compute):
    got = _DONE.get(key)
    if got is None:
        got = _DONE[key] = (list(curves), [x for c in curves for x in c.cells], compute())
    return got[2]


def estimates(curve, thresholds=THRESHOLDS):
    """{t: Estimate} of a curve (memoised by its contents)."""
    return _memo(("est", _signature(curve), tuple(thresholds)), [curve], lambda: _estimates(curve, thresholds))


def _estimates(curve, thresholds):
    lo_x, hi_x = int(curve.xs[0]), int(curve.xs[-1])
    out = {}
    boot = None
    if curve.seeds is not None and len(curve.seeds):
        boot = curve.means(draws(len(curve.seeds)), curve.seeds)
    for t in thresholds:
        v = crossing(curve.xs, curve.point[None, :], t)[0]
        lo = hi = None
        if boot is not None:
            lo, hi = (float(x) for x in percentiles(crossing(curve.xs, boot, t)))
        out[t] = Estimate(v, lo, hi, lo_x, hi_x)
    return out


class Ratio:
    """n*_A / n*_B with a bootstrap interval (paired: the same draws for both); bound: '≥' (A's
    n* is a lower bound, or B's below its range), '≤' (the reverse), 'both≥' / 'both<' (both beyond
    the range tried, or both below it: no ratio is measured, and it counts as a tie), '' (both measured)."""

    def __init__(self, value, lo, hi, bound, paired):
        self.value, self.lo, self.hi, self.bound, self.paired = value, lo, hi, bound, paired

    def tie(self):
        """The interval contains 1 (no interval: the two point values are equal; both beyond the range
        tried, or both below it: a tie, as no ratio is measured)."""
        if self.bound.startswith("both"):
            return True
        if self.lo is None:
            return self.value == 1
        return self.lo <= 1 <= self.hi


def _clamp(v, c):
    """Censored n* at the ends of the tried range: >= largest -> largest, < smallest -> smallest."""
    v = np.where(v == np.inf, c.xs[-1], v)
    return np.where(v == -np.inf, c.xs[0], v)


def ratio(a, b, t=0.9, paired=True):
    """_ratio, memoised by the two curves' contents."""
    return _memo(("ratio", _signature(a), _signature(b), t, paired), [a, b], lambda: _ratio(a, b, t, paired))


def _ratio(a, b, t=0.9, paired=True):
    """n*_A / n*_B at threshold t of two curves: the point ratio and its bootstrap interval. Paired:
    the seed numbers of the union of both are drawn once and both curves recomputed from the same
    draws (the same episodes); unpaired: each curve from its own draws of its own seeds (a second
    generator stream for B). Censored values (beyond the tried range) count at the end of their
    range, and the ratio is marked as a bound."""
    va = crossing(a.xs, a.point[None, :], t)[0]
    vb = crossing(b.xs, b.point[None, :], t)[0]
    bound = ""
    if va == np.inf or vb == -np.inf:
        bound = "≥"
    if va == -np.inf or vb == np.inf:
        bound = "≤" if not bound else ("both≥" if va == np.inf else "both<")
    value = float(_clamp(np.array([va]), a)[0] / _clamp(np.array([vb]), b)[0])
    if a.seeds is None or b.seeds is None:
        return Ratio(value, None, None, bound, False)
    if paired:
        u = np.union1d(a.seeds, b.seeds)
        w = draws(len(u))
        ra = _clamp(crossing(a.xs, a.means(w, u), t), a)
        rb = _clamp(crossing(b.xs, b.means(w, u), t), b)
    else:
        ra = _clamp(crossing(a.xs, a.means(draws(len(a.seeds)), a.seeds), t), a)
        rb = _clamp(crossing(b.xs, b.means(draws_unpaired(len(b.seeds)), b.seeds), t), b)
    lo, hi = percentiles(ra / rb)
    return Ratio(value, float(lo), float(hi), bound, paired)


# ------------------------------------------------------------------ words

def fmt_n(v, smallest=None, largest=None):
    """An n* in the tables: '57', '5.3' (below 10), '≥4096', '<4'."""
    if v is None:
        return "–"
    if v == np.inf:
        return "≥%d" % largest
    if v == -np.inf:
        return "<%d" % smallest
    return ("%.1f" % v) if v < 9.95 else "%d" % round(v)


def fmt_est(e, interval=True):
    """'57 [52, 63]' (n* and its interval), '≥4096', '<4'; without per-seed rows just n*."""
    s = fmt_n(e.value, e.smallest, e.largest)
    if not interval or e.lo is None or not e.finite:
        return s
    return "%s [%s, %s]" % (s, fmt_n(e.lo, e.smallest, e.largest), fmt_n(e.hi, e.smallest, e.largest))


def csv_n(v):
    """n* in a CSV: '57.31', 'inf' (>= the largest tried), '-inf' (below the smallest), '' (none)."""
    if v is None:
        return ""
    if v == np.inf:
        return "inf"
    if v == -np.inf:
        return "-inf"
    return "%.2f" % v


def fmt_ratio(r):
    """'×1.56 [1.31, 1.84]', '≥×2.0 [...]', 'both ≥ the largest n tried'; 'tie' is the caller's (Ratio.tie)."""
    if r.bound == "both≥":
        return "both ≥ the largest n tried"
    if r.bound == "both<":
        return "both < the smallest n tried"
    s = "%s×%s" % (r.bound if r.bound in ("≥", "≤") else "", _num(r.value))
    if r.lo is not None:
        s += " [%s, %s]" % (_num(r.lo), _num(r.hi))
    return s


def _num(x):
    return ("%.2f" % x) if x < 10 else "%.0f" % x
