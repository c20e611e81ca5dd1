"""Ordering items by their dependencies."""

import heapq


class CycleError(ValueError):
    def __init__(self, cycle):
        super().__init__("cycle: " + " -> ".join(cycle))
        self.cycle = cycle


def _find_cycle(deps):
    state = {}

    def visit(node, path):
        state[node] = 1
        for dep in sorted(deps.get(node, ())):
            if state.get(dep) == 1:
                return path[path.index(dep):] + [dep]
            if dep not in state:
                found = visit(dep, path + [dep])
                if found:
                    return found
        state[node] = 2
        return None

    for node in sorted(deps):
        if node not in state:
            found = visit(node, [node])
            if found:
                return found
    return None


def order(deps):
    items = set(deps) | {d for ds in deps.values() for d in ds}
    waiting = {item: set(deps.get(item, ())) for item in items}
    users = {item: set() for item in items}
    for item, ds in waiting.items():
        for d in ds:
            users[d].add(item)
    ready = [item for item, ds in waiting.items() if not ds]
    heapq.heapify(ready)
    result = []
    while ready:
        item = heapq.heappop(ready)
        result.append(item)
        for user in users[item]:
            waiting[user].discard(item)
            if not waiting[user]:
                heapq.heappush(ready, user)
    if len(result) < len(items):
        raise CycleError(_find_cycle(deps))
    return result
