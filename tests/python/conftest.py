"""Puts the built oar package on sys.path: $OAR_PYTHON_PATH if set, else <repo>/build/python."""
import os
import sys

_path = os.environ.get("OAR_PYTHON_PATH") or os.path.join(os.path.dirname(__file__), "..", "..", "build", "python")
sys.path.insert(0, os.path.abspath(_path))
os.environ.setdefault("OAR_FALLBACK", "error")
