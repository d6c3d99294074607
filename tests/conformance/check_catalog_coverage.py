#!/usr/bin/env python3
"""Every (op, dtype signature) a device registers is covered by generated op
cases, with no test code per op: compares `oar-info --json`'s kernel table of
each device type with `oar-conformance --device T --list`.

usage: check_catalog_coverage.py OAR_INFO OAR_CONFORMANCE DEVICE...
"""
import json
import subprocess
import sys


def main():
    info_exe, conf_exe, devices = sys.argv[1], sys.argv[2], sys.argv[3:]
    info = json.loads(subprocess.run([info_exe, "--json"], check=True, capture_output=True, text=True).stdout)
    problems = []
    for device in devices:
        plugin = next((p for p in info["plugins"] if p["device_type"] == device and p["device_count"] > 0), None)
        if plugin is None:
            problems.append("no %s device loaded" % device)
            continue
        listed = subprocess.run([conf_exe, "--device", device, "--list", "--filter", "ops"], check=True,
                                capture_output=True, text=True).stdout.split()
        covered = set()
        for case in listed:
            parts = case.split("/")  # ops/<op>/<signature>/<example>
            if len(parts) >= 4:
                covered.add((parts[1], parts[2]))
        n = 0
        for k in plugin["kernels"]:
            for sig in k["signatures"]:
                if not sig:
                    continue  # creation ops: one case per dtype instead of per signature
                n += 1
                if (k["op"], "-".join(sig)) not in covered:
                    problems.append("%s: %s%s has a kernel but no generated case" % (device, k["op"], sig))
        print("%s: %d registered (op, signature) pairs, %d generated op cases" % (device, n, len(listed)))
    if problems:
        print("\n".join(["FAILED:"] + problems[:50]))
        return 1
    print("every registered (op, signature) has generated cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
