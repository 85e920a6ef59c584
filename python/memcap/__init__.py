"""memcap from Python: the benchmark's harness, its backends and its CSV as pandas DataFrames.

    import memcap
    df = memcap.run(memories=["softmax", "linear"], tasks=["assoc_recall"], n=[64, 256], seeds=5)
    df.groupby(["memory_spec", "n"]).accuracy_frac.mean()

Everything runs through the same C++ harness as the ``memcap`` command line
(module ``memcap._memcap``, built by CMake into ``build/python/memcap``): the
same cells, seeds, random streams, statistics and CSV. ``run`` returns exactly
the rows ``memcap run`` writes, parsed with the column types in ``CELL_DTYPES``;
``read_csv`` reads a file the command line wrote into the same frame.

Bad input raises ``memcap.UsageError`` (a ``ValueError``) with the command
line's one-line message. Ctrl-C during ``run`` or ``sweep`` stops cleanly: no
new cell starts, cells in flight finish, then ``KeyboardInterrupt``.

Backends: ``Memory`` builds any registered backend for direct use from numpy;
``register_memory`` adds one written in Python (a class with reset / write /
read / state) that then runs through the harness like the C++ ones;
``load_plugin`` loads a C++ backend built outside the tree.
"""

import io
import numbers
import os
import sys
import tempfile
import warnings

try:
    import numpy  # noqa: F401
    import pandas as pd
except ImportError as e:  # the usual cause: another interpreter than the one the module was built for
    raise ImportError("memcap needs numpy and pandas in this interpreter (%s): %s. The module is built for "
                      "Debian's /usr/bin/python3 with python3-numpy and python3-pandas; run that one "
                      "(see docs/python.md)" % (sys.executable, e)) from e

try:
    from . import _memcap
except ImportError:
    _here = os.path.dirname(os.path.abspath(__file__))
    if any(f.startswith("_memcap") for f in os.listdir(_here)):  # there, but not loadable: say why
        raise
    # the .py files without the compiled module (only the `memcap` target built), which Python
    # reports as a circular import
    raise ImportError("memcap's compiled module _memcap is not built in %s: build the target memcap_python "
                      "(cmake --build build --target memcap_python), or put a built memcap package first on "
                      "PYTHONPATH (`memcap run --python-backend`: MEMCAP_PYTHONPATH, and MEMCAP_PYTHON for its "
                      "interpreter; see docs/python.md)" % _here) from None
from ._memcap import FeatureMap, Memory, UsageError

__all__ = [
    "run", "sweep", "aggregate", "read_csv", "list", "Memory", "FeatureMap", "register_memory", "load_plugin",
    "UsageError", "op_memory", "CELL_DTYPES", "SUMMARY_DTYPES", "columns", "__version__",
]
__version__ = _memcap.__version__

# pandas dtypes of the CSV columns, by name; the column names and their order come from the
# C++ column tables (harness/results/csv.hpp). Counts that are empty on some rows (error
# rows, natural budgets, tasks without slots) are nullable integers; text columns keep
# empty fields as "".
_TEXT = "object"
CELL_DTYPES = {
    "memory": _TEXT, "memory_spec": _TEXT, "task_spec": _TEXT, "readout": _TEXT,
    "budget_floats": "Int64", "state_floats": "Int64", "state_bits": "Int64", "param_floats": "Int64",
    "d": "int64", "n": "int64", "seed": "int64", "slot": "Int64",
    "queries": "Int64", "correct": "Int64",
    "accuracy_frac": "float64", "chance_frac": "float64", "target_dist_mean": "float64",
    "target_cos_mean": "float64", "absent_queries": "Int64", "threshold": "float64",
    "false_accept_frac": "float64", "present_accept_frac": "float64", "balanced_accuracy_frac": "float64",
    "auc_frac": "float64",
    "tuned": _TEXT, "status": _TEXT, "message": _TEXT,
}
SUMMARY_DTYPES = {
    "memory": _TEXT, "memory_spec": _TEXT, "task_spec": _TEXT, "readout": _TEXT,
    "budget_floats": "Int64", "state_floats": "Int64", "state_bits": "Int64", "param_floats": "Int64", "d": "int64", "n": "int64", "slot": "Int64",
    "seeds": "int64", "errors": "int64", "queries": "int64",
    "accuracy_mean_frac": "float64", "accuracy_sd_frac": "float64", "accuracy_se_frac": "float64",
    "accuracy_ci95_lo_frac": "float64", "accuracy_ci95_hi_frac": "float64",
    "chance_frac": "float64", "target_dist_mean": "float64", "target_cos_mean": "float64",
    "threshold_mean": "float64", "false_accept_mean_frac": "float64", "false_accept_ci95_lo_frac": "float64",
    "false_accept_ci95_hi_frac": "float64", "present_accept_mean_frac": "float64",
    "balanced_accuracy_mean_frac": "float64", "balanced_accuracy_ci95_lo_frac": "float64",
    "balanced_accuracy_ci95_hi_frac": "float64", "auc_mean_frac": "float64", "auc_ci95_lo_frac": "float64",
    "auc_ci95_hi_frac": "float64", "tuned": _TEXT,
}


