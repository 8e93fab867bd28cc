"""Memory and tiers: the GPU KV budget, what each rank stores, the CPU-memory tier and its
DIMM layout, NVMe, and the engine-calibrated KV pool.
"""
