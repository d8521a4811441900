"""Bit-exact host models of the kernels a program runs, and what is computed with them: the reference
outputs and the per-layer error."""
