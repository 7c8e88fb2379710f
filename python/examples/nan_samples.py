"""A data set whose samples 10 and 50 hold NaN and Inf, as a corrupt record in a shard would.

The loader hands out dataset indices with each batch, so the recorder names the bad samples.

    python3 nan_samples.py [OUT.nsrun]      then: nanscope OUT.nsrun
"""

import sys

import torch
from torch import nn

import nanscope


class Measurements(torch.utils.data.Dataset):
    def __init__(self) -> None:
        torch.manual_seed(0)
        self.x = torch.randn(128, 6)
        self.y = self.x.sum(dim=1, keepdim=True)
        self.x[10, 3] = float("nan")
        self.x[50, 1] = float("inf")

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int):
        return i, self.x[i], self.y[i]


def main(path: str = "nan_samples.nsrun") -> None:
    loader = torch.utils.data.DataLoader(Measurements(), batch_size=16, shuffle=False)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        for index, xb, yb in loader:
            optimizer.zero_grad(set_to_none=True)
            loss = nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            optimizer.step()
            rec.step(loss, samples=index)
    print(f"wrote {path}: open it with `nanscope {path}`")


if __name__ == "__main__":
    main(*sys.argv[1:2])
