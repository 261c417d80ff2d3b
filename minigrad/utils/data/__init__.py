"""minigrad.utils.data: datasets, samplers and the DataLoader, as torch.utils.data.

    dataset = TensorDataset(features, labels)
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    for x, y in loader:      # x: (32, ...), y: (32,), the last batch maybe smaller
        ...

One concept per module: dataset.py (Dataset, IterableDataset, TensorDataset, StackDataset,
ConcatDataset, ChainDataset, Subset, random_split), sampler.py (the samplers),
collate.py (default_collate, default_convert), dataloader.py (DataLoader,
get_worker_info). Shuffling draws from minigrad's global generator (so
`minigrad.manual_seed` repeats it), or from the `generator=` given: a minigrad.Generator,
a NumPy Generator, or an int seed. Batches are built in the main process (num_workers is
accepted for compatibility; there are no worker processes).
"""

from minigrad.core.errors import missing_name as _missing_name
from minigrad.utils.data.collate import default_collate, default_convert
from minigrad.utils.data.dataloader import DataLoader, get_worker_info
from minigrad.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from minigrad.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)


def __getattr__(name: str) -> object:
    """PyTorch's names minigrad lacks (DistributedSampler, ...) say so, with the nearest."""
    if name.startswith("__"):
        raise AttributeError(f"module 'minigrad.utils.data' has no attribute {name!r}")
    raise _missing_name("torch.utils.data", name, __all__)


__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
