"""Test doubles, fake servers and reference oracles. Tests and benchmarks import them; the wheel never ships them."""
