"""The main job, shortened for CI: the digits CNN reaches >= 97% held-out
accuracy and its checkpoint reloads to the same predictions."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import train_digits  # noqa: E402  (a missing demo must fail, not skip)


def test_digits_cnn_short_run(tmp_path, capsys):
    acc, same = train_digits.main(["--epochs", "8", "--checkpoint", str(tmp_path / "digits.oar")])
    out = capsys.readouterr().out
    assert "test accuracy" in out and "samples/s" in out
    assert acc >= 0.97, f"held-out accuracy {acc:.4f} < 0.97"
    assert same
    assert (tmp_path / "digits.oar").exists()
    assert not [p for p in os.listdir(tmp_path) if ".tmp" in p]  # written atomically
