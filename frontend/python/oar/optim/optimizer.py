"""Optimizer base: param_groups, per-parameter state, zero_grad, state_dict (PyTorch layout).

Subclasses implement step(); updates happen in place on the parameters'
memory under no_grad, so the tensors a model holds are updated directly.
State is keyed by the parameter objects held in param_groups.

As in PyTorch 2.x, every subclass's step() runs the step hooks: the global ones
(register_optimizer_step_pre_hook / _post_hook) and the optimizer's own
(register_step_pre_hook / register_step_post_hook); a pre-hook may return
(new_args, new_kwargs) for step. A step() that calls super().step() runs them once.
"""
import copy
import functools
from collections import OrderedDict

from .._C import Tensor, is_tracing
from .._dtypes import float32
from ..autograd import no_grad, enable_grad


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class _IdentityDict(dict):
    """dict keyed by tensor identity: oar.Tensor's == is elementwise, so tensors can't be compared as keys."""

    def __getitem__(self, key):
        return dict.__getitem__(self, id(key))[1]

    def __setitem__(self, key, value):
        dict.__setitem__(self, id(key), (key, value))

    def __contains__(self, key):
        return dict.__contains__(self, id(key))

    def __delitem__(self, key):
        dict.__delitem__(self, id(key))


    def get(self, key, default=None):
        e = dict.get(self, id(key))
        return default if e is None else e[1]

    def __iter__(self):
        return (k for k, _ in dict.values(self))

    def keys(self):
        return list(iter(self))

    def values(self):
        return [v for _, v in dict.values(self)]

    def items(self):
        return list(dict.values(self))


class _State(_IdentityDict):
    """optimizer.state: a missing parameter reads as a new empty dict (like PyTorch's defaultdict(dict))."""

    def __getitem__(self, key):
        if id(key) not in dict.keys(self):
            self[key] = {}
        return _IdentityDict.__getitem__(self, key)


_global_step_pre_hooks = OrderedDict()
_global_step_post_hooks = OrderedDict()


