"""Plan mode: model, DAG, parser, planner, scheduler, executor, session, review, summary, store, outcome.

May import: paicli.agent and everything below it (policy, tools, llm, events, errors). Never app, ui or
headless.
"""
