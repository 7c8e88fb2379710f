"""NaNScope's recorder for your own PyTorch training loop.

    import nanscope
    with nanscope.record(model, "run.nsrun", optimizer=optimizer) as rec:
        for x, y in loader:
            ...
            optimizer.step()
            rec.step(loss)

The run file opens in the NaNScope window (``nanscope run.nsrun``), in ``nanscope report`` and
``nanscope export``, and in any SQLite client. See docs/python.md.
"""

__version__ = "0.1.0"

from .guard import NonFiniteError, Stopped  # noqa: E402
from .quarantine import QuarantineSampler  # noqa: E402
from .recorder import Recorder, RecorderClosed, record  # noqa: E402
from .capsule import CapsuleError  # noqa: E402
from .replay import Replay, WhatIf, replay  # noqa: E402
from .replay_step import ReplayError  # noqa: E402

__all__ = ["CapsuleError", "NonFiniteError", "QuarantineSampler", "Recorder", "RecorderClosed", "Replay",
           "ReplayError", "Stopped", "WhatIf", "record", "replay", "__version__"]
