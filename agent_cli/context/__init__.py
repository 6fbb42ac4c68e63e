"""Everything the model sees: history, prompts, project docs, skills, environment, tokens."""
