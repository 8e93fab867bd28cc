"""A local stand-in for the Hugging Face Hub that serves recorded responses."""
