"""nn.utils.convert_parameters (torch.nn.utils.convert_parameters): parameters as one flat vector and back."""
from ..._C import Tensor
from ..._ops import ops
from ...autograd import no_grad

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param, old_device):
    """All parameters must live on one device (PyTorch's check); returns the device seen so far."""
    if old_device is None:
        return param.device
    if param.device != old_device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return old_device


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated into one 1-D tensor (differentiable, like torch.cat)."""
    device, flat = None, []
    for p in ([parameters] if isinstance(parameters, Tensor) else parameters):
        device = _check_param_device(p, device)
        flat.append(p.reshape(-1))
    return ops.concat(flat, dim=0)


def vector_to_parameters(vec, parameters):
    """Writes consecutive slices of the 1-D `vec` into the parameters, in order (their data, without autograd)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    if vec.ndim != 1:
        raise TypeError(f"expected vec to be a 1-D Tensor, got {vec.ndim} dimensions")
    device, offset = None, 0
    with no_grad():
        for p in ([parameters] if isinstance(parameters, Tensor) else parameters):
            device = _check_param_device(p, device)
            n = p.numel()
            p.copy_(vec[offset:offset + n].reshape(*p.shape))
            offset += n
