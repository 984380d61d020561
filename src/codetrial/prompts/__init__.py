"""Prompt templates live in files beside this module; `codetrial.prompts.messages`
renders them, and their hashes go in the manifest."""

from codetrial.prompts.messages import (
    INTERPRET_TEMPLATES,
    PART,
    PROMPT_PROFILES,
    SELECTION_TEMPLATES,
    TEMPLATES,
    WORKSPACE_TEMPLATES,
    first_messages,
    judge_messages,
    judged_by_definitions,
    prompt_profile_for,
    read_template,
    repair_messages,
    system_message,
    template_hashes,
    test_messages,
    workspace_messages,
    workspace_repair_messages,
    workspace_system,
)

__all__ = [
    "INTERPRET_TEMPLATES",
    "PART",
    "PROMPT_PROFILES",
    "SELECTION_TEMPLATES",
    "TEMPLATES",
    "WORKSPACE_TEMPLATES",
    "first_messages",
    "judge_messages",
    "judged_by_definitions",
    "prompt_profile_for",
    "read_template",
    "repair_messages",
    "system_message",
    "template_hashes",
    "test_messages",
    "workspace_messages",
    "workspace_repair_messages",
    "workspace_system",
]
