"""PyTorch's name for minigrad.autodiff.graph (`torch.autograd.graph.saved_tensors_hooks`)."""

from minigrad.autodiff.graph import (
    OutputInfo,
    SavedValue,
    add_step_observer,
    input_variable,
    number_of_outputs,
    output,
    output_info,
    output_nr,
    remove_step_observer,
    saved_tensors_hooks,
    saved_values,
)

__all__ = [
    "OutputInfo",
    "SavedValue",
    "add_step_observer",
    "input_variable",
    "number_of_outputs",
    "output",
    "output_info",
    "output_nr",
    "remove_step_observer",
    "saved_tensors_hooks",
    "saved_values",
]
