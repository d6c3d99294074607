"""``python -m oar.info [--json]``: prints what ``oar-info`` prints (the
core's report, oar/info_report.h): loaded and skipped plugins with reasons,
devices, kernel coverage and flags.

``oar.info()`` stays the function returning that report as a dict, also
after ``import oar.info``: this module is callable.
"""
import sys
import types

from . import _C


USAGE = "usage: python -m oar.info [--json]"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv in ([], ["--json"]):
        sys.stdout.write(_C.info_report(json=bool(argv)))
        return 0
    if argv in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    print(USAGE, file=sys.stderr)
    return 2


class _CallableModule(types.ModuleType):
    def __call__(self):
        return _C.info()


sys.modules[__name__].__class__ = _CallableModule

if __name__ == "__main__":
    sys.exit(main())
