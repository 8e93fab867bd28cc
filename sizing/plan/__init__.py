"""The plan: the layout chosen for the GPUs, the memory it leaves, the plan under traffic,
composed by the orchestrator.
"""
