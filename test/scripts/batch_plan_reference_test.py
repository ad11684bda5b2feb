#!/usr/bin/env python3
"""The batch plans pinned in test/data/batching_test.cpp, reproduced by the
independent Python implementation in test/reference/batch_plan_reference.py:
together the two tests show that the C++ plans are the documented algorithm
and not an accident of one standard library."""
import sys

from mini_runner import run_tests  # puts test/reference on sys.path
from batch_plan_reference import MT19937_64, plan_batches  # noqa: E402

# The synthetic split of batching_test.cpp: lengths 3 + (i * 7919) % 37.
LENGTHS = [3 + (i * 7919) % 37 for i in range(10)]


def test_mt19937_64_matches_the_standard():
    # [rand.predef]: the 10000th output of a default-constructed mt19937_64.
    rng = MT19937_64()
    for _ in range(9999):
        rng()
    assert rng() == 9981545732273789042


def test_plain_plan_matches_the_cpp_one():
    assert plan_batches(LENGTHS, 4, seed=7, pass_=2) == [[7, 4, 9, 0], [6, 8, 5, 3], [1, 2]]


def test_bucketed_plan_matches_the_cpp_one():
    assert plan_batches(LENGTHS, 4, seed=7, pass_=2, bucket_pool_batches=2) == [[0, 3, 4, 5], [6, 7, 8, 9], [1, 2]]


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
