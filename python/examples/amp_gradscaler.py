"""Mixed precision with a GradScaler: the scaler's overflows are its own business (skipped steps,
a smaller scale), not the run's origin, until the scale has nothing left to give.

On a GPU this is the usual fp16 autocast loop. Without one, autocast runs in bfloat16 on the CPU,
where no scaler is needed (PyTorch's CUDA GradScaler disables itself there).

    python3 amp_gradscaler.py [OUT.nsrun]      then: nanscope OUT.nsrun
"""

import sys
import warnings

import torch
from torch import nn

import nanscope


def main(path: str = "amp_gradscaler.nsrun") -> None:
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.randn(64, 16, device=device) * 4.0
    y = torch.randn(64, 1, device=device)
    model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the CUDA scaler's note that it is off on the CPU
        scaler = torch.cuda.amp.GradScaler(init_scale=2.0 ** 24, enabled=device == "cuda")
    dtype = torch.float16 if device == "cuda" else torch.bfloat16
    with nanscope.record(model, path, optimizer=optimizer, scaler=scaler) as rec:
        for step in range(40):
            optimizer.zero_grad()
            with torch.autocast(device_type=device, dtype=dtype):
                loss = nn.functional.mse_loss(model(x).float(), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            rec.step(loss)
    print(f"wrote {path}: open it with `nanscope {path}`")


if __name__ == "__main__":
    main(*sys.argv[1:2])
