"""minigrad.utils.data: TensorDataset, DataLoader (batching, shuffling, drop_last, len,
collation), random_split, and a PyTorch-tutorial training loop run with
`import minigrad as torch`."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
import minigrad.utils.data  # noqa: F401  (makes minigrad.utils reachable as an attribute)
from minigrad import Variable
from minigrad.utils.data import (
    DataLoader,
    Dataset,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)

FEATURES = mg.tensor(np.arange(20.0).reshape(10, 2))
LABELS = mg.tensor(np.arange(10))


def dataset() -> TensorDataset:
    return TensorDataset(FEATURES, LABELS)


# =========================================================================== TensorDataset


def test_tensor_dataset_items_and_length():
    data = dataset()
    assert len(data) == 10
    x, y = data[3]
    np.testing.assert_array_equal(x.data, [6.0, 7.0])
    assert y.item() == 3


def test_tensor_dataset_length_mismatch_names_the_sizes():
    with pytest.raises(ValueError, match=r"Size mismatch between tensors.*\[10, 9\]"):
        TensorDataset(FEATURES, LABELS[:9])
    with pytest.raises(ValueError, match="at least one"):
        TensorDataset()
    with pytest.raises(TypeError, match="argument 1 is"):
        TensorDataset(FEATURES, np.arange(10))


# =========================================================================== DataLoader


def test_batches_in_order_with_a_smaller_last_batch():
    loader = DataLoader(dataset(), batch_size=4)
    batches = list(loader)
    assert len(loader) == len(batches) == 3
    assert [len(y) for _, y in batches] == [4, 4, 2]
    x, y = batches[0]
    assert isinstance(x, Variable) and x.shape == (4, 2) and y.dtype == np.int64
    np.testing.assert_array_equal(np.concatenate([y.data for _, y in batches]), np.arange(10))


def test_drop_last_and_default_batch_size():
    loader = DataLoader(dataset(), batch_size=4, drop_last=True)
    assert len(loader) == 2 and [len(y) for _, y in loader] == [4, 4]
    single = DataLoader(dataset())
    assert len(single) == 10 and next(iter(single))[0].shape == (1, 2)


def test_shuffle_is_a_permutation_repeated_by_manual_seed_and_new_each_epoch():
    loader = DataLoader(dataset(), batch_size=3, shuffle=True)

    def epoch():
        return np.concatenate([y.data for _, y in loader])

    mg.manual_seed(0)
    first, second = epoch(), epoch()
    mg.manual_seed(0)
    np.testing.assert_array_equal(epoch(), first)
    np.testing.assert_array_equal(np.sort(first), np.arange(10))
    assert not np.array_equal(first, second)
    assert not np.array_equal(first, np.arange(10))


@pytest.mark.parametrize("generator", [7, "numpy"], ids=["int-seed", "numpy-generator"])
def test_shuffle_with_its_own_generator_ignores_the_global_one(generator):
    def make():
        rng = np.random.default_rng(7) if generator == "numpy" else generator
        return DataLoader(dataset(), batch_size=5, shuffle=True, generator=rng)

    mg.manual_seed(1)
    first = [y.data.tolist() for _, y in make()]
    mg.manual_seed(2)
    assert [y.data.tolist() for _, y in make()] == first


def test_rows_of_features_and_labels_stay_together():
    mg.manual_seed(3)
    for x, y in DataLoader(dataset(), batch_size=4, shuffle=True):
        np.testing.assert_array_equal(x.data[:, 0], 2 * y.data)


def test_custom_dataset_and_collation():
    class Squares(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, index):
            return {"x": np.array([index, index**2], dtype=np.float64), "n": index, "name": "s"}

    batch = next(iter(DataLoader(Squares(), batch_size=3)))
    np.testing.assert_array_equal(batch["x"].data, [[0, 0], [1, 1], [2, 4]])
    assert batch["n"].dtype == np.int64 and batch["name"] == ["s", "s", "s"]
    summed = DataLoader(Squares(), batch_size=2, collate_fn=lambda items: len(items))
    assert list(summed) == [2, 2, 1]


def test_default_collate_matches_torch():
    torch = pytest.importorskip("torch")
    samples = [(np.array([1.0, 2.0]), 3, 0.5), (np.array([4.0, 5.0]), 6, 1.5)]
    mine = default_collate([(mg.tensor(a), n, f) for a, n, f in samples])
    theirs = torch.utils.data.default_collate([(torch.tensor(a), n, f) for a, n, f in samples])
    assert type(mine) is type(theirs) is list
    for a, b in zip(mine, theirs):
        np.testing.assert_array_equal(a.data, b.numpy())
        assert np.dtype(a.dtype) == np.dtype(str(b.dtype).replace("torch.", ""))


def test_batches_equal_torchs_for_the_same_order():
    torch = pytest.importorskip("torch")
    mine = list(DataLoader(dataset(), batch_size=4, drop_last=True))
    theirs = list(
        torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(torch.tensor(FEATURES.data), torch.tensor(LABELS.data)),
            batch_size=4,
            drop_last=True,
        )
    )
    assert len(mine) == len(theirs)
    for (x, y), (xt, yt) in zip(mine, theirs):
        np.testing.assert_array_equal(x.data, xt.numpy())
        np.testing.assert_array_equal(y.data, yt.numpy())


def test_batch_size_none_yields_samples_and_samplers_choose_the_order():
    samples = list(DataLoader(dataset(), batch_size=None))
    assert len(samples) == 10 and samples[2][1].item() == 2
    by_sampler = DataLoader(dataset(), batch_size=2, sampler=[9, 8, 7])
    assert [y.data.tolist() for _, y in by_sampler] == [[9, 8], [7]] and len(by_sampler) == 2
    by_batches = DataLoader(dataset(), batch_sampler=[[0, 5], [1]])
    assert [y.data.tolist() for _, y in by_batches] == [[0, 5], [1]] and len(by_batches) == 2


@pytest.mark.parametrize(
    ("kwargs", "error", "phrase"),
    [
        ({"batch_size": 0}, ValueError, "positive int"),
        ({"shuffle": True, "sampler": [0]}, ValueError, "mutually exclusive with shuffle"),
        ({"batch_sampler": [[0]], "batch_size": 2}, ValueError, "batch_sampler option"),
        ({"shuffle": True, "generator": "seed"}, TypeError, "numpy.random.Generator"),
        ({"num_workers": -1}, ValueError, "num_workers"),
    ],
)
def test_dataloader_errors(kwargs, error, phrase):
    with pytest.raises(error, match=phrase):
        DataLoader(dataset(), **kwargs)


def test_dataloader_rejects_a_non_dataset():
    with pytest.raises(TypeError, match="map-style dataset"):
        DataLoader(42)


# =========================================================================== random_split


def test_random_split_by_counts_and_fractions():
    mg.manual_seed(0)
    train, test = random_split(dataset(), [7, 3])
    assert isinstance(train, Subset) and (len(train), len(test)) == (7, 3)
    assert sorted(train.indices + test.indices) == list(range(10))
    parts = random_split(dataset(), [0.5, 0.3, 0.2], generator=1)
    assert [len(p) for p in parts] == [5, 3, 2]
    again = random_split(dataset(), [0.5, 0.3, 0.2], generator=1)
    assert [p.indices for p in parts] == [p.indices for p in again]
    x, y = next(iter(DataLoader(train, batch_size=7)))
    np.testing.assert_array_equal(y.data, train.indices)
    with pytest.raises(ValueError, match=r"Sum of input lengths \(9\)"):
        random_split(dataset(), [5, 4])


# =========================================================================== a tutorial loop
# Written as PyTorch's tutorials write it; it runs unchanged after `import minigrad as torch`.


def test_tutorial_training_loop_lowers_the_loss():
    import minigrad as torch
    from minigrad import nn

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    points = rng.uniform(-1, 1, size=(256, 2))
    classes = (np.hypot(points[:, 0], points[:, 1]) > 0.6).astype(np.int64)
    X = torch.tensor(points, dtype=torch.float32)
    y = torch.tensor(classes)

    train_data = torch.utils.data.TensorDataset(X, y)
    train_loader = torch.utils.data.DataLoader(train_data, batch_size=32, shuffle=True)

    model = nn.Sequential(
        nn.Linear(2, 32),
        nn.ReLU(),
        nn.Dropout(0.1),
        nn.Linear(32, 2),
    )
    model.to(torch.float32)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.05)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)

    def evaluate():
        model.eval()
        with torch.no_grad():
            loss = loss_fn(model(X), y).item()
        model.train()
        return loss

    first = evaluate()
    logged = []
    for _epoch in range(10):
        for batch, (inputs, targets) in enumerate(train_loader):
            pred = model(inputs)
            loss = loss_fn(pred, targets)

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            if batch % 4 == 0:
                logged.append(loss.item())
        scheduler.step()

    final = evaluate()
    assert batch == len(train_loader) - 1 == 7 and len(logged) == 20
    assert pred.dtype == np.float32
    assert final < 0.5 * first
    assert scheduler.get_last_lr() == [0.02 * 0.25]
    model.eval()
    with torch.no_grad():
        accuracy = (model(X).data.argmax(1) == classes).mean()
    assert accuracy > 0.9
