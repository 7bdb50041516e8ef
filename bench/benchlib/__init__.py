"""Shared code of the benchmark driver (bench/run) and its system runners."""
