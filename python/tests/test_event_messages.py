"""The Python recorder's events carry the C++ core's message ids (format.json), so the window shows
them in its language: every kind of event it writes, checked against the pattern it names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import conftest
import pytest
from nanscope import format as fmt
from nanscope.messages import Message, short_number

ROOT = Path(__file__).resolve().parents[2]


def test_a_run_says_each_of_its_events_by_message_id(tmp_path: Path) -> None:
    """The script the window's test opens in Chinese (tests/python_event_run.py): the recording's
    start, a TorchScript submodule, a step without an update, update and overflow forecasts."""
    path = tmp_path / "events.nsrun"
    subprocess.run([sys.executable, str(ROOT / "tests" / "python_event_run.py"), str(path)], check=True)
    said = conftest.assert_events_carry_messages(path)
    ids = [i for _, i, _ in said]
    assert ids[:3] == ["python-recording", "not-measured-scripted", "update-not-called"]
    assert said[1][2] == ["1"]  # the submodule's path
    assert "updates-large" in ids and "overflow-output" in ids
    assert any(i.startswith("overflow-loss") for i in ids)


@pytest.mark.parametrize("value,digits,text", [(9.74, 2, "9.7"), (16000.0, 2, "1.6e+04"), (0.000123, 2, "0.00012"),
                                               (1.0, 3, "1"), (2.0 ** -20, 3, "9.54e-07")])
def test_numbers_read_as_a_cpp_stream_writes_them(value: float, digits: int, text: str) -> None:
    assert short_number(value, digits) == text


def test_an_unknown_id_is_refused_before_it_reaches_a_file() -> None:
    with pytest.raises(KeyError, match="not in format.json"):
        Message("no-such-sentence")
    # A pattern may leave an argument out: its value is not written (the C++ composition).
    assert "%" not in Message("overflow-loss", ["", "1e+02", "fp32", "3"]).text()
    assert fmt.EVENT_MESSAGES["overflow-loss"].startswith("the loss grows x%2")