def _handle(hooks, hook):
    from ..nn._state_dict import RemovableHandle
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def register_optimizer_step_pre_hook(hook):
    """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), before every optimizer's step()."""
    return _handle(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """hook(optimizer, args, kwargs) -> None, after every optimizer's step()."""
    return _handle(_global_step_post_hooks, hook)


def _hooked_step(step):
    """step() wrapped to run the step hooks (once, however many wrapped super().step() calls nest)."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        d = self.__dict__
        pre, post = d.get("_optimizer_step_pre_hooks"), d.get("_optimizer_step_post_hooks")
        if d.get("_in_hooked_step") or not (pre or post or _global_step_pre_hooks or _global_step_post_hooks):
            return step(self, *args, **kwargs)
        d["_in_hooked_step"] = True
        try:
            for hook in list(_global_step_pre_hooks.values()) + list((pre or {}).values()):
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(f"{hook} must return None or a tuple of (new_args, new_kwargs), but "
                                           f"got {result}.")
                    args, kwargs = result
            out = step(self, *args, **kwargs)
            for hook in list((post or {}).values()) + list(_global_step_post_hooks.values()):
                hook(self, args, kwargs)
            return out
        finally:
            d["_in_hooked_step"] = False

    wrapper._oar_hooked = True
    return wrapper


class _PickledState(list):
    """optimizer.state as [(param, state)] inside a pickle."""


class Optimizer:
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if callable(step) and not getattr(step, "_oar_hooked", False):
            cls.step = _hooked_step(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = _State()
        self.param_groups = []
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got an oar.Tensor")
        if isinstance(params, dict):
            params = [params]
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for g in param_groups:
            self.add_param_group(g)

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
            if not p.is_floating_point():
                raise TypeError(f"optimizer can only optimize floating-point Tensors, got {p.dtype}")
        group = dict(param_group)
        group["params"] = params
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            group.setdefault(name, default)
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if len({id(p) for p in params}) != len(params):
            raise ValueError("optimizer contains a parameter group with duplicate parameters")
        if existing & {id(p) for p in params}:
            raise ValueError("some parameters appear in more than one parameter group")
        self._validate_group(group)
        self.param_groups.append(group)

    def _validate_group(self, group):
        pass

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), before this optimizer's step()."""
        return _handle(self.__dict__.setdefault("_optimizer_step_pre_hooks", OrderedDict()), hook)

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None, after this optimizer's step()."""
        return _handle(self.__dict__.setdefault("_optimizer_step_post_hooks", OrderedDict()), hook)

    # ---- pickling and deepcopy: state is keyed by parameter identity, so it travels as (param, state) pairs
    # (pickle keeps the parameters shared with param_groups); training-graph tensors and hooks stay behind
    # (PyTorch's pickles hold no hooks either).
    _UNPICKLED = ("_in_hooked_step", "_optimizer_step_pre_hooks", "_optimizer_step_post_hooks")

    def __getstate__(self):
        d = {k: v for k, v in self.__dict__.items() if not k.startswith("_graph") and k not in self._UNPICKLED}
        if isinstance(d.get("state"), _IdentityDict):
            d["state"] = _PickledState(d["state"].items())
        return d

    def __setstate__(self, state):
        state = dict(state)
        saved = state.get("state")
        if isinstance(saved, _PickledState):
            state["state"] = new = _State()
            for p, s in saved:
                new[p] = s
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", OrderedDict())

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    g.zero_()

    def _closure_loss(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def step(self, closure=None):
        raise NotImplementedError

    # ---- training graphs (oar.jit.TrainGraph) ----
    # A traced step must not freeze values that change between steps. The
    # learning rate (which schedulers change) is therefore read from a 0-d
    # float32 tensor per group and device while tracing; the graph captures that
    # tensor by reference and TrainGraph refreshes it from group["lr"] before
    # each run. The fused updates (SGD, Adam) read one f32 tensor instead,
    # [lr, *_graph_hypers values] once those have changed (see _hypers_live),
    # so a schedule of momentum or betas (CyclicLR, OneCycleLR with
    # cycle_momentum) reaches the graph too.
    # Subclasses turn other per-step state into tensors in _prepare_graph_state.

    _graph_hypers = ()  # group keys the fused update reads, after lr, from the hyperparameter tensor

    def _hyper_values(self, group):
        values = [float(group["lr"])]
        for k in self._graph_hypers:
            v = group[k]
            values.extend(float(x) for x in (v if isinstance(v, (tuple, list)) else (v,)))
        return values

    def _hypers_live(self, group):
        """Whether the group's _graph_hypers come from the hyperparameter tensor: only once they have changed
        since TrainGraph first saw them (then for good). Until then the graph keeps them as exact float64
        attributes, and the f32 tensor carries lr alone (f32 would round beta2 = 0.999, which Adam's bias
        correction 1 - beta2**t magnifies)."""
        if not self._graph_hypers:
            return False
        seen = self.__dict__.setdefault("_graph_live", {})
        values = self._hyper_values(group)[1:]
        entry = seen.setdefault(id(group), [values, False])
        if not entry[1] and values != entry[0]:
            entry[1] = True
        return entry[1]

    def _prepare_graph_state(self):
        """Called by TrainGraph before tracing, outside the trace."""
        from .._creation import full, tensor
        self._graph_lr, self._graph_hyper, self._graph_values = {}, {}, {}
        for group in self.param_groups:
            for p in group["params"]:
                key = (id(group), str(p.device))
                if key not in self._graph_lr:
                    self._graph_lr[key] = (group, full((), float(group["lr"]), dtype=float32, device=p.device))
                    values = self._hyper_values(group)
                    if self._graph_hypers:  # the fused updates' [lr, momentum or betas]
                        self._graph_hyper[key] = (group, tensor(values, dtype=float32, device=p.device))
                    self._graph_values[key] = values

    def _refresh_graph_state(self):
        """Called by TrainGraph before each graph run."""
        from .._creation import full, tensor
        with no_grad():
            for key, (group, lr) in getattr(self, "_graph_lr", {}).items():
                values = self._hyper_values(group)
                if values != self._graph_values[key]:  # only when a scheduler (or the user) changed them
                    if values[0] != self._graph_values[key][0]:
                        lr.copy_(full((), values[0], dtype=lr.dtype, device=lr.device))
                    if key in self._graph_hyper:
                        t = self._graph_hyper[key][1]
                        t.copy_(tensor(values, dtype=t.dtype, device=t.device))
                    self._graph_values[key] = values

    def _graph_tensors(self):
        """(name, tensor) of the tensors above, for graph dumps."""
        hypers = getattr(self, "_graph_hyper", {})
        for j, (key, (_, lr)) in enumerate(getattr(self, "_graph_lr", {}).items()):
            yield f"lr{j}", lr
            if key in hypers:
                yield f"hyper{j}", hypers[key][1]

    def _lr(self, group, p):
        """group["lr"], or while tracing the group's learning-rate tensor on p's device (see above)."""
        if not is_tracing():
            return group["lr"]
        entry = getattr(self, "_graph_lr", {}).get((id(group), str(p.device)))
        if entry is None:
            raise RuntimeError("an optimizer step is being traced outside oar.jit.TrainGraph: "
                               "its learning rate would be frozen into the graph")
        return entry[1]

    def _hyper_tensors(self, group, params):
        """For the fused updates: [] eagerly, else the group's hyperparameter tensors (one per device)."""
        if not is_tracing():
            return []
        tensors = {}
        for p in params:
            device = str(p.device)
            if device not in tensors:
                lr = self._lr(group, p)  # the same error outside a TrainGraph
                tensors[device] = self._graph_hyper[(id(group), device)][1] if self._hypers_live(group) else lr
        return list(tensors.values())

    def state_dict(self):
        """{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}; tensors are cloned."""
        index = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                packed["params"].append(index[id(p)])
            groups.append(packed)
        state = {}
        for p, s in self.state.items():
            if id(p) in index:
                state[index[id(p)]] = {k: (v.detach().clone() if isinstance(v, Tensor) else copy.deepcopy(v))
                                       for k, v in s.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError(f"loaded state dict has {len(groups)} parameter groups, the optimizer has "
                             f"{len(self.param_groups)}")
        for i, (saved, own) in enumerate(zip(groups, self.param_groups)):
            if len(saved["params"]) != len(own["params"]):
                raise ValueError(f"loaded state dict contains a parameter group {i} of size {len(saved['params'])} "
                                 f"that doesn't match the size of optimizer's group ({len(own['params'])})")
        id_map = {}
        for saved, own in zip(groups, self.param_groups):
            for idx, p in zip(saved["params"], own["params"]):
                id_map[idx] = p
        new_state = _State()
        with no_grad():
            for idx, s in state_dict["state"].items():
                if idx not in id_map:
                    continue
                p = id_map[idx]
                entry = {}
                for k, v in s.items():
                    if isinstance(v, Tensor):
                        v = v.detach().to(p.device)
                        if v.is_floating_point() and k != "step":
                            v = v.to(dtype=p.dtype)
                        v = v.clone()
                    else:
                        v = copy.deepcopy(v)
                    entry[k] = v
                new_state[p] = entry
        self.state = new_state
        for saved, own in zip(groups, self.param_groups):
            for k, v in saved.items():
                if k != "params":
                    own[k] = v

    def __repr__(self):
        s = type(self).__name__ + " ("
        for i, g in enumerate(self.param_groups):
            s += f"\nParameter Group {i}"
            for k in sorted(g):
                if k != "params":
                    s += f"\n    {k}: {g[k]}"
        return s + "\n)"


__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]
