"""An arithmetic evaluator: to be written."""
