"""A model's geometry: its layers and KV-cache bytes read from ``config.json``, its
checkpoint's weight bytes and experts.
"""
