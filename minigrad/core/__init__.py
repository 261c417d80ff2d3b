"""The autodiff core: Variable, Function, the engine and the grad modes."""
