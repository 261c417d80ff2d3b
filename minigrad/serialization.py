"""save and load: Variables, state dicts and nested containers in NumPy's .npz format.

`minigrad.save(model.state_dict(), "model.pt")` then `model.load_state_dict(
minigrad.load("model.pt"))`, as in PyTorch. Unlike PyTorch's pickle, the file holds only
arrays and one JSON description of the structure, so loading a file never runs code.
"""

from __future__ import annotations

import json
import os
from typing import Any, BinaryIO

import numpy as np

from minigrad import devices
from minigrad.variable import Parameter, Variable

_MANIFEST = "__minigrad__"
_FORMAT = 1


def save(obj: Any, f: str | os.PathLike | BinaryIO) -> None:
    """Write `obj` to the path or binary file `f`.

    `obj` may be a Variable, a NumPy array, a number, a str, None, or dicts (str keys),
    lists and tuples of these, nested (a state dict, an optimizer's state dict, ...).
    """
    arrays: dict[str, np.ndarray] = {}
    tree = _describe(obj, arrays, "obj")
    manifest = json.dumps({"format": _FORMAT, "root": tree})
    arrays[_MANIFEST] = np.asarray(manifest)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as handle:  # np.savez(path) would append ".npz" to the name
            np.savez(handle, **arrays)
    else:
        np.savez(f, **arrays)


def load(f: str | os.PathLike | BinaryIO, map_location: Any = None, **kwargs: Any) -> Any:
    """Read what `save` wrote. `map_location` ("cpu"/"cuda") moves Variables there.

    PyTorch's other keywords (weights_only, mmap, ...) are accepted and ignored: a minigrad
    file never holds code, so it is always as safe as weights_only=True.
    """
    archive = _open_archive(f)
    with archive:
        if _MANIFEST not in archive.files:
            raise ValueError(
                f"{f!r} is an .npz file but not one minigrad.save wrote (no manifest); "
                f"read it with numpy.load instead."
            )
        manifest = json.loads(str(archive[_MANIFEST]))
        arrays = {name: archive[name] for name in archive.files if name != _MANIFEST}
    if manifest.get("format") != _FORMAT:
        raise ValueError(f"{f!r} has format {manifest.get('format')}; expected {_FORMAT}.")
    return _rebuild(manifest["root"], arrays, map_location)


def _open_archive(f: Any) -> Any:
    """NumPy's reader of the .npz file, or a ValueError saying what the file is not."""
    try:
        archive = np.load(f, allow_pickle=False)
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as error:
        raise ValueError(
            f"cannot load {f!r}: it is not a file written by minigrad.save ({error}). "
            f"PyTorch's own .pt files (pickles) cannot be read by minigrad."
        ) from None
    if not hasattr(archive, "files"):  # a plain .npy array, not an archive
        raise ValueError(
            f"cannot load {f!r}: it is a single .npy array, not a file written by "
            f"minigrad.save; read it with numpy.load instead."
        )
    return archive


def _describe(obj: Any, arrays: dict, key: str) -> dict:
    """The JSON description of obj; its arrays go into `arrays` under fresh keys."""
    if isinstance(obj, Variable):
        if obj.is_text:
            return {"kind": "text", "value": obj.data, "role": obj.role}
        data = obj.data.to_host() if hasattr(obj.data, "to_host") else obj.data
        arrays[key] = np.asarray(data)
        return {
            "kind": "variable",
            "key": key,
            "parameter": isinstance(obj, Parameter),
            "requires_grad": obj.requires_grad,
        }
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "biufc":
            raise TypeError(f"save: arrays must be numeric; got dtype {obj.dtype} at {key}.")
        arrays[key] = obj
        return {"kind": "array", "key": key}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return {"kind": "value", "value": obj}
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return {"kind": "value", "value": obj.item()}
    if isinstance(obj, dict):
        items = []
        for index, (name, value) in enumerate(obj.items()):
            if not isinstance(name, (str, int)):
                raise TypeError(
                    f"save: dict keys must be str or int; got {type(name).__name__} at {key}."
                )
            items.append([name, _describe(value, arrays, f"{key}.{index}")])
        return {"kind": "dict", "items": items}
    if isinstance(obj, (list, tuple)):
        items = [_describe(value, arrays, f"{key}.{i}") for i, value in enumerate(obj)]
        return {"kind": type(obj).__name__, "items": items}
    raise TypeError(
        f"save can write Variables, arrays, numbers, str, None and dicts/lists/tuples of "
        f"them; got {type(obj).__name__} at {key}. Save model.state_dict(), not the model."
    )


def _rebuild(tree: dict, arrays: dict, map_location: Any) -> Any:
    kind = tree["kind"]
    if kind == "variable":
        data = arrays[tree["key"]]
        if tree["parameter"]:
            variable = Parameter(data, requires_grad=tree["requires_grad"])
        else:
            variable = Variable(data, requires_grad=tree["requires_grad"])
        if map_location is not None:
            variable.data = devices.move(variable.data, devices.check_device(map_location))
        return variable
    if kind == "text":
        return Variable(tree["value"], role=tree["role"])
    if kind == "array":
        return arrays[tree["key"]]
    if kind == "value":
        return tree["value"]
    if kind == "dict":
        return {name: _rebuild(value, arrays, map_location) for name, value in tree["items"]}
    items = [_rebuild(value, arrays, map_location) for value in tree["items"]]
    return tuple(items) if kind == "tuple" else items
