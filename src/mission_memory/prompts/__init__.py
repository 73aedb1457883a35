"""The prompt corpus the capture hook builds, and what it is read for (docs/design.md §8).

``corpus`` reads and forgets captured prompts; ``intents`` labels them for disambiguation;
``topics`` counts topic frequencies per week; ``switching`` measures cross-project switching;
``plots`` draws both as PNG files.
"""
