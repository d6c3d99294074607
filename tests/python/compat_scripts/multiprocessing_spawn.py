"""torch.multiprocessing.spawn under compat: two spawned ranks report through a queue, and a rank that
raises makes spawn raise ProcessRaisedException in the parent."""
import torch
import torch.multiprocessing as mp


def work(rank, q, scale):
    q.put((rank, (torch.ones(2) * scale * rank).tolist()))


def fail(rank):
    if rank == 1:
        raise ValueError("rank 1 failed")


if __name__ == "__main__":
    q = mp.get_context("spawn").SimpleQueue()
    mp.spawn(work, args=(q, 3.0), nprocs=2)
    print(sorted(q.get() for _ in range(2)))
    try:
        mp.spawn(fail, nprocs=2)
    except mp.ProcessRaisedException as e:
        print("raised:", "rank 1 failed" in str(e))
