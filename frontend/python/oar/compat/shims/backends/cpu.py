"""torch.backends.cpu: the CPU capability PyTorch's kernels were picked for; oar's plugin picks its own."""


def get_cpu_capability():
    return "DEFAULT"
