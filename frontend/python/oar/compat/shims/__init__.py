"""Stand-ins for the few PyTorch modules scripts touch in passing and oar has no counterpart for.

Resolved by name: PyTorch's `torch.X.Y` is `oar.compat.shims.X.Y` when oar
has no `oar.X.Y`. They hold settings and answer queries; none changes how oar
computes (see docs/compat.md, "Known differences").
"""
