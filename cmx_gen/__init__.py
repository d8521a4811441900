"""cmx-gen: a PyTorch model in, a buildable Cortex-M firmware app out."""

__version__ = "0.1.0"
