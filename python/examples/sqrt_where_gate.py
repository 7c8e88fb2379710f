"""``torch.where(x > 0, sqrt(x), 0)``: a finite forward whose backward is NaN. where() picks the
0 branch, but autograd still differentiates sqrt at the negative x, and 0 * NaN is NaN.

    python3 sqrt_where_gate.py [OUT.nsrun]      then: nanscope OUT.nsrun
"""

import sys

import torch
from torch import nn

import nanscope


class SqrtGate(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.where(x > 0, torch.sqrt(x), torch.zeros_like(x))


def main(path: str = "sqrt_where_gate.nsrun") -> None:
    torch.manual_seed(0)
    x, y = torch.randn(32, 4), torch.randn(32, 1)
    model = nn.Sequential(nn.Linear(4, 16), SqrtGate(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        for step in range(10):
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            rec.step(loss)
    print(f"wrote {path}: open it with `nanscope {path}`")


if __name__ == "__main__":
    main(*sys.argv[1:2])
