"""A learning rate so large that an MSE regression diverges: the loss, then the weights, overflow.

    python3 diverging_regression.py [OUT.nsrun]      then: nanscope OUT.nsrun
"""

import sys

import torch
from torch import nn

import nanscope


def main(path: str = "diverging_regression.nsrun") -> None:
    torch.manual_seed(0)
    x = torch.randn(256, 8)
    y = x @ torch.randn(8, 1) * 5.0
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=32, shuffle=True)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.2)  # about 100 times too large
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        for epoch in range(5):
            for xb, yb in loader:
                optimizer.zero_grad()
                loss = nn.functional.mse_loss(model(xb), yb)
                loss.backward()
                optimizer.step()
                rec.step(loss)
    print(f"wrote {path}: open it with `nanscope {path}`")


if __name__ == "__main__":
    main(*sys.argv[1:2])