def columns(table="cells"):
    """The columns of the results CSV (table="cells") or of the summary ("summary"): (name, meaning) pairs."""
    if table == "cells":
        return _memcap.cell_columns()
    if table == "summary":
        return _memcap.summary_columns()
    raise UsageError("columns: table must be 'cells' or 'summary', not %r" % (table,))


def _check_dtypes(table, dtypes):
    names = [name for name, _ in columns(table)]
    missing = [c for c in names if c not in dtypes]
    extra = [c for c in dtypes if c not in names]
    if missing or extra:
        raise ImportError("memcap: the Python column types are out of step with the C++ column table "
                          "(no dtype for %s; unknown %s)" % (missing, extra))
    return {name: dtypes[name] for name in names}


CELL_DTYPES = _check_dtypes("cells", CELL_DTYPES)
SUMMARY_DTYPES = _check_dtypes("summary", SUMMARY_DTYPES)


def _parse(source, dtypes):
    text_columns = [c for c, t in dtypes.items() if t == _TEXT]
    frame = pd.read_csv(source, dtype=dtypes, keep_default_na=False,
                        na_values={c: [""] for c in dtypes if c not in text_columns})
    if [*frame.columns] != [*dtypes]:
        raise UsageError("not a memcap CSV: columns %s, expected %s" % ([*frame.columns], [*dtypes]))
    return frame


def read_csv(path):
    """A results CSV written by ``memcap run`` or ``memcap sweep``, as ``run`` returns it."""
    return _parse(path, CELL_DTYPES)


def read_summary_csv(path):
    """A summary CSV written by ``memcap aggregate``, as ``aggregate`` returns it."""
    return _parse(path, SUMMARY_DTYPES)


def list():  # noqa: A001 - the command's name
    """Every backend, task and readout, with parameters: {"memories": [...], "tasks": [...], "readouts": [...]}.

    Each entry is a dict (name, description, params: {key: "key=default (type, range)"}, ...),
    what ``memcap list`` prints.
    """
    return _memcap.list_entries()


