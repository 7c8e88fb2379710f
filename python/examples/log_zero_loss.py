"""A hand-written cross-entropy that takes log of a probability that underflowed to exactly 0.

    python3 log_zero_loss.py [OUT.nsrun]      then: nanscope OUT.nsrun
"""

import sys

import torch
from torch import nn

import nanscope


def my_cross_entropy(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    probabilities = torch.softmax(logits, dim=1)
    return -torch.log(probabilities.gather(1, target[:, None])).mean()  # log(0) = -inf


def main(path: str = "log_zero_loss.nsrun") -> None:
    torch.manual_seed(0)
    x = torch.randn(64, 10) * 30.0  # large inputs make confident, saturated logits
    target = torch.randint(0, 5, (64,))
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 5))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        for step in range(20):
            optimizer.zero_grad()
            loss = my_cross_entropy(model(x), target)
            loss.backward()
            optimizer.step()
            rec.step(loss)
    print(f"wrote {path}: open it with `nanscope {path}`")


if __name__ == "__main__":
    main(*sys.argv[1:2])
