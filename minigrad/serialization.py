"""save and load: Variables, state dicts and nested containers in NumPy's .npz format.

`minigrad.save(model.state_dict(), "model.pt")` then `model.load_state_dict(
minigrad.load("model.pt"))`, as in PyTorch. Unlike PyTorch's pickle, the file holds only
arrays and one JSON description of the structure, so loading a file never runs code.

A file load cannot read (truncated, empty, a damaged byte, a description that does not
match its arrays, or not a minigrad file at all) raises one error, LoadError; a path that
does not exist raises FileNotFoundError, as in PyTorch.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any, BinaryIO

import numpy as np

from minigrad import devices
from minigrad.core.variable import Parameter, Variable

_MANIFEST = "__minigrad__"
_FORMAT = 1


class LoadError(RuntimeError, ValueError):
    """minigrad.load could not read the file: it is damaged or was not written by
    minigrad.save. A RuntimeError, as PyTorch raises for a damaged file (and a ValueError,
    as minigrad raised before, so either `except` catches it)."""


def save(obj: Any, f: str | os.PathLike | BinaryIO) -> None:
    """Write `obj` to the path or binary file `f`.

    `obj` may be a Variable, a NumPy array, a number, a str, None, or dicts (str keys),
    lists and tuples of these, nested (a state dict, an optimizer's state dict, ...).
    """
    _check_target(f, "save")
    arrays: dict[str, np.ndarray] = {}
    tree = _describe(obj, arrays, "obj", set())
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
    _check_target(f, "load")
    device = None if map_location is None else devices.check_device(map_location)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as handle:  # a missing file: FileNotFoundError, as in PyTorch
            manifest, arrays = _read(handle, f)
    else:
        manifest, arrays = _read(f, f)
    if not isinstance(manifest, dict):
        raise LoadError(
            f"cannot load {f!r}: its description should be a JSON object; got "
            f"{type(manifest).__name__}. The file is damaged or was written by another program."
        )
    if manifest.get("format") != _FORMAT:
        raise LoadError(
            f"cannot load {f!r}: its description has format {manifest.get('format')!r}, "
            f"expected {_FORMAT}; the file is damaged or was written by another program."
        )
    return _rebuild(_field(manifest, "root", dict, "the top level"), arrays, device)


def _check_target(f: Any, caller: str) -> None:
    """A TypeError unless f is a path or a binary file object."""
    if isinstance(f, (str, os.PathLike)):
        return
    method = "write" if caller == "save" else "read"
    if not callable(getattr(f, method, None)) or isinstance(f, (bytes, bytearray)):
        raise TypeError(
            f"minigrad.{caller} needs a path (str or pathlib.Path) or a binary file object "
            f"with .{method}(); got {type(f).__name__}."
        )


def _read(handle: Any, name: Any) -> tuple[Any, dict[str, np.ndarray]]:
    """(the parsed JSON description, the arrays by key) from the open file, or LoadError."""
    try:
        archive = np.load(handle, allow_pickle=False)
        if not hasattr(archive, "files"):  # a plain .npy array, not an archive
            raise LoadError(
                f"cannot load {name!r}: it is a single .npy array, not a file written by "
                f"minigrad.save; read it with numpy.load instead."
            )
        with archive:
            if _MANIFEST not in archive.files:
                raise LoadError(
                    f"cannot load {name!r}: it is an .npz file but not one minigrad.save wrote "
                    f"(no manifest); read it with numpy.load instead."
                )
            manifest = json.loads(str(archive[_MANIFEST]))
            arrays = {key: archive[key] for key in archive.files if key != _MANIFEST}
    except LoadError:
        raise
    except Exception as error:  # noqa: BLE001 (any failure to parse the bytes: a bad file)
        # zipfile, NumPy and json each fail in their own way on damaged bytes (BadZipFile,
        # "Bad CRC-32", EOFError, JSONDecodeError, ...); the reader sees one error.
        raise LoadError(
            f"cannot load {name!r}: it is not a readable file written by minigrad.save "
            f"({type(error).__name__}: {error}). It may be truncated or damaged: save it "
            f"again. PyTorch's own .pt files (pickles) cannot be read by minigrad."
        ) from None
    return manifest, arrays


def _describe(obj: Any, arrays: dict, key: str, open_containers: set[int]) -> dict:
    """The JSON description of obj; its arrays go into `arrays` under fresh keys.
    `open_containers` holds the ids of the dicts, lists and tuples obj is inside of."""
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
    if not isinstance(obj, (dict, list, tuple)):
        raise TypeError(
            f"save can write Variables, arrays, numbers, str, None and dicts/lists/tuples of "
            f"them; got {type(obj).__name__} at {key}. Save model.state_dict(), not the "
            f"model."
        )
    if id(obj) in open_containers:
        raise ValueError(
            f"save: the {type(obj).__name__} at {key} contains itself (a cycle), which a file "
            f"cannot hold; save a copy without the cycle."
        )
    open_containers.add(id(obj))
    if isinstance(obj, dict):
        items = []
        for index, (name, value) in enumerate(obj.items()):
            if not isinstance(name, (str, int)):
                raise TypeError(
                    f"save: dict keys must be str or int; got {type(name).__name__} at {key}."
                )
            items.append([name, _describe(value, arrays, f"{key}.{index}", open_containers)])
        tree = {"kind": "dict", "items": items}
    else:
        items = [
            _describe(value, arrays, f"{key}.{index}", open_containers)
            for index, value in enumerate(obj)
        ]
        tree = {"kind": type(obj).__name__, "items": items}
    open_containers.discard(id(obj))
    return tree


def _field(tree: Any, name: str, kinds: type | tuple, where: str) -> Any:
    """tree[name], checked to be of `kinds`, or a LoadError (a damaged description)."""
    if not isinstance(tree, dict) or name not in tree or not isinstance(tree[name], kinds):
        raise LoadError(
            f"cannot load: the file's description is damaged at {where} (no valid {name!r} "
            f"entry; got {str(tree)[:60]}). The file was changed after minigrad.save wrote "
            f"it: save it again."
        )
    return tree[name]


def _array(tree: dict, arrays: dict, where: str) -> np.ndarray:
    """The numeric array a "variable" or "array" entry names."""
    key = _field(tree, "key", str, where)
    if key not in arrays or arrays[key].dtype.kind not in "biufc":
        raise LoadError(
            f"cannot load: the file's description names a numeric array {key!r} at {where} "
            f"that the file does not hold. The file is damaged: save it again."
        )
    return arrays[key]


def _pairs(items: list, where: str) -> Iterator[tuple[Any, Any]]:
    """The [name, value] pairs of a dict entry."""
    for item in items:
        if not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], (str, int)):
            raise LoadError(
                f"cannot load: the file's description is damaged at {where} (a dict entry "
                f"should be [name, value]; got {str(item)[:60]}). Save the file again."
            )
        yield item[0], item[1]


def _rebuild(tree: dict, arrays: dict, device: str | None, where: str = "obj") -> Any:
    """The object a description entry stands for; LoadError where it does not make sense."""
    kind = _field(tree, "kind", str, where)
    if kind == "variable":
        data = _array(tree, arrays, where)
        requires_grad = _field(tree, "requires_grad", bool, where)
        if requires_grad and data.dtype.kind not in "fc":
            raise LoadError(
                f"cannot load: the file's description says the {data.dtype} Variable at "
                f"{where} requires grad, which only floating-point ones can. The file is "
                f"damaged: save it again."
            )
        if _field(tree, "parameter", bool, where):
            variable = Parameter(data, requires_grad=requires_grad)
        else:
            variable = Variable(data, requires_grad=requires_grad)
        if device is not None:
            variable.data = devices.move(variable.data, device)
        return variable
    if kind == "text":
        role = _field(tree, "role", (str, type(None)), where)
        return Variable(_field(tree, "value", str, where), role=role)
    if kind == "array":
        return _array(tree, arrays, where)
    if kind == "value":
        return _field(tree, "value", (type(None), bool, int, float, str), where)
    if kind not in ("dict", "list", "tuple"):
        raise LoadError(
            f"cannot load: the file's description has an entry of unknown kind {kind!r} at "
            f"{where}. The file is damaged, or from a newer minigrad."
        )
    items = _field(tree, "items", list, where)
    if kind == "dict":
        return {
            name: _rebuild(value, arrays, device, f"{where}[{name!r}]")
            for name, value in _pairs(items, where)
        }
    values = [_rebuild(value, arrays, device, f"{where}[{i}]") for i, value in enumerate(items)]
    return tuple(values) if kind == "tuple" else values


__all__ = ["LoadError", "load", "save"]
