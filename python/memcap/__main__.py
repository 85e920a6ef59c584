"""``memcap run`` with backends written in Python:

    python3 -m memcap run --python-backend FILE.py:NAME [...] -m NAME -m softmax -t assoc_recall --n 4 16 ...
    build/memcap run --python-backend FILE.py:NAME ...      (the same: the command line hands itself over)

FILE.py is imported and its ``register(name)`` called with NAME (examples/python_backend/linear_numpy.py
has one), so NAME is a backend like the built-ins; then the grid runs through ``memcap.run`` — the
command line's builder, cells, seeds and CSV — and the rows go to --out (written whole or not at all;
an existing file needs --force) or to standard output. The flags are ``memcap run``'s.
Exit status: 0 written; 2 bad input (one line on stderr; no file written).
"""
import argparse
import importlib.util
import os
import sys

import memcap


class _Refusal(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _Refusal(message)


def _parser():
    p = _Parser(prog="memcap run", description=__doc__.split("\n\n")[0], add_help=True)
    p.add_argument("--python-backend", action="append", default=[], metavar="FILE.py:NAME", required=True)
    p.add_argument("-m", "--memory", action="extend", nargs="+", default=[])
    p.add_argument("-t", "--task", action="extend", nargs="+", default=[])
    p.add_argument("--n", action="extend", nargs="+", default=[])
    p.add_argument("-b", "--budget", action="extend", nargs="+", default=[])
    p.add_argument("-s", "--seeds", default="10")
    p.add_argument("--d", default="64")
    p.add_argument("--tuning-seeds", default="3")
    p.add_argument("--readout", default="auto")
    p.add_argument("--threads", default=None)
    p.add_argument("--on-tuning-seeds", action="store_true")
    p.add_argument("--budget-bits", nargs="+", action="extend", default=None)
    p.add_argument("-o", "--out", default=None)
    p.add_argument("--force", action="store_true")
    p.add_argument("-q", "--quiet", action="store_true")
    return p


def load_backend(text):
    """Imports FILE.py of FILE.py:NAME and calls its register(NAME); returns NAME."""
    path, sep, name = text.rpartition(":")
    if not sep or not path.endswith(".py") or not name:
        raise _Refusal("--python-backend '%s': give FILE.py:NAME (a file whose register(name) registers the backend)" % text)
    if not os.path.isfile(path):
        raise _Refusal("--python-backend '%s': no file '%s'" % (text, path))
    spec = importlib.util.spec_from_file_location("memcap_backend_" + name, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)  # its `if __name__ == "__main__":` block does not run
    if not callable(getattr(module, "register", None)):
        raise _Refusal("--python-backend '%s': '%s' defines no register(name) (see examples/python_backend/linear_numpy.py)"
                       % (text, path))
    module.register(name)
    return name


def run(argv):
    a = _parser().parse_args(argv)
    for b in a.python_backend:
        load_backend(b)
    if a.out and os.path.exists(a.out) and not a.force:
        raise _Refusal("--out '%s' exists; pass --force to replace it" % a.out)
    if a.out and not os.path.isdir(os.path.dirname(os.path.abspath(a.out))):
        raise _Refusal("--out '%s': directory '%s' does not exist" % (a.out, os.path.dirname(a.out) or "."))
    d = a.d if not a.d.isdigit() else int(a.d)
    budgets = a.budget or (None if a.budget_bits else ["natural"])
    text = memcap._run_text(a.memory, a.task, a.n, budgets, a.seeds, d, a.readout, a.tuning_seeds,
                            a.threads, not a.quiet, a.on_tuning_seeds, a.budget_bits)  # memcap run's CSV, byte for byte
    if a.out is None:
        sys.stdout.write(text)
        return 0
    tmp = "%s.tmp.%d" % (a.out, os.getpid())
    try:
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, a.out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return 0


def main(argv):
    if not argv or argv[0] != "run":
        sys.stderr.write("usage: python3 -m memcap run --python-backend FILE.py:NAME [memcap run's options]\n")
        return 2
    try:
        return run(argv[1:])
    except (_Refusal, memcap.UsageError) as e:
        sys.stderr.write("memcap: error: %s\n" % e)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
