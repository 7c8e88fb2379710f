"""Loops whose failing step the replay tests record, and the functions a replay rebuilds them
with: this file is also the ``--script`` of ``python -m nanscope replay`` in those tests (loaded as
a module: nothing trains at import)."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Tuple

import torch
from torch import nn

import nanscope

BAD_ROW = 13  # the dataset index whose input holds NaN


def data() -> Tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(5)
    x = torch.randn(512, 8, generator=g) * 4
    y = torch.randn(512, 1, generator=g) * 10
    x[BAD_ROW, 2] = float("nan")
    return x, y


def compute_loss(model: nn.Module, batch: Any) -> torch.Tensor:
    x, y = batch
    return nn.functional.mse_loss(model(x).float(), y)


def build_model() -> Tuple[nn.Module, torch.optim.Optimizer]:
    """An MLP with dropout (the replay draws its masks again) trained with Adam."""
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 1))
    return model, torch.optim.Adam(model.parameters(), lr=0.01)


def build_divergent() -> Tuple[nn.Module, torch.optim.Optimizer]:
    """SGD at a rate that makes the loss grow about sixfold a step until it overflows."""
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    return model, torch.optim.SGD(model.parameters(), lr=0.5)


def build_overflow() -> Tuple[nn.Module, torch.optim.Optimizer]:
    """A weight of 3.4e38: finite in float32, beyond bfloat16's largest (3.39e38)."""
    model = nn.Sequential(nn.Linear(1, 1))
    with torch.no_grad():
        model[0].weight.fill_(3.4e38)
        model[0].bias.zero_()
    return model, torch.optim.SGD(model.parameters(), lr=1e-3)


def overflow_loss(model: nn.Module, batch: Any) -> torch.Tensor:
    x, _ = batch
    return (model(x[:, :1].abs().clamp(max=1.0) * 0 + 1.0).float() / 1e38).mean()


class Noisy(nn.Module):
    """Multiplies by noise from a generator of its own, seeded from the clock: not kept by a
    capsule, so a step is computed differently each time."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        import time
        g = torch.Generator().manual_seed(time.perf_counter_ns())
        return self.linear(x) * (1 + torch.rand(x.shape[0], 1, generator=g))


def build_noisy() -> Tuple[nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(2)
    model = Noisy()
    return model, torch.optim.SGD(model.parameters(), lr=1e-3)


def rows(step: int, batch: int = 32) -> List[int]:
    """The dataset indices of a step's batch: consecutive rows, wrapping around."""
    return [(step * batch + i) % 512 for i in range(batch)]


def record(path: str, model: nn.Module, optimizer: torch.optim.Optimizer, steps: int, loss_of: Any = compute_loss,
           finite_rows: bool = False, autocast: Optional[torch.dtype] = None, batch_given: bool = True,
           **options: Any) -> List[float]:
    """Trains ``steps`` steps, recording into ``path``; the losses."""
    x, y = data()
    if finite_rows:
        x = torch.nan_to_num(x)
    losses = []
    with nanscope.record(model, path, optimizer=optimizer, overwrite=True, **options) as rec:
        for step in range(steps):
            idx = rows(step)
            batch = (x[idx], y[idx])
            optimizer.zero_grad()
            with torch.autocast("cpu", dtype=autocast) if autocast else _nothing():
                loss = loss_of(model, batch)
            loss.backward()
            optimizer.step()
            rec.step(loss, samples=idx, batch=batch if batch_given else None)
            losses.append(float(loss))
    return losses


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *args: Iterable[Any]) -> None:
        return None


def plain_losses(build: Any, steps: int, lr_from: Dict[int, float]) -> List[float]:
    """The losses of the same loop without a recorder, with the learning rate set from given
    steps on (a test's own truth for a what-if)."""
    model, optimizer = build()
    x, y = data()
    x = torch.nan_to_num(x)
    losses = []
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = lr_from.get(step, group["lr"])
        idx = rows(step)
        optimizer.zero_grad()
        loss = compute_loss(model, (x[idx], y[idx]))
        loss.backward()
        optimizer.step()
        losses.append(float(loss))
    return losses


class Tagger(nn.Module):
    """A time-first LSTM tagger over a dict batch ({"x": time x batch x 8, "y": time x batch})."""

    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.LSTM(8, 16)
        self.head = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.rnn(x)[0])


def build_tagger() -> Tuple[nn.Module, torch.optim.Optimizer]:
    """Two parameter groups at their own rates, as fine-tuning loops have."""
    torch.manual_seed(4)
    model = Tagger()
    return model, torch.optim.AdamW([{"params": model.rnn.parameters(), "lr": 3e-3},
                                      {"params": model.head.parameters(), "lr": 1e-3}])


def tagger_loss(model: nn.Module, batch: Dict[str, torch.Tensor]) -> torch.Tensor:
    return nn.functional.cross_entropy(model(batch["x"]).reshape(-1, 4), batch["y"].reshape(-1))


def record_tagger(path: str, steps: int, bad: Tuple[int, int]) -> None:
    """Batches of 6 sequences of 5 steps, time first, under a StepLR schedule; sequence ``bad[1]``
    of step ``bad[0]`` (dataset index 6 * step + row) holds an Inf."""
    model, optimizer = build_tagger()
    schedule = torch.optim.lr_scheduler.StepLR(optimizer, 2, 0.5)
    g = torch.Generator().manual_seed(6)
    with nanscope.record(model, path, optimizer=optimizer, overwrite=True) as rec:
        for step in range(steps):
            batch = {"x": torch.randn(5, 6, 8, generator=g), "y": torch.randint(0, 4, (5, 6), generator=g)}
            if step == bad[0]:
                batch["x"][3, bad[1], 1] = float("inf")
            optimizer.zero_grad()
            loss = tagger_loss(model, batch)
            loss.backward()
            optimizer.step()
            schedule.step()
            rec.step(loss, samples=[6 * step + r for r in range(6)], batch=batch)


def build_normed() -> Tuple[nn.Module, torch.optim.Optimizer]:
    """BatchNorm in training mode: a single row cannot go through it alone."""
    torch.manual_seed(7)
    model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1))
    return model, torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
