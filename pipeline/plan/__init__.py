"""The plan stage: what the replay will send and when, computed up front.

`replay_plan` turns the sample into planned requests (offsets, prompts, max_tokens); `arrivals`
the arrival processes; `sessions` multi-turn conversations; `synthetic_prompts` prompts of a
logged length when the log has no text, fitted under the tokenizer `prompt_tokenizer` makes of
the spec; `accuracy` places labelled items in the plan
(accuracy mixed into the load).
"""