def _integer(value, name):
    """A Python int from an int or a numpy integer; anything else is passed on for the command
    line's parser to judge (and name) as it would the same text."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    return value if isinstance(value, str) else str(value)


def _values(value, name):
    """One value or several (a list, tuple, range, numpy array, Series) as a list for the
    command line's parsers: numpy integers become ints; strings pass as they are (e.g. a
    range "4..512*2")."""
    if value is None or isinstance(value, (str, numbers.Number)):
        return [_integer(value, name)]
    try:
        items = [*value]
    except TypeError:
        raise UsageError("%s: give a value or a list of values, not %s" % (name, type(value).__name__)) from None
    return [_integer(v, name) for v in items]


def run(memories, tasks, n, budgets=None, seeds=10, d=64, readout="auto", tuning_seeds=3, threads=None,
        progress=True, on_tuning_seeds=False, budget_bits=None):
    """Every combination of memories x tasks x budgets x n x seeds 0..seeds-1, as a DataFrame.

    The same grid, the same cells and the same rows as
    ``memcap run -m MEM... -t TASK... --budget B... --n N... --seeds S --d D --readout R``:
    ``memories`` and ``tasks`` are spec strings (a string or a list), ``budgets`` floats of
    state or ``"natural"``/``None`` (the default: each backend's natural size at d), ``n``
    task sizes, ``d`` an int or ``"best"``/``"best:LIST"`` (which also races every real setting with
    candidates a memory spec leaves out: ``"delta"`` as ``"delta:beta=best"``); ``on_tuning_seeds=True`` scores on the
    tuning seeds (``--on-tuning-seeds``); ``budget_bits`` gives the budgets in bits instead
    (``--budget-bits``: multiples of 32; memories without ``precision=`` then race it). The grid is built by the command line's builder: the
    same ranges (``n="4..512*2"``, ``budgets="256..16384*4"``), the same refusal of a value
    given twice, the same messages (naming these arguments). ``threads`` defaults to all
    cores. ``progress``: True shows the command line's bar on stderr; a callable
    ``progress(done, total)`` is called from this thread as cells finish (e.g. to drive a
    notebook widget); False shows nothing.
    """
    return _parse(io.StringIO(_run_text(memories, tasks, n, budgets, seeds, d, readout, tuning_seeds, threads,
                                        progress, on_tuning_seeds, budget_bits)), CELL_DTYPES)


def _run_text(memories, tasks, n, budgets, seeds, d, readout, tuning_seeds, threads, progress, on_tuning_seeds,
              budget_bits=None):
    """The CSV text of ``run`` (what ``memcap run`` writes, byte for byte)."""
    callback = progress if callable(progress) else None
    if not isinstance(seeds, (str, numbers.Number)):
        raise UsageError("seeds: a count S (seeds 0..S-1 are run), e.g. seeds=10; got %r" % (seeds,))
    seeds = _integer(seeds, "seeds")
    n = _values(n, "n")
    budgets = (["natural"] if budget_bits is None else []) if budgets is None else _values(budgets, "budgets")
    budget_bits = [] if budget_bits is None else _values(budget_bits, "budget_bits")
    d = _integer(d, "d")
    tuning_seeds = _integer(tuning_seeds, "tuning_seeds")
    if threads is not None:
        threads = _integer(threads, "threads")
    return _memcap.run_csv(memories, tasks, budgets, n, seeds, d,
                           str(readout), tuning_seeds, bool(on_tuning_seeds), threads, bool(progress), callback, budget_bits)


def sweep(config, out=".", threads=None, resume=False, dry_run=False, progress=True, force=False):
    """Runs the sweep a config file describes, as ``memcap sweep CONFIG --out OUT``.

    Writes OUT/NAME.csv (with its manifest; journaled while it runs, resumable with
    ``resume=True``) and returns it as a DataFrame. An existing sweep in OUT is refused unless
    ``resume=True`` (finish it) or ``force=True`` (start afresh); ``dry_run=True`` prints the cells and an
    estimate and returns None. Ctrl-C stops as the command line does (cells in flight are
    journaled; a second Ctrl-C ends the process at once) and raises KeyboardInterrupt.
    """
    config, out = os.fspath(config), os.fspath(out)
    command = "memcap.sweep(%r, out=%r%s)" % (config, out, ", resume=True" if resume else "")
    if threads is not None:
        threads = _integer(threads, "threads")
    try:
        status = _memcap.sweep(config, out, threads, bool(resume), bool(force), bool(dry_run), bool(progress), command)
    except UsageError as e:
        raise UsageError(_sweep_arguments(str(e))) from None
    if status in (130, 143):
        raise KeyboardInterrupt("memcap.sweep stopped; continue with memcap.sweep(%r, out=%r, resume=True)"
                                % (config, out))
    if status != 0:
        raise RuntimeError("memcap.sweep: exit status %d" % status)
    if dry_run:
        return None
    name = os.path.splitext(os.path.basename(config))[0]
    return read_csv(os.path.join(out, name + ".csv"))


# The command line's flags as memcap.sweep's arguments, for the messages the two share.
_SWEEP_FLAGS = [("pass --resume", "pass resume=True"), ("--resume", "resume=True"), ("--force", "force=True"),
                ("--out", "out"), ("--threads", "threads"), ("--dry-run", "dry_run=True")]


def _sweep_arguments(message):
    """A sweep's message with each command-line flag it names replaced by memcap.sweep's argument."""
    for flag, argument in _SWEEP_FLAGS:
        message = message.replace(flag, argument)
    return message


def aggregate(results):
    """Mean accuracy over seeds with its sd, standard error and 95% interval, per (memory, task, readout, budget, d, n, slot).

    ``results``: a DataFrame as ``run`` returns it, or the path of a results CSV. The
    summary is ``memcap aggregate``'s (harness/results/stats.hpp), as a DataFrame. Each
    (cell, seed) counts once: rows repeated exactly (results joined that overlap) are counted
    once with a ``UserWarning`` saying how many; rows of one cell and seed that differ are a
    ``UsageError``.
    """
    if isinstance(results, (str, os.PathLike)):
        return _parse(io.StringIO(_memcap.aggregate_csv(os.fspath(results))), SUMMARY_DTYPES)
    if not isinstance(results, pd.DataFrame):
        raise UsageError("aggregate: give a DataFrame from memcap.run or the path of a results CSV")
    missing = [c for c in CELL_DTYPES if c not in results.columns]
    if missing:
        raise UsageError("aggregate: the DataFrame is not memcap results (no column %s; expected the columns "
                         "memcap.run returns)" % ", ".join(repr(c) for c in missing[:3]))
    with tempfile.TemporaryDirectory(prefix="memcap-") as tmp:
        path = os.path.join(tmp, "results.csv")
        results[[*CELL_DTYPES]].to_csv(path, index=False)
        def named(text):  # the DataFrame, not the temporary file it went through
            return text.replace("input '%s'" % path, "the DataFrame").replace(path, "the DataFrame")
        try:
            with warnings.catch_warnings(record=True) as notes:
                warnings.simplefilter("always")
                csv = _memcap.aggregate_csv(path)
        except UsageError as e:
            raise UsageError(named(str(e))) from None
        for n in notes:  # rows repeated exactly, counted once
            warnings.warn(named(str(n.message)), n.category, stacklevel=2)
        return _parse(io.StringIO(csv), SUMMARY_DTYPES)


def register_memory(name, cls, params=None, state_floats=None, min_budget=None, param_floats=0,
                    floats_per_write=0, description="", state_formula="", paper="", native_read=True,
                    order_free=False, candidates=None, op_options=None):
    """Adds a backend written in Python; it then runs through ``run`` and ``sweep`` like the C++ ones.

    ``cls(d_key=, d_value=, budget=, seed=, **params)`` builds one memory (``budget`` is None at
    the natural size; ``seed`` is drawn from memcap's stream for (spec, d, budget, seed): use it
    for the backend's own random parameters). The instance provides

        reset()             forget everything written
        write(K, V)         store the rows of K (n x d_key) and V (n x d_value), in order
        read(Q)             an (n x d_value) array: one read per row of Q
        state()             the state, a float array of state_floats floats (any shape)

    Arrays passed in are float32, C-contiguous, and the backend's to keep.

    ``params``: {key: default}: a float (real parameter), an int (integer parameter) or a
    list of strings (a choice, the first the default); spec strings then set them
    (``"mybackend:beta=0.5"``). ``state_floats``: an int, or ``f(d_key, d_value, budget,
    **params)`` giving the floats of state at that size (required; the harness checks it
    against the budget). ``min_budget``: the same form; default: the state at the natural
    size (a backend that ignores the budget is refused below what it holds).
    ``param_floats``: floats of fixed parameters (not state), same form, default 0.
    ``floats_per_write``: 0 when the state has its full size from the start (a grid);
    otherwise it grows by this many floats per write up to ``state_floats`` (a cache; -1
    there for no bound). The harness checks the built memory against these numbers.
    ``candidates``: {key: [values...]}: the values a spec's ``key=best`` races on tuning seeds,
    as the built-ins' candidates are raced (``"mybackend:rho=best"``; in order of preference on
    ties); the row's ``memory_spec`` then carries the value chosen and ``tuned`` names it.
    ``native_read=False`` makes ``readout="auto"`` score it through the probe;
    ``order_free=True`` declares that its writes commute (the paired-permutation control).

    ``cls`` may instead be an op with flash-linear-attention's signature (a function, not a class:
    ``op(q, k, v, g, beta, initial_state) -> (o, final_state)`` on numpy arrays or torch tensors);
    ``op_memory(op, **op_options)`` then makes the class, and ``state_floats`` defaults to
    d_key x d_value (the op's state, one head).

    Calls into the instance hold the GIL: Python backends compute one call at a time, while
    C++ cells of the same run still use every thread. Refused with ``UsageError``: a name
    already taken or not a spec name, a bad parameter.
    """
    if not isinstance(cls, type) and callable(cls):  # an op with fla's signature
        cls = op_memory(cls, **(op_options or {}))
        if state_floats is None:
            state_floats = lambda d_key, d_value, budget, **_: d_key * d_value  # noqa: E731
    _memcap.register_memory(name, cls, dict(params or {}), state_floats, min_budget, param_floats,
                            floats_per_write, description, state_formula, paper, bool(native_read),
                            bool(order_free), dict(candidates or {}))


_OP_ARGUMENTS = ("q", "k", "v", "g", "beta", "initial_state", "output_final_state")


def op_memory(op, tensors="auto", beta=1.0, layout="seq", q_scale=1.0, state_shape=None):
    """A backend class (for ``register_memory``) made from a causal op with flash-linear-attention's
    signature: ``op(q, k, v, g, beta, initial_state, output_final_state=True) -> (o, final_state)``,
    q and k of shape (B, T, H, K), v (B, T, H, V), g (the log decay) and beta (B, T, H), the state
    (B, H, K, V), o (B, T, H, V) read from the state after the write at t (fla's seq-first layout and
    convention; ``layout="head"``: (B, H, T, K), (B, H, T) for g and beta, the head-first layout of
    fla's naive recurrences). The op is called with the arguments its signature names among those
    (fla's naive recurrences name different subsets: the delta rule has no g), one batch and one head.

    write(K, V) runs the op over the pairs from the state held (g = 0: no decay; beta = ``beta``) and
    keeps its final state; read(Q) runs it with k = 0, v = 0 and beta = 0 — a write of nothing, for a
    linear or delta-rule update — and returns o. ``tensors``: "numpy", "torch" or "auto" (torch when
    it imports). ``q_scale``: queries are multiplied by it before the op (a float, or "sqrt_k" for
    sqrt(K): fla's naive ops scale q by K^-0.5, and "sqrt_k" undoes it, so reads are the state's as
    memcap's grids read it). ``state_shape(d_key, d_value)``: the state's (K, V) per head when it is not
    (d_key, d_value) (an mLSTM keeps its normaliser beside the matrix: (d_key, d_value + 1)); give
    ``state_floats`` to match. Refused with ``UsageError``: a signature without q, k, v and
    initial_state, an unknown tensors or layout."""
    import inspect

    import numpy as np

    names = set(inspect.signature(op).parameters)
    missing = [a for a in ("q", "k", "v", "initial_state") if a not in names]
    if missing:
        raise UsageError("op %s: its signature lacks %s (fla's op signature: q, k, v, g, beta, initial_state)" %
                         (getattr(op, "__name__", op), ", ".join(missing)))
    if tensors == "auto":
        try:
            import torch  # noqa: F401
            tensors = "torch"
        except ImportError:
            tensors = "numpy"
    if tensors not in ("numpy", "torch"):
        raise UsageError("op_memory: tensors must be numpy, torch or auto, got '%s'" % tensors)
    if layout not in ("seq", "head"):
        raise UsageError("op_memory: layout must be seq (B, T, H, D) or head (B, H, T, D), got '%s'" % layout)
    if not (q_scale == "sqrt_k" or isinstance(q_scale, numbers.Real)):
        raise UsageError("op_memory: q_scale must be a number or sqrt_k, got %r" % (q_scale,))
    seq = layout == "seq"
    rows = (lambda a: a[None, :, None, :]) if seq else (lambda a: a[None, None, :, :])  # noqa: E731
    gates = (lambda a: a[None, :, None]) if seq else (lambda a: a[None, None, :])  # noqa: E731
    unrows = (lambda a: a[0, :, 0, :]) if seq else (lambda a: a[0, 0, :, :])  # noqa: E731
    if tensors == "torch":
        import torch
        to = lambda a: torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))  # noqa: E731
        back = lambda t: t.detach().cpu().numpy().astype(np.float32, copy=False)  # noqa: E731
    else:
        to = lambda a: np.ascontiguousarray(a, dtype=np.float32)  # noqa: E731
        back = lambda a: np.asarray(a, dtype=np.float32)  # noqa: E731

    class OpMemory:
        def __init__(self, d_key, d_value, budget, seed, **params):
            shape = tuple(state_shape(d_key, d_value)) if state_shape else (d_key, d_value)
            self.params, self.S, self.d_value = params, np.zeros((1, 1) + shape, np.float32), d_value

        def reset(self):
            self.S[:] = 0

        def _call(self, Q, K, V, b):
            T = len(Q)
            qs = np.float32(np.sqrt(K.shape[1]) if q_scale == "sqrt_k" else q_scale)
            args = dict(q=to(rows(Q * qs if qs != 1 else Q)), k=to(rows(K)), v=to(rows(V)), g=to(gates(np.zeros(T))),
                        beta=to(gates(np.full(T, b))), initial_state=to(self.S), output_final_state=True)
            got = op(**{a: x for a, x in args.items() if a in names}, **self.params)
            if not (isinstance(got, (tuple, list)) and len(got) == 2):
                raise ValueError("op %s returned %s, not (o, final_state)" % (getattr(op, "__name__", op), type(got).__name__))
            return unrows(back(got[0])), back(got[1]).reshape(self.S.shape)

        def write(self, K, V):
            _, self.S = self._call(K, K, V, beta)

        def read(self, Q):
            o, _ = self._call(Q, np.zeros_like(Q), np.zeros((len(Q), self.d_value), np.float32), 0.0)
            return o

        def state(self):
            return self.S

    OpMemory.__name__ = "OpMemory_" + getattr(op, "__name__", "op")
    return OpMemory


def load_plugin(path):
    """Loads a C++ plugin (a shared library built against an installed memcap; see the README's
    "Out-of-tree backend"), whose backends then run like the built-in ones."""
    _memcap.load_plugin(os.fspath(path))
