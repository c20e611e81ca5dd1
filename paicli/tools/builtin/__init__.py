"""The seven tools the model calls, one a module: each validates its arguments (a pydantic model) before
it runs and returns its errors to the model as a tool result. What they share lives one folder up."""
