"""Differences between nested dicts."""

import copy


def _step(key):
    return f'["{key}"]' if "." in key else key


def _join(prefix, key):
    step = _step(key)
    if not prefix:
        return step
    return prefix + step if step.startswith("[") else f"{prefix}.{step}"


def _diff(old, new, prefix, keys, out):
    for key in sorted(set(old) | set(new)):
        path, here = _join(prefix, key), keys + [key]
        if key not in new:
            out.append(("remove", path, old[key], None, here))
        elif key not in old:
            out.append(("add", path, None, new[key], here))
        elif isinstance(old[key], dict) and isinstance(new[key], dict):
            _diff(old[key], new[key], path, here, out)
        elif old[key] != new[key]:
            out.append(("change", path, old[key], new[key], here))



def diff(old, new):
    found = []
    _diff(old, new, "", [], found)
    result = []
    for op, path, a, b, _ in sorted(found, key=lambda item: item[1]):
        result.append((op, path, a, b))
    return result


def _keys_of(path):
    keys, rest = [], path
    while rest:
        if rest.startswith('["'):
            end = rest.index('"]')
            keys.append(rest[2:end])
            rest = rest[end + 2:].removeprefix(".")
        else:
            head, dot, rest_ = rest.partition(".")
            bracket = head.find('["')
            if bracket > 0:
                keys.append(head[:bracket])
                rest = rest[bracket:]
                continue
            keys.append(head)
            rest = rest_
    return keys


def patch(old, changes):
    result = copy.deepcopy(old)
    for op, path, _, value in changes:
        *parents, last = _keys_of(path)
        node = result
        for key in parents:
            node = node.setdefault(key, {})
        if op == "remove":
            node.pop(last, None)
        else:
            node[last] = copy.deepcopy(value)
    return result
