"""Hardware as the engine knows it: the bundled GPU, platform, DIMM and NVMe
specifications, and the chassis a node is built in.
"""
