"""The lowering steps, one module each; lowering.STEPS puts them in order."""
