"""What the Python tests share: the memcap executable (MEMCAP_BINARY, set by ctest) and running it."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BINARY = os.environ.get("MEMCAP_BINARY", os.path.join(ROOT, "build", "memcap"))
EXAMPLES = os.path.join(ROOT, "examples")


def cli(*args, check=True):
    """Runs the memcap executable; returns the CompletedProcess (text)."""
    done = subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError("memcap %s: exit %d: %s" % (" ".join(map(str, args)), done.returncode, done.stderr))
    return done


def cli_error(*args):
    """The one-line message `memcap ARGS` refuses with (exit status 2), without its 'memcap: error: ' prefix."""
    done = cli(*args, check=False)
    assert done.returncode == 2, (args, done.returncode, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1, lines
    prefix = "memcap: error: "
    assert lines[0].startswith(prefix), lines[0]
    return lines[0][len(prefix):]


def python(code, **kwargs):
    """Runs `code` in a fresh interpreter (this one's executable and environment)."""
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kwargs)
