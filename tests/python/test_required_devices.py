"""The device types named in TEST_OAR_REQUIRE_DEVICES must be loaded: a plugin that failed to
load would otherwise make every device-parametrised suite a quieter run on fewer devices (the
C++ suites check the same in tests/support/test_util.h)."""
import os

import oar


def test_required_device_types_are_loaded():
    required = [t for t in os.environ.get("TEST_OAR_REQUIRE_DEVICES", "").split(",") if t]
    present = {d.split(":")[0] for d in oar._C.info()["devices"]}
    missing = [t for t in required if t not in present]
    assert not missing, f"required device types {missing} are not loaded (present: {sorted(present)})"
