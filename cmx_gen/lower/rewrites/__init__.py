"""Graph rewrites, each exact: layers the target's kernels get wrong or do not take, rewritten into
equivalents they run (before quantization, or on the int8 graph after upstream's passes)."""
