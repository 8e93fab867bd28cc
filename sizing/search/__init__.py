"""The search for the cheapest configurations that serve a workload: the space, its price
floors, the offers and the Pareto set.
"""
