#!/usr/bin/env python3
"""The vendor's path, end to end, with no path into oar's source tree:
install oar into a fresh prefix, copy plugins/template somewhere else, build
it against the installed package (find_package(oar)), point OAR_PLUGIN_PATH
at it and run the installed oar-conformance. The suite must pass, every
generated f32 op test among it, and the template's vendor code must stay
within 600 lines (printed).

usage: check_out_of_tree.py BUILD_DIR SOURCE_DIR WORK_DIR
"""
import glob
import json
import os
import shutil
import subprocess
import sys

MAX_VENDOR_LINES = 600


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def main():
    build, source, work = (os.path.abspath(p) for p in sys.argv[1:4])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prefix, plugin_src, plugin_build = (os.path.join(work, d) for d in ("prefix", "my_device", "my_device_build"))

    files = sorted(glob.glob(os.path.join(source, "plugins/template/src/*.cpp")) +
                   glob.glob(os.path.join(source, "plugins/template/src/*.h")))
    lines = sum(sum(1 for _ in open(f)) for f in files)
    print("template vendor code: %d lines in %d files (limit %d): %s" %
          (lines, len(files), MAX_VENDOR_LINES, ", ".join(os.path.relpath(f, source) for f in files)))
    if lines > MAX_VENDOR_LINES:
        print("FAILED: the template needs more than %d lines" % MAX_VENDOR_LINES)
        return 1

    run(["cmake", "--install", build, "--prefix", prefix], stdout=subprocess.DEVNULL)
    shutil.copytree(os.path.join(prefix, "share/oar/template"), plugin_src)
    env = dict(os.environ)
    for var in ("OAR_PLUGIN_PATH", "CMAKE_PREFIX_PATH", "LD_LIBRARY_PATH"):
        env.pop(var, None)
    run(["cmake", "-S", plugin_src, "-B", plugin_build, "-G", "Ninja", "-DCMAKE_PREFIX_PATH=" + prefix],
        env=env, stdout=subprocess.DEVNULL)
    run(["cmake", "--build", plugin_build], env=env, stdout=subprocess.DEVNULL)
    # Nothing the plugin was built from may come from the source tree.
    source_dirs = [os.path.join(source, d) + "/" for d in ("runtime", "kernel_primitives", "plugins", "frontend")]
    for name in ("CMakeCache.txt", "build.ninja"):
        with open(os.path.join(plugin_build, name)) as f:
            text = f.read()
        for d in source_dirs:
            if d in text:
                print("FAILED: %s refers to the source tree (%s)" % (name, d))
                return 1

    env["OAR_PLUGIN_PATH"] = plugin_build
    report = os.path.join(work, "template.json")
    proc = subprocess.run([os.path.join(prefix, "bin/oar-conformance"), "--device", "template", "--json", report,
                           "--quiet"], env=env)
    with open(report) as f:
        data = json.load(f)
    info = dict(data["info"])
    print("installed suite on %s (%s): %s" % (info.get("device"), info.get("plugin path"), data["summary"]))
    if not info.get("plugin path", "").startswith(plugin_build):
        print("FAILED: the template tested is not the one built out of tree")
        return 1
    f32 = [c for c in data["cases"] if c["id"].startswith("ops/") and c.get("dtype") == "f32"]
    bad = [c for c in f32 if c["status"] != "PASS"]
    print("generated f32 op tests: %d, passed %d" % (len(f32), len(f32) - len(bad)))
    for c in bad[:20]:
        print("  %s %s: %s" % (c["id"], c["status"], c.get("reason", "")))
    if proc.returncode != 0 or bad or not f32:
        print("FAILED: oar-conformance exit %d" % proc.returncode)
        return 1
    print("the out-of-tree template passes the installed conformance suite")
    return 0


if __name__ == "__main__":
    sys.exit(main())
