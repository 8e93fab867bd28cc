"""The bill of materials of a plan: line items without prices, the shared storage, and the
check of an edited bill.
"""
