"""Puts the built oar package on sys.path: $TEST_OAR_PYTHONPATH if set, else <repo>/build/python."""
import os
import sys

_path = os.environ.get("TEST_OAR_PYTHONPATH") or os.path.join(os.path.dirname(__file__), "..", "..", "build", "python")
sys.path.insert(0, os.path.abspath(_path))
os.environ.setdefault("OAR_FALLBACK", "error")
