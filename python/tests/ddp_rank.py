"""One rank of a two-rank DistributedDataParallel job over Gloo, recorded into a run folder.

Run by test_data_parallel.py with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set:
``ddp_rank.py FOLDER PYTHON_DIR BUCKET_VIEW``. Rank 1's batch of step 3 holds a NaN in its row 2.
Each step, before DDP averages the gradients, the rank's own gradient norm is computed with
plain torch on a copy of the model and written to FOLDER/expected-RANK.json for the test.
"""

import copy
import json
import os
import sys

import torch
import torch.distributed as dist
from torch import nn

sys.path.insert(0, sys.argv[2])
import nanscope  # noqa: E402

BAD_STEP, BAD_ROW, BATCH = 3, 2, 8


def main() -> None:
    folder, bucket_view = sys.argv[1], sys.argv[3] == "1"
    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    ddp = nn.parallel.DistributedDataParallel(model, gradient_as_bucket_view=bucket_view)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
    data = torch.Generator().manual_seed(100 + rank)
    own_norms = []
    with nanscope.record(ddp, folder, optimizer=optimizer) as rec:
        for step in range(6):
            x = torch.randn(BATCH, 4, generator=data)
            y = x.sum(1, keepdim=True)
            if rank == 1 and step == BAD_STEP:
                x[BAD_ROW, 1] = float("nan")
            twin = copy.deepcopy(model)
            nn.functional.mse_loss(twin(x), y).backward()
            own_norms.append(float(torch.linalg.vector_norm(torch.cat([p.grad.reshape(-1) for p in twin.parameters()]))))
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(ddp(x), y)
            loss.backward()
            optimizer.step()
            first = BATCH * (2 * step + rank)  # a distributed sampler's indices: the ranks interleave
            rec.step(loss, samples=range(first, first + BATCH))
    with open(os.path.join(folder, f"expected-{rank}.json"), "w") as f:
        json.dump(own_norms, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
