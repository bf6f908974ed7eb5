"""The pass kernel every driver runs: open the node, observe, apply, execute, redact."""
