"""The cycle estimate (`cmx-gen run --cycles`): what QEMU ran, counted by cmx-gen's TCG plugin
(plugin.py), priced per instruction with the core's timing table (timing.py) over the image's
disassembly (listing.py), added up per region and segment (estimate.py)."""
