"""Benchmark harness for mbank: a deterministic bank generator and a runner (spec 07 §6).

Benchmarks are not tests: they never run inside pytest, never fail a build and never assert a
time. This package lives in the repository only; it is not part of the installed distribution.
"""
