"""The customer's traffic: turns, gaps between them, the busy hour, and the hit rates of
returning users per tier.
"""
