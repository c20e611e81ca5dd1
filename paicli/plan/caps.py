"""How much of a task's text travels to each reader, in characters: one place for every cap.

Every cut keeps the head and the tail around a marker (`paicli.tools.output.truncate_middle`), so a
result's conclusion, usually at its end, survives.
"""

from __future__ import annotations

DEPENDENCY_RESULT = 8_000  # one dependency's result in a dependent task's brief
CLOSING_RESULT = 3_000  # each task's result (or error) as the summarizer and the reviewer see it
RAW_RESULT_SHOWN = 800  # a direct action's raw tool output, wherever results are summarized
REPLAN_RESULT = 2_000  # one completed task's result as the replanner sees it (at most)
REPLAN_RESULTS_BUDGET = 24_000  # all completed results together for the replanner (equal shares)
REPLAN_ERROR = 1_500  # a failed task's error for the replanner
REPLAN_DESCRIPTION = 300  # a task's description in the replanner's list of what remains
REASK_EXCERPT = 16_000  # a rejected reply quoted back to the model when re-asking
ACTION_ERROR = 4_000  # a failed direct action's output kept in the task's error
