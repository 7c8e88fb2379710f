"""A step's statistics, gathered on the device and read in one copy, equal the exact pass's."""

from __future__ import annotations

import math

import pytest
import torch

from nanscope.health import Health, StatBatch, exact_health, nonfinite_rows

INF, NAN = float("inf"), float("nan")


def tensors() -> dict:
    torch.manual_seed(0)
    with_bad = torch.randn(100)
    with_bad[[3, 7]] = NAN
    with_bad[11] = INF
    with_bad[[12, 13, 14]] = -INF
    return {
        "healthy": torch.randn(4, 5),
        "nan, +inf, -inf": with_bad,
        "all nan": torch.full((6,), NAN),
        "huge but finite": torch.full((10,), 3e38),  # its float32 norm overflows
        "fp16": torch.randn(8).half(),
        "bf16 with inf": torch.tensor([1.0, INF, -2.0]).bfloat16(),
        "int64": torch.arange(-3, 9),
        "empty": torch.zeros(0, 3),
        "float64": torch.randn(7, dtype=torch.float64),
        "large, reduced by rows": torch.randn(64, 2048) * 3,
        "large with nan and inf": torch.randn(70000).index_fill_(0, torch.tensor([5, 69999]), NAN)
        .index_fill_(0, torch.tensor([17]), INF),
        "large, not contiguous": torch.randn(512, 256).t(),
    }


@pytest.mark.parametrize("name", list(tensors()))
def test_the_batched_read_is_the_exact_health(name: str) -> None:
    t = tensors()[name]
    batch = StatBatch()
    slot = batch.add(t)
    got = batch.read()[slot]
    want = exact_health(t)
    assert isinstance(got, Health)
    assert (got.numel, got.nan, got.posinf, got.neginf) == (want.numel, want.nan, want.posinf, want.neginf)
    for a, b in ((got.min, want.min), (got.max, want.max)):
        assert (math.isnan(a) and math.isnan(b)) or a == b
    assert got.norm == pytest.approx(want.norm, rel=1e-5)


def test_the_counts_are_the_tensors_own() -> None:
    h = exact_health(tensors()["nan, +inf, -inf"])
    assert (h.numel, h.nan, h.posinf, h.neginf) == (100, 2, 1, 3)
    finite = tensors()["nan, +inf, -inf"]
    finite = finite[torch.isfinite(finite)]
    assert h.min == float(finite.min()) and h.max == float(finite.max())


def test_a_parameter_changed_in_place_keeps_what_it_held() -> None:
    p = torch.tensor([1.0, NAN, 2.0])
    batch = StatBatch()
    slot = batch.add(p)
    p.copy_(torch.tensor([1.0, 5.0, 2.0]))  # an update wrote over the NaN before the step's end
    h = batch.read()[slot]
    assert isinstance(h, Health) and h.has_nonfinite()


def test_merge_folds_counts_range_and_norm() -> None:
    a = exact_health(torch.tensor([3.0, NAN]))
    a.merge(exact_health(torch.tensor([-4.0, INF])))
    assert (a.numel, a.nan, a.posinf, a.min, a.max, a.norm) == (4, 1, 1, -4.0, 3.0, 5.0)


def test_nonfinite_rows_are_the_batch_rows_holding_nan_or_inf() -> None:
    x = torch.zeros(5, 2, 3)
    x[1, 0, 2] = NAN
    x[4, 1, 1] = -INF
    assert nonfinite_rows(x) == [1, 4]


def test_one_batch_of_every_kind_reads_each_as_its_exact_health() -> None:
    # Small CPU tensors are read together at the end, grouped by dtype: each keeps its own values.
    batch = StatBatch()
    every = tensors()
    slots = {name: batch.add(t) for name, t in every.items()}
    read = batch.read()
    for name, t in every.items():
        got, want = read[slots[name]], exact_health(t)
        assert isinstance(got, Health)
        assert (got.numel, got.nan, got.posinf, got.neginf) == (want.numel, want.nan, want.posinf, want.neginf), name
        assert got.norm == pytest.approx(want.norm, rel=1e-5), name


def test_ranges_are_stored_as_the_cpp_writer_compacts_them() -> None:
    """Range::Compact: a value a float holds exactly as the float's bits, any other as a number, NaN
    as NULL (docs/run-file.md), for a whole step's values at once."""
    from nanscope.rows import compact_all
    values = [1.5, 0.1, float("nan"), float("inf"), float("-inf"), 3.5e38, -0.0, 2.0 ** -149, 1e-46, 16777217.0]
    assert compact_all(values) == [1069547520, 0.1, None, 2139095040, -8388608, 3.5e38, -2147483648, 1, 1e-46,
                                   16777217.0]
    assert compact_all([]) == []
