"""python -m oar.compat script.py [args...] | -m module [args...]: run a PyTorch program on oar.

Behaves like `python script.py args...` (or `python -m module args...`) with
compat mode on: the script is `__main__` and sees sys.argv == [script.py,
args...], sys.path[0] is its directory, its exit status is the process's,
and an uncaught exception prints the script's own traceback (without this
runner's frames) and exits with status 1.
"""
import builtins
import importlib.machinery
import io
import os
import runpy
import sys
import types

import oar.compat
from oar.compat import _missing

USAGE = """usage: python -m oar.compat script.py [args ...]
       python -m oar.compat -m module [args ...]

Runs a PyTorch program unchanged on oar: `import torch` gives oar (see docs/compat.md)."""

# Frames of this package and of runpy are hidden from the script's tracebacks.
_OWN_FILES = frozenset({os.path.abspath(runpy.__file__), runpy.__file__, "<frozen runpy>"})
_OWN_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _run_script(path):
    """Runs the file as `python path` would: a fresh __main__ module with an absolute __file__."""
    sys.argv[0] = path  # as typed, like the interpreter leaves it
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    main = types.ModuleType("__main__")
    main.__file__ = os.path.abspath(path)  # absolute since Python 3.9; spawn children re-import it from here
    main.__builtins__ = builtins
    main.__cached__ = None
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", main.__file__)
    # Replaced for good, as the interpreter's own __main__ would be: pickles of classes defined in the script
    # (DataLoader workers, torch.save) look them up here. __spec__ stays None, which tells multiprocessing's
    # spawn to re-import the script by path in its children.
    sys.modules["__main__"] = main
    with io.open_code(main.__file__) as f:
        source = f.read()
    code = compile(source, main.__file__, "exec", dont_inherit=True)
    exec(code, main.__dict__)


def _run_module(name):
    runpy.run_module(name, run_name="__main__", alter_sys=True)


def _is_own(frame_file):
    return frame_file in _OWN_FILES or frame_file.startswith(_OWN_DIR)


def _script_traceback(tb):
    """The traceback as `python script.py` would print it: from the script's first frame on.

    The last frame goes too when it is the missing-API hook raising: the script's line that used the API is
    the news, not the hook. Frames between stay (a failure inside oar must show where).
    """
    entries = []
    while tb is not None:
        if entries or not _is_own(tb.tb_frame.f_code.co_filename):
            entries.append(tb)
        tb = tb.tb_next
    if entries and entries[-1].tb_frame.f_code is _missing.hook_code():
        entries.pop()
    rebuilt = None
    for entry in reversed(entries):
        rebuilt = types.TracebackType(rebuilt, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return rebuilt


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] == "-m":
        if len(argv) < 2:
            print("python -m oar.compat: -m needs a module name\n" + USAGE, file=sys.stderr)
            return 2
        sys.argv = argv[1:]  # run_module puts the module's file in sys.argv[0], as `python -m` does
        run, target = _run_module, argv[1]
    else:
        if not os.path.isfile(argv[0]):
            print(f"{sys.executable}: can't open file {os.path.abspath(argv[0])!r}: [Errno 2] No such file or "
                  "directory", file=sys.stderr)
            return 2  # as the interpreter answers a missing script
        sys.argv = list(argv)
        run, target = _run_script, argv[0]
    oar.compat.enable()
    try:
        run(target)
    except (SystemExit, KeyboardInterrupt):
        raise  # the script's exit status; Ctrl-C exits as the interpreter does
    except BaseException as e:  # noqa: BLE001 - reported as the interpreter reports an uncaught exception
        # None (the error came before the script's first line ran, e.g. a SyntaxError) prints no frames, as
        # the interpreter does.
        tb = _script_traceback(e.__traceback__)
        if tb is None and run is _run_module and isinstance(e, ImportError):
            print(f"{sys.executable}: {e}", file=sys.stderr)  # runpy could not find it: as `python -m` says so
            return 1
        e = e.with_traceback(tb)  # the hook prints e's own traceback, not its argument
        sys.excepthook(type(e), e, e.__traceback__)
        return 1
    return 0


if __name__ == "__main__":
    _self = sys.modules[__name__]  # keeps this module alive once the script replaces __main__
    sys.exit(main(sys.argv[1:]))
