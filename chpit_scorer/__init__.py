"""chpit_scorer: the deterministic CH-PiT grounding scorer (spec S1-S8)."""
