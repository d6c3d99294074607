"""How a complex tensor prints, as torch prints one: `tensor([1.+2.j, 3.-4.j])`.

The real and imaginary parts each get a format chosen from their own values (oar's _ValueFormat, the rules of
a real tensor), an element is `<real><sign><|imag|>j`, and a row wraps at the width of the two together.
"""
from .._tensor_str import PRINT_OPTS, _ValueFormat, _edges, _flatten, _with_suffixes


class _ComplexFormat:
    def __init__(self, re_values, im_values, opts):
        self.re = _ValueFormat(re_values, True, opts)
        self.im = _ValueFormat(im_values, True, opts)
        self.width = self.re.width + self.im.width + 1  # the two widths and the `j`

    def __call__(self, v):
        real = self.re(v.real)
        imag = (self.im(v.imag) + "j").lstrip()
        if imag[0] in "+-":
            return real + imag
        return real + "+" + imag


def _row(values, n, indent, summarize, fmt, opts):
    items = [fmt(v) for v in values]
    if summarize and n > 2 * opts.edgeitems:
        edge = opts.edgeitems
        items = items[:edge] + [" ..."] + items[len(items) - edge:]
    per_line = max(1, int((opts.linewidth - indent) // (fmt.width + 2)))
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _block(data, shape, indent, summarize, fmt, opts):
    if len(shape) == 1:
        return _row(data, shape[0], indent, summarize, fmt, opts)
    parts = [_block(sub, shape[1:], indent + 1, summarize, fmt, opts) for sub in data]
    if summarize and shape[0] > 2 * opts.edgeitems:
        edge = opts.edgeitems
        parts = parts[:edge] + ["..."] + parts[len(parts) - edge:]
    return "[" + ("," + "\n" * (len(shape) - 1) + " " * (indent + 1)).join(parts) + "]"


def _zip(re, im, ndim):
    if ndim == 0:
        return complex(re, im)
    return [_zip(r, i, ndim - 1) for r, i in zip(re, im)]


def _body(z, indent, opts):
    shape = tuple(z.shape)
    summarize = z.numel() > opts.threshold
    re, im = z.re.detach(), z.im.detach()
    if summarize:
        re, im = _edges(re, opts), _edges(im, opts)
    re, im = re.cpu().contiguous().tolist(), im.cpu().contiguous().tolist()
    fmt = _ComplexFormat(_flatten(re, len(shape), []), _flatten(im, len(shape), []), opts)
    data = _zip(re, im, len(shape))
    if not shape:
        return fmt(data)
    return _block(data, shape, indent, summarize, fmt, opts)


def complex_str(z):
    from ._dtype import default_complex
    opts = PRINT_OPTS
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if z.device.type != "cpu":
        suffixes.append(f"device='{z.device}'")
    if z.numel() == 0:
        if z.ndim != 1:
            suffixes.append(f"size={tuple(z.shape)}")
        body = "[]"
    else:
        body = _body(z, indent, opts)
    if z.dtype is not default_complex():
        suffixes.append(f"dtype={z.dtype!r}")
    grad_fn = z.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn.name()}>")
    elif z.requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + body, suffixes, indent, opts)
