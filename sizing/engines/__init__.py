"""Engine configuration rendered from a plan: one module per serving engine.

Each engine counts its offload buffer in its own unit and scope (GiB or GB, per worker
or per instance); see ``docs/engines.md`` and each module's docstring for the source.
"""
