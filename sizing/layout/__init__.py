"""How GPUs form engine instances: tensor, pipeline and expert parallelism per replica, and
more than one node behind a router.
"""
