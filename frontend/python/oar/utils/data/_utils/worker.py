"""oar.utils.data._utils.worker (torch.utils.data._utils.worker): get_worker_info() and WorkerInfo. The worker
process itself lives in oar.utils._worker."""
from ..._worker import WorkerInfo, get_worker_info

__all__ = ["WorkerInfo", "get_worker_info"]
