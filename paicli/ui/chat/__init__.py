"""What a turn looks like on the terminal: streamed Markdown, tool lines with their previews and diffs, a
running command's live tail, the thinking of a reasoning model, the transcript kept for `/transcript`.
Renders events; asks nothing. The bottom of the front end: imports no other folder of paicli/ui."""
