"""cmx-gen's own int8 operators (`cmx::`) for what the cortex_m backend leaves in float, and the passes
that put them in the graph: bmm, LayerNorm, mean, transpose, the tables, the recurrent layers."""
