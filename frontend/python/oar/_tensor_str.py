"""How a tensor prints (its repr and str), laid out as PyTorch lays it out.

The text is `tensor(<body>, <suffixes>)`:

- the body nests `[`...`]` once per dimension; a row's elements are separated by `, ` and wrapped at
  `linewidth`, an inner block starts on a new line under the first element after `tensor(` (one more space
  per level), and blocks of d >= 2 dimensions are separated by d - 1 newlines (blank lines from 3-d on);
- every element is right-aligned to one width, chosen from the values as a whole: integers and booleans as
  Python writes them; floating values, when every finite one is a whole number, as `3.`, otherwise with
  `precision` decimals, and in scientific notation when the nonzero finite magnitudes span more than a factor
  1000, exceed 1e8 or (for non-whole values) go under 1e-4, unless `sci_mode` says otherwise;
- with more than `threshold` elements, only `edgeitems` entries at each end of each long dimension are shown
  around a `...`; only those are read from the device, so a huge tensor prints at once;
- suffixes: `device='...'` off the CPU, `size=(...)` for an empty tensor that isn't 1-d, `dtype=...` unless
  the dtype is a default one (the default floating dtype, int64 and bool; only the former for an empty
  tensor), then `grad_fn=<...>` or `requires_grad=True`; a suffix that would run past `linewidth` goes on a
  line of its own.

`PRINT_OPTS` holds the options; oar.set_printoptions / get_printoptions (in _printoptions) change and read it.
"""
import math


class _PrintOptions:
    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self):
        self.precision = 4
        self.threshold = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode = None  # None: chosen from the values; True / False: always / never scientific

    def as_dict(self):
        return {name: getattr(self, name) for name in self.__slots__}


PRINT_OPTS = _PrintOptions()


class _ValueFormat:
    """One textual form, and one width, for all the values a tensor shows."""

    def __init__(self, values, floating, opts):
        self.floating = floating
        self.precision = opts.precision
        self.whole = True  # floating values printed as `3.`
        self.scientific = False
        self.width = 1
        if not floating:
            self.width = max((len(str(v)) for v in values), default=1)
            return
        shown = [v for v in values if v != 0 and math.isfinite(v)]
        if not shown:  # only zeros, nan and inf: the whole-number form, and sci_mode has no say
            return
        smallest = min(abs(v) for v in shown)
        largest = max(abs(v) for v in shown)
        self.whole = all(v == math.ceil(v) for v in shown)
        spread = largest / smallest > 1000.0 or largest > 1.0e8
        self.scientific = spread if self.whole else (spread or smallest < 1.0e-4)
        # the width comes from the nonzero finite values only, in the form the values call for
        self.width = max(len(self._text(v)) for v in shown)
        if opts.sci_mode is not None:
            self.scientific = bool(opts.sci_mode)

    def _text(self, v):
        if not self.floating:
            return str(v)
        if self.scientific:
            return f"{v:.{self.precision}e}"
        if self.whole:
            return f"{v:.0f}." if math.isfinite(v) else f"{v:.0f}"
        return f"{v:.{self.precision}f}"

    def __call__(self, v):
        return self._text(v).rjust(self.width)


def _flatten(data, ndim, out):
    if ndim == 0:
        out.append(data)
    elif ndim == 1:
        out.extend(data)
    else:
        for sub in data:
            _flatten(sub, ndim - 1, out)
    return out


def _elided(n, summarize, opts):
    return summarize and n > 2 * opts.edgeitems


def _row(values, n, indent, summarize, fmt, opts):
    items = [fmt(v) for v in values]
    if _elided(n, summarize, opts):
        edge = opts.edgeitems
        items = items[:edge] + [" ..."] + items[len(items) - edge:]
    per_line = max(1, int(math.floor((opts.linewidth - indent) / (fmt.width + 2))))
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _block(data, shape, indent, summarize, fmt, opts):
    if len(shape) == 1:
        return _row(data, shape[0], indent, summarize, fmt, opts)
    parts = [_block(sub, shape[1:], indent + 1, summarize, fmt, opts) for sub in data]
    if _elided(shape[0], summarize, opts):
        edge = opts.edgeitems
        parts = parts[:edge] + ["..."] + parts[len(parts) - edge:]
    return "[" + ("," + "\n" * (len(shape) - 1) + " " * (indent + 1)).join(parts) + "]"


def _edges(x, opts):
    """x with only the first and last `edgeitems` entries of each dimension longer than twice that."""
    from oar import cat
    edge = opts.edgeitems
    for d, n in enumerate(tuple(x.shape)):
        if n > 2 * edge:
            x = cat([x.narrow(d, 0, edge), x.narrow(d, n - edge, edge)], d)
    return x


def _host_values(x):
    """x's values as a (nested) Python list, or a scalar for a 0-d tensor: float32 for float16 / bfloat16."""
    import oar
    x = x.cpu()
    if x.dtype in (oar.float16, oar.bfloat16):
        x = x.float()
    return x.contiguous().tolist()


def _body(x, indent, opts):
    import oar
    shape = tuple(x.shape)
    summarize = x.numel() > opts.threshold
    shown = _edges(x, opts) if summarize else x
    data = _host_values(shown)
    fmt = _ValueFormat(_flatten(data, len(shape), []), x.is_floating_point() and x.dtype != oar.bool, opts)
    if not shape:
        return fmt(data)
    return _block(data, shape, indent, summarize, fmt, opts)


def _with_suffixes(text, suffixes, indent, opts):
    # the length the last line is taken to have counts two more than its characters, as PyTorch counts it
    last = len(text) - text.rfind("\n") + 1
    out = [text]
    for suffix in suffixes:
        if last + len(suffix) + 2 > opts.linewidth:
            out.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            out.append(", " + suffix)
            last += len(suffix) + 2
    out.append(")")
    return "".join(out)


def dtype_name(dtype):
    """How the dtype suffix names a dtype (its repr, `oar.float64`)."""
    return repr(dtype)


def tensor_str(self):
    """The repr of a tensor, as PyTorch writes it (with oar's names for dtypes)."""
    import oar
    opts = PRINT_OPTS
    prefix = "tensor("
    indent = len(prefix)
    x = self.detach()
    dtype = x.dtype
    suffixes = []
    device = x.device
    if device.type != "cpu":
        suffixes.append(f"device='{device}'")
    if x.numel() == 0:
        if x.dim() != 1:
            suffixes.append(f"size={tuple(x.shape)}")
        if dtype != oar.get_default_dtype():
            suffixes.append(f"dtype={dtype_name(dtype)}")
        body = "[]"
    else:
        if dtype not in (oar.get_default_dtype(), oar.int64, oar.bool):
            suffixes.append(f"dtype={dtype_name(dtype)}")
        body = _body(x, indent, opts)
    grad_fn = self.grad_fn
    if grad_fn is not None:
        name = grad_fn if isinstance(grad_fn, str) else getattr(grad_fn, "name", lambda: type(grad_fn).__name__)()
        suffixes.append(f"grad_fn=<{name}>")
    elif self.requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + body, suffixes, indent, opts)
