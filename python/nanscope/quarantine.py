"""Leaving the samples a guard saw non-finite out of a user's DataLoader."""

from __future__ import annotations

from typing import AbstractSet, Container, Iterable, Iterator, Optional, Sized

import torch


class QuarantineSampler(torch.utils.data.Sampler):
    """The indices of ``sampler`` (any sampler, or a list of indices) but those in ``quarantined``,
    read each time an index is drawn: pass ``rec.quarantined``, and the rows a guard saw holding
    NaN or Inf are left out from the next batch the loader draws (a loader's workers may already
    hold a few batches drawn before). Batches come out shorter by the rows left out.

        rec = nanscope.record(model, "run.nsrun", optimizer=opt, on_nonfinite="skip")
        loader = DataLoader(data, batch_size=32,
                            sampler=nanscope.QuarantineSampler(RandomSampler(data), rec.quarantined))
    """

    def __init__(self, sampler: Iterable[int], quarantined: AbstractSet[int]) -> None:
        self.sampler = sampler
        self.quarantined = quarantined

    def __iter__(self) -> Iterator[int]:
        for index in self.sampler:
            if int(index) not in self.quarantined:
                yield index

    def __len__(self) -> int:
        """The sampler's length less the quarantined indices it draws, where that can be told
        without drawing (which would consume the random numbers of the user's run); else the
        sampler's length, an upper bound."""
        if not isinstance(self.sampler, Sized):
            raise TypeError("QuarantineSampler: the sampler it wraps has no length")
        drawn = _indices_of(self.sampler)
        if drawn is None:
            return len(self.sampler)
        return len(self.sampler) - sum(1 for i in self.quarantined if i in drawn)


def _indices_of(sampler: Iterable[int]) -> Optional[Container[int]]:
    """The indices ``sampler`` draws, where they are known without drawing."""
    if isinstance(sampler, (list, tuple, range)):
        return set(int(i) for i in sampler)
    if isinstance(sampler, torch.utils.data.SubsetRandomSampler):
        return set(int(i) for i in sampler.indices)
    if isinstance(sampler, torch.utils.data.SequentialSampler) or (  # a permutation of the data set
            isinstance(sampler, torch.utils.data.RandomSampler) and not sampler.replacement
            and len(sampler) == len(sampler.data_source)):  # type: ignore[arg-type]
        return range(len(sampler))
    return None
