"""cmx-gen's CMSIS-NN backend, ahead of time: partitioner, plan format, preprocess and the memory schedule."""
