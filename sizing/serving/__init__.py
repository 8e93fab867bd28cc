"""One workload under load: service times, queueing, TTFT p95 and TPOT, the replicas the
load needs, and what the offload tier buys.
"""
