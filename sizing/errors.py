"""Exceptions the sizing engine raises, each saying which input is wrong and why."""

from __future__ import annotations


class SizingError(ValueError):
    """Base class: an input that the engine cannot size, with a message for the user.

    ``field`` names the input (``"context_tokens"``, ``"config.num_key_value_heads"``)
    so that a form can show the message at that field and a CLI can name the flag.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConfigError(SizingError):
    """A model's ``config.json`` lacks a field the architecture needs, or holds a bad value."""


class InfeasibleError(SizingError):
    """No layout holds the model and one full-length conversation.

    ``binding`` says which constraint binds; ``fixes`` lists what would make it work
    (more GPUs, FP8 weights, FP8 cache, a shorter context).
    """

    def __init__(self, field: str, message: str, *, binding: str, fixes: tuple[str, ...]) -> None:
        super().__init__(field, message)
        self.binding = binding
        self.fixes = fixes
