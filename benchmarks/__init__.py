"""Benchmarks run by ``make bench``; figures go to ``docs/benchmarks.md``."""
