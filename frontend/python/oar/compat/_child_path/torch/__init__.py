"""The `torch` a spawned multiprocessing child of a compat-mode process imports first.

Only on sys.path while compat mode is on (see oar/compat/_children.py): it
turns compat mode on in this interpreter, which replaces this module in
sys.modules with oar, so the `import torch` that found this file gets oar.
"""
__oar_compat_stand_in__ = True

import oar.compat  # noqa: E402

oar.compat.enable()
