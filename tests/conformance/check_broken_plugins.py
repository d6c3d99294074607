#!/usr/bin/env python3
"""Runs oar-conformance on each deliberately broken plugin (broken/) and
checks that the run finishes, fails, and its reports name the defect: the
right cases with the right status and reason, while the cases around them
still pass.

Bad invocations are usage errors (exit 2) that name the problem.

usage: check_broken_plugins.py OAR_CONFORMANCE BROKEN_PLUGIN_DIR OUT_DIR [GARBAGE_PLUGIN]
"""
import json
import os
import subprocess
import sys
import time

FILTER = "abi,ops/add/f32-f32,ops/sub/f32-f32,ops/mul/f32-f32,ops/exp/f32"

# fixture -> [(case id glob prefix, status, text in the reason)], and a case that must still pass
EXPECT = {
    "broken_kernel": ([("ops/add/f32-f32/gen", "FAIL", "elements differ")], "ops/sub/f32-f32/gen"),
    "broken_copy": ([("abi/memory/odd_copies", "FAIL", "byte"), ("abi/tensors/round_trip", "FAIL", "came back")],
                    "abi/versions"),
    "broken_sync": ([("abi/memory/sync_copy_after_queued_work", "FAIL", "before the memory_set"),
                     ("abi/memory/memset", "FAIL", "byte")], "abi/memory/odd_copies"),
    "broken_segv": ([("ops/mul/f32-f32/gen", "CRASH", "SIGSEGV")], "ops/sub/f32-f32/gen"),
    "broken_hang": ([("ops/sub/f32-f32/gen", "TIMEOUT", "budget")], "ops/sub/f32-f32/broadcast"),
}


def bad_input(exe, out_dir, garbage):
    """Each bad invocation exits 2 and its message names what is wrong."""
    bad_list = os.path.join(out_dir, "bad_expectations.txt")
    with open(bad_list, "w") as f:
        f.write("*  ops/*  perhaps  no such action\n")
    cases = [
        (["--device", "nosuchdevice"], "nosuchdevice"),
        (["--plugin", "/nonexistent/liboar_plugin_x.so"], "no such file"),
        (["--device", "cpu", "--filter", "nomatch/at/all"], "no case matches"),
        (["--device", "cpu", "--level", "bogus"], "usage"),
        (["--device", "cpu", "--plugin", "x.so"], "exactly one"),
        (["--device", "cpu", "--expectations", bad_list], bad_list + ":1"),
        (["--device", "cpu", "--timeout", "-3"], "usage"),
    ]
    if garbage:
        cases.append((["--plugin", garbage], "not loaded"))
    problems = []
    for args, text in cases:
        proc = subprocess.run([exe] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        ok = proc.returncode == 2 and text in proc.stdout
        print("%s %s -> exit %d: %s" % ("ok  " if ok else "FAIL", " ".join(args), proc.returncode,
                                        proc.stdout.strip().splitlines()[0] if proc.stdout.strip() else ""))
        if not ok:
            problems.append("%s: exit %d, expected 2 with '%s': %s" % (" ".join(args), proc.returncode, text,
                                                                        proc.stdout[-300:]))
    return problems


def main():
    exe, plugin_dir, out_dir = sys.argv[1:4]
    garbage = sys.argv[4] if len(sys.argv) > 4 else None
    os.makedirs(out_dir, exist_ok=True)
    problems = bad_input(exe, out_dir, garbage)
    for name, (defects, healthy) in EXPECT.items():
        plugin = os.path.join(plugin_dir, name, "liboar_plugin_%s.so" % name)
        report = os.path.join(out_dir, name + ".json")
        markdown = os.path.join(out_dir, name + ".md")
        start = time.time()
        proc = subprocess.run([exe, "--plugin", plugin, "--filter", FILTER, "--timeout", "4", "--expectations", "none",
                               "--json", report, "--markdown", markdown, "--quiet"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        print("%s: exit %d in %.1f s: %s" % (name, proc.returncode, time.time() - start, proc.stdout.strip()[-300:]))
        if proc.returncode != 1:
            problems.append("%s: exit status %d, expected 1 (a failing run)" % (name, proc.returncode))
            continue
        with open(report) as f:
            data = json.load(f)
        with open(markdown) as f:
            md = f.read()
        if data["fatal"]:
            problems.append("%s: the run stopped early: %s" % (name, data["fatal"]))
        cases = {c["id"]: c for c in data["cases"]}
        for case_id, status, text in defects:
            c = cases.get(case_id)
            if c is None:
                problems.append("%s: no case %s in the report" % (name, case_id))
            elif c["status"] != status or text not in c.get("reason", ""):
                problems.append("%s: %s is %s (%s), expected %s with '%s'" %
                                (name, case_id, c["status"], c.get("reason", ""), status, text))
            elif case_id not in md or "repro" not in c:
                problems.append("%s: the Markdown report or the repro command misses %s" % (name, case_id))
            else:
                print("  named: %s %s: %s" % (case_id, status, c["reason"][:150]))
        h = cases.get(healthy)
        if h is None or h["status"] != "PASS":
            problems.append("%s: the healthy case %s did not pass: %s" % (name, healthy, h))
        unfinished = [c["id"] for c in data["cases"] if c["status"] == "SKIP" and not c.get("reason")]
        if unfinished:
            problems.append("%s: cases never ran: %s" % (name, unfinished[:5]))
    if problems:
        print("\n".join(["FAILED:"] + problems))
        return 1
    print("every defect was named and every run finished")
    return 0


if __name__ == "__main__":
    sys.exit(main())
