"""The lanes' CPU budgets follow the machine's speed (tests/lanes.py): a slower machine gets a larger
budget in proportion, within bounds (never tighter than the budget, at most 2.5x looser), so a slow
hour does not fail correct code."""

from __future__ import annotations

import time

import pytest

from tests import lanes


def test_budget_scales_with_the_machines_speed():
    assert lanes.scale(lanes.REFERENCE_SPEED_S) == 1.0
    assert lanes.scale(lanes.REFERENCE_SPEED_S * 1.8) == pytest.approx(1.8)
    assert lanes.scale(lanes.REFERENCE_SPEED_S * 1.2) == pytest.approx(1.2)


def test_budget_scale_is_bounded_both_ways():
    low, high = lanes.SCALE_BOUNDS
    assert lanes.scale(lanes.REFERENCE_SPEED_S / 10) == low
    assert lanes.scale(lanes.REFERENCE_SPEED_S * 10) == high


def test_speed_is_sampled_while_the_lane_runs(monkeypatch):
    monkeypatch.setattr(lanes.Speed, "EVERY_S", 0.01)
    with lanes.Speed() as speed:
        while len(speed.samples) < 3:
            time.sleep(0.01)
    assert len(speed.samples) >= 3 and all(s > 0 for s in speed.samples)
    assert min(speed.samples) <= speed.seconds() <= max(speed.samples)
