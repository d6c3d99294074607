"""Carries compat mode into multiprocessing children started by spawn or forkserver.

A forked child (DataLoader's default) inherits the import hook with the rest
of the parent's memory. A spawned one is a fresh interpreter: before it
unpickles its work (a DataLoader worker's dataset, say) it re-imports the
parent's main script, whose `import torch` must already give oar. There is no
hook into the child before that import, but multiprocessing hands the child
the parent's sys.path first; so while compat mode is on, sys.path holds a
directory whose only entry is a stand-in `torch` package that turns compat
mode on in the child and hands over oar (see _child_path/torch/__init__.py).
No environment variable is involved, so other subprocesses are untouched.
The parent never imports the stand-in: its own meta-path hook answers first.
"""
import os
import sys

CHILD_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_child_path")


def add():
    if CHILD_PATH not in sys.path:
        # After sys.path[0] (the script's directory, as `python script.py` has it) but ahead of any site
        # directory a real PyTorch may live in.
        sys.path.insert(1 if sys.path else 0, CHILD_PATH)


def remove():
    while CHILD_PATH in sys.path:
        sys.path.remove(CHILD_PATH)


def is_stand_in(module):
    return getattr(module, "__oar_compat_stand_in__", False) is True
