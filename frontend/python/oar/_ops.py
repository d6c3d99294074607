"""Python functions for every op in the catalog, generated at import time.

`oar.ops.<name>(*tensors, *attrs, **attrs)` calls the op: its tensor inputs
positionally (a variadic input takes a list), then its attributes in catalog
order, positionally or by keyword, with the catalog's defaults; `device=`
places a creation op. Nothing here is written per op: a new catalog entry
appears here (and, when public, as oar.<op> and Tensor.<op>: _catalog.py).
"""
import types

from . import _C

ops = types.SimpleNamespace()
schemas = {}


def _make(schema):
    name = schema["name"]
    attr_names = [a["name"] for a in schema["attrs"]]
    known = frozenset(attr_names)
    n_inputs = len(schema["inputs"])
    variadic = bool(schema["inputs"]) and schema["inputs"][-1]["variadic"]
    device_is_attr = "device" in known  # to_device's target; otherwise `device` places a creation op
    # Trailing optional inputs (linear's bias) may be left out: they are passed as None.
    n_required = max((k + 1 for k, i in enumerate(schema["inputs"]) if not i["optional"]), default=0)
    call = _C.call

    def op(*args, **attrs):
        device = None if device_is_attr else attrs.pop("device", None)
        if len(args) > n_inputs and not variadic:  # a variadic input may also be given as several tensors
            extra, args = args[n_inputs:], args[:n_inputs]
            if len(extra) > len(attr_names):
                raise TypeError(f"{name}() takes {n_inputs} tensor argument(s) and {len(attr_names)} attribute(s) "
                                f"({', '.join(attr_names)}), got {n_inputs + len(extra)} positional arguments")
            for key, value in zip(attr_names, extra):
                if key in attrs:
                    raise TypeError(f"{name}() got multiple values for argument '{key}'")
                attrs[key] = value
        if n_required <= len(args) < n_inputs:
            args = args + (None,) * (n_inputs - len(args))
        if attrs and not known.issuperset(attrs):
            unknown = [k for k in attrs if k not in known]
            raise TypeError(f"{name}() got unexpected keyword argument(s) {unknown}; "
                            + (f"its attributes: {attr_names}" if attr_names else "it takes no keyword arguments"))
        return call(name, list(args), attrs, device)

    op.__name__ = op.__qualname__ = name
    inputs = ", ".join(i["name"] + ("..." if i["variadic"] else "") for i in schema["inputs"])
    attrs = ", ".join(a["name"] + (f"={a['default']!r}" if a["has_default"] else "") for a in schema["attrs"])
    op.__doc__ = f"{name}({inputs}; {attrs}) -> {', '.join(schema['outputs']) or 'tensors'}\n\n{schema['doc']}"
    return op


def _install_ops():
    for schema in _C.op_schemas():
        schemas[schema["name"]] = schema
        setattr(ops, schema["name"], _make(schema))


_install_ops()
