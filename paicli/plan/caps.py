"""How much of a task's text travels to each reader, in characters: one place for every cap.

Every cut keeps the head and the tail around a marker (`paicli.tools.output.truncate_middle`), so a
result's conclusion, usually at its end, survives.
"""

from __future__ import annotations

DEPENDENCY_RESULT = 8_000  # one dependency's result in a dependent task's brief
# A direct action's output in a dependent's brief: as much as the tool itself returns (ToolContext's
# output_limit), so a file read directly arrives whole, as it would through read_file.
DEPENDENCY_RAW_RESULT = 16_000
CLOSING_RESULT = 3_000  # each task's result (or error) as the summarizer and the reviewer see it
RAW_RESULT_SHOWN = 400  # a direct action's raw output where results are summarized (dependents get it whole)
REPLAN_RESULT = 2_000  # one completed task's result as the replanner sees it (at most)
REPLAN_RESULTS_BUDGET = 24_000  # all completed results together for the replanner (equal shares)
REPLAN_ERROR = 1_500  # a failed task's error for the replanner
REPLAN_DESCRIPTION = 300  # a task's description in the replanner's list of what remains
REASK_EXCERPT = 16_000  # a rejected reply quoted back to the model when re-asking
ACTION_ERROR = 4_000  # a failed direct action's output kept in the task's error
