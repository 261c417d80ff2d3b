"""ParameterList and ParameterDict: Parameters held in a list or a dict, registered so that
`model.parameters()` and `state_dict()` find them ("0", "1", ... or the keys as names).

A Variable that is not yet a Parameter is made one (it then requires grad), as PyTorch
does; other values (a str, None, a Module) are held too, but only Parameters are trained
and saved.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from minigrad.core.variable import Parameter, Variable
from minigrad.nn.container import _position
from minigrad.nn.module import Module


def _as_parameter(value: Any) -> Any:
    """A Variable becomes a Parameter (requires_grad=True); anything else is kept as is."""
    if isinstance(value, Variable) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _store(owner: Module, name: str, value: Any) -> None:
    """Hold `value` under `name`: a Parameter registered (in its old place when replacing
    one), a Module as a submodule, anything else in owner._objects."""
    value = _as_parameter(value)
    if name in owner._parameters and value is not None and not isinstance(value, Parameter):
        # As PyTorch's Module: a Parameter's place takes a Parameter or None.
        raise TypeError(
            f"cannot assign a {type(value).__name__} as parameter {name!r} of "
            f"{type(owner).__name__}: expected a Parameter (or Variable) or None."
        )
    if isinstance(value, Parameter):
        owner.register_parameter(name, value)
        owner._objects.pop(name, None)
    elif isinstance(value, Module):
        owner.add_module(name, value)
        owner._objects.pop(name, None)
    else:
        owner._parameters.pop(name, None)
        owner._modules.pop(name, None)
        owner._objects[name] = value


def _fetch(owner: Module, name: str) -> Any:
    """The value held under `name` (callers check that it is there)."""
    if name in owner._parameters:
        return owner._parameters[name]
    if name in owner._modules:
        return owner._modules[name]
    return owner._objects[name]


def _drop(owner: Module, name: str) -> None:
    for registry in (owner._parameters, owner._modules, owner._objects):
        registry.pop(name, None)


def _describe(value: Any) -> str:
    """One line of the repr: what the value is, and for a Variable its dtype and size."""
    if isinstance(value, Variable) and not value.is_text:
        size = "x".join(str(size) for size in value.shape)
        kind = "Parameter" if isinstance(value, Parameter) else "Variable"
        device = f" ({value.device})" if value.device.type == "cuda" else ""
        return f"{kind} containing: [minigrad.{value.dtype} of size {size}{device}]"
    return f"Object of type: {type(value).__name__}"


class ParameterList(Module):
    """A list of Parameters whose owner trains them: ParameterList([p0, p1, ...]).

    Indexed, iterated, appended to and extended as a list; the i-th is registered as "i".
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        object.__setattr__(self, "_objects", {})
        object.__setattr__(self, "_size", 0)
        if values is not None:
            self.extend(values)

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, index: int | slice) -> Any:
        """list[i] is a value; list[i:j] a ParameterList of those values (the same objects)."""
        if isinstance(index, slice):
            selected = ParameterList()
            for position in range(len(self))[index]:
                selected.append(self[position])
            return selected
        return _fetch(self, str(_position(index, len(self), "ParameterList")))

    def __setitem__(self, index: int, value: Any) -> None:
        _store(self, str(_position(index, len(self), "ParameterList")), value)

    def __iter__(self) -> Iterator[Any]:
        for position in range(len(self)):
            yield self[position]

    def __iadd__(self, values: Iterable[Any]) -> ParameterList:
        return self.extend(values)

    def append(self, value: Any) -> ParameterList:
        """Add a value at the end (a Variable becomes a Parameter); returns self."""
        position = len(self)
        object.__setattr__(self, "_size", position + 1)
        self[position] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Add each value at the end; returns self."""
        if not isinstance(values, Iterable) or isinstance(values, (Variable, str)):
            raise TypeError(
                f"ParameterList.extend should be called with an iterable, but got "
                f"{type(values).__name__}. Use append for a single Parameter."
            )
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"  ({index}): {_describe(value)}" for index, value in enumerate(self))


class ParameterDict(Module):
    """A dict of Parameters whose owner trains them: ParameterDict({"a": p, ...}).

    Looked up, iterated (over keys), updated and popped as a dict; each value is registered
    under its key. A plain dict given to the constructor or to update() is taken in sorted
    key order, as PyTorch does; an OrderedDict, a ParameterDict or pairs keep their order.
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        object.__setattr__(self, "_objects", {})
        object.__setattr__(self, "_keys", {})  # the keys in order (a dict used as a list)
        if parameters is not None:
            self.update(parameters)

    def _checked_key(self, key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError(
                f"Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}'). Use str keys."
            )
        return key

    def __getitem__(self, key: str) -> Any:
        if self._checked_key(key) not in self._keys:
            raise KeyError(f"ParameterDict has no key {key!r}; its keys are {list(self._keys)}.")
        return _fetch(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        key = self._checked_key(key)
        if key in self.__dict__:
            # An attribute of the dict itself (its training flag, say): PyTorch would
            # overwrite it, and the ParameterDict would stop working.
            raise KeyError(
                f"ParameterDict cannot hold the key {key!r}: it is an attribute of the "
                f"ParameterDict itself. Pick another key."
            )
        _store(self, key, value)  # first, so that a refused key is not left in _keys
        self._keys[key] = None

    def __delitem__(self, key: str) -> None:
        self[key]  # the KeyError listing the keys, when missing
        del self._keys[key]
        _drop(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def keys(self) -> Iterable[str]:
        return self._keys.keys()

    def values(self) -> Iterable[Any]:
        return [self[key] for key in self._keys]

    def items(self) -> Iterable[tuple[str, Any]]:
        return [(key, self[key]) for key in self._keys]

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def setdefault(self, key: str, default: Any = None) -> Any:
        """self[key], after setting it to default if it was not there."""
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, key: str) -> Any:
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last (key, value) pair."""
        if not self._keys:
            raise KeyError("popitem(): dictionary is empty")
        key = next(reversed(list(self._keys)))
        return key, self.pop(key)

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same values (not copies of them)."""
        return ParameterDict(OrderedDict(self.items()))

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        """A new ParameterDict with each key set to default."""
        return ParameterDict([(key, default) for key in keys])

    def update(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        """Add (or replace) values from a mapping or from (key, value) pairs."""
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs = list(parameters.items())
        elif isinstance(parameters, Mapping):
            pairs = sorted(parameters.items(), key=_first)  # PyTorch sorts a plain dict
        elif isinstance(parameters, Iterable) and not isinstance(parameters, (str, Variable)):
            pairs = list(parameters)
        else:
            raise TypeError(
                f"ParametersDict.update should be called with an iterable of key/value pairs, "
                f"but got {type(parameters).__name__}."
            )
        for index, pair in enumerate(pairs):
            if not isinstance(pair, Iterable) or isinstance(pair, (str, Variable)):
                raise TypeError(
                    f"ParameterDict update sequence element #{index} should be a (key, value) "
                    f"pair; is {type(pair).__name__}."
                )
            pair = tuple(pair)
            if len(pair) != 2:
                raise ValueError(
                    f"ParameterDict update sequence element #{index} has length {len(pair)}; "
                    f"2 is required."
                )
            self[pair[0]] = pair[1]

    def __or__(self, other: Mapping[str, Any]) -> ParameterDict:
        combined = self.copy()
        combined.update(other)
        return combined

    def __ror__(self, other: Mapping[str, Any]) -> ParameterDict:
        combined = ParameterDict(OrderedDict(other.items()))
        combined.update(self)
        return combined

    def __ior__(self, other: Mapping[str, Any]) -> ParameterDict:
        self.update(other)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"  ({key}): {_describe(value)}" for key, value in self.items())


def _first(pair: tuple) -> Any:
    return pair[0]
