"""PyTorch's tutorial "NLP From Scratch: Classifying Names with a Character-Level RNN",
run with `import minigrad as torch`.

The pattern is tests/test_pytorch_tutorials.py's (see tests/pytorch_example_harness.py):
the example is a function `example(torch)` that runs the tutorial's code as published,
with only the imports changed (`torch.nn`, `torch.nn.functional` used as attributes,
`from torch.utils.data import Dataset` as `Dataset = _from(torch, "utils.data",
"Dataset")`), and returns its values as NumPy arrays. `test_example_runs_with_minigrad`
runs it with minigrad and checks what the tutorial promises (the shapes it prints, the
loss falls, a confusion matrix whose rows are distributions); `test_example_matches_pytorch`
runs it with minigrad and with real PyTorch (skipped when PyTorch is not installed) and
compares: PyTorch's parameters are float32 and minigrad's float64, so the tolerance is a
float32 run's. `test_example_matches_pytorch_in_float64` runs PyTorch again with
`torch.set_default_dtype(torch.float64)` and compares to float64 precision.

Source: pytorch/tutorials intermediate_source/char_rnn_classification_tutorial.py, the
version that builds the model on nn.RNN (CharRNN: nn.RNN, then nn.Linear and
nn.LogSoftmax on the last hidden state), with `_` as the out-of-vocabulary character, a
NamesDataset over `data/names/*.txt`, random_split into 85% / 15%, minibatch training
with optim.SGD and nn.utils.clip_grad_norm_, and evaluate() filling a confusion matrix.

Changes, each said where it is made:
- The data: tests/data/names/ holds five small files of common given names, twenty per
  language, typed by hand (no download); the tutorial's files hold thousands of surnames
  in 18 languages. The tutorial reads `data/names` relative to the working directory,
  so the example runs in tests/.
- Random values: the model's parameters are overwritten right after it is built with
  NumPy values (`_same_parameters`); `random.shuffle` of the batches is seeded;
  random_split runs with a generator each library takes (PyTorch's
  `torch.Generator(device=device).manual_seed(2024)`; minigrad has no Generator objects,
  so its int seed) and its two index lists are then replaced by one NumPy permutation,
  so both libraries split alike.
- The loop is shortened: 3 epochs of batches of 16 instead of 27 epochs of 64 (85 names
  to train on make one batch of 64).

Left out, and why: matplotlib (the loss plot and the confusion matrix's figure: nothing is
shown; the matrix itself is computed and compared).
"""

# The tutorial is PyTorch's code as published: it shadows builtins (input, iter, io's open),
# imports inside the code (unsorted), calls nn.NLLLoss() in a default argument, leaves names
# unused (F, start) and uses `super(CharRNN, self)` and camelCase names. Kept as written.
# ruff: noqa: A001, A004, B007, B008, F841, I001, N802, UP008, UP020, UP029

from __future__ import annotations

import contextlib
import math
import os

import numpy as np
import pytest
from pytorch_example_harness import Examples, compare
from pytorch_example_harness import as_numpy as _np
from pytorch_example_harness import from_library as _from

import minigrad as torch

EXAMPLES = Examples()
example = EXAMPLES.example
HERE = os.path.dirname(os.path.abspath(__file__))


def _same_parameters(torch, model, seed):
    """Overwrite the model's parameters, in order, with NumPy values drawn as PyTorch draws
    them: uniform in [-1/sqrt(n), 1/sqrt(n)] with n = hidden_size for every tensor of the
    nn.RNN, n = in_features for the nn.Linear's weight and bias."""
    rng = np.random.default_rng(seed)
    bound = 1.0
    with torch.no_grad():
        for name, p in model.named_parameters():
            shape = tuple(p.shape)
            if name.startswith("rnn."):
                bound = 1.0 / math.sqrt(model.rnn.hidden_size)
            elif len(shape) >= 2:
                bound = 1.0 / math.sqrt(shape[1])
            p.copy_(torch.tensor(rng.uniform(-bound, bound, shape), dtype=p.dtype))


def _permutation(n, seed):
    """0, ..., n - 1 shuffled by NumPy: the split both libraries use."""
    return np.random.default_rng(seed).permutation(n).tolist()


@contextlib.contextmanager
def _in_tests_directory():
    """Run code that reads `data/names` where tests/data/names is."""
    here = os.getcwd()
    os.chdir(HERE)
    try:
        yield
    finally:
        os.chdir(here)


def _check_char_rnn(r):
    assert r["n_letters"] == 58
    np.testing.assert_array_equal(r["lineToTensor('Ahn').size()"], [3, 1, 58])
    assert r["the 'A' of 'Ahn' is at index 26"]
    assert r["len(alldata)"] == 100
    assert sorted(r["alldata.labels_uniq"]) == ["English", "French", "German", "Italian",
                                                  "Spanish"]  # fmt: skip
    assert r["len(train_set), len(test_set)"] == "85, 15"
    assert "(rnn): RNN(58, 128)" in r["print(rnn)"]
    assert r["output for 'Albert'"].shape == (1, 5)
    np.testing.assert_allclose(np.exp(r["output for 'Albert'"]).sum(), 1.0, rtol=1e-6)
    losses = r["all_losses"]
    assert losses.shape == (3,) and np.all(np.isfinite(losses))
    assert losses[-1] < losses[0], losses
    rows = r["confusion"].sum(axis=1)
    assert r["confusion"].shape == (5, 5)
    assert np.all(np.isclose(rows, 1.0) | np.isclose(rows, 0.0)), rows


# --------------------------------------------------------------------------------------
# intermediate_source/char_rnn_classification_tutorial.py, on tests/data/names.
@example(
    "char_rnn_classification_tutorial", rtol=2e-3, atol=2e-4, check=_check_char_rnn
)
def ex_char_rnn_classification(torch):
    results = {}
    with _in_tests_directory():
        # Preparing Torch
        # Check if CUDA is available
        device = torch.device('cpu')
        if torch.cuda.is_available():
            device = torch.device('cuda')

        torch.set_default_device(device)
        print(f"Using device = {torch.get_default_device()}")

        # Preparing the Data
        import string
        import unicodedata

        # We can use "_" to represent an out-of-vocabulary character, that is, any character we are not handling in our model  # noqa: E501
        allowed_characters = string.ascii_letters + " .,;'" + "_"
        n_letters = len(allowed_characters)
        results["n_letters"] = n_letters

        # Turn a Unicode string to plain ASCII, thanks to https://stackoverflow.com/a/518232/2809427
        def unicodeToAscii(s):
            return ''.join(
                c for c in unicodedata.normalize('NFD', s)
                if unicodedata.category(c) != 'Mn'
                and c in allowed_characters
            )

        print (f"converting 'Ślusàrski' to {unicodeToAscii('Ślusàrski')}")

        # Turning Names into Tensors
        # Find letter index from all_letters, e.g. "a" = 0
        def letterToIndex(letter):
            # return our out-of-vocabulary character if we encounter a letter unknown to our model
            if letter not in allowed_characters:
                return allowed_characters.find("_")
            else:
                return allowed_characters.find(letter)

        # Turn a line into a <line_length x 1 x n_letters>,
        # or an array of one-hot letter vectors
        def lineToTensor(line):
            tensor = torch.zeros(len(line), 1, n_letters)
            for li, letter in enumerate(line):
                tensor[li][0][letterToIndex(letter)] = 1
            return tensor

        print (f"The letter 'a' becomes {lineToTensor('a')}") #notice that the first position in the tensor = 1  # noqa: E501
        print (f"The name 'Ahn' becomes {lineToTensor('Ahn')}") #notice 'A' sets the 27th index to 1
        results["lineToTensor('Ahn').size()"] = list(lineToTensor('Ahn').size())
        results["the 'A' of 'Ahn' is at index 26"] = bool(lineToTensor('Ahn')[0][0][26] == 1)

        from io import open
        import glob
        import os
        import time

        Dataset = _from(torch, "utils.data", "Dataset")

        class NamesDataset(Dataset):

            def __init__(self, data_dir):
                self.data_dir = data_dir #for provenance of the dataset
                self.load_time = time.localtime #for provenance of the dataset
                labels_set = set() #set of all classes

                self.data = []
                self.data_tensors = []
                self.labels = []
                self.labels_tensors = []

                #read all the ``.txt`` files in the specified directory
                text_files = glob.glob(os.path.join(data_dir, '*.txt'))
                for filename in text_files:
                    label = os.path.splitext(os.path.basename(filename))[0]
                    labels_set.add(label)
                    lines = open(filename, encoding='utf-8').read().strip().split('\n')
                    for name in lines:
                        self.data.append(name)
                        self.data_tensors.append(lineToTensor(name))
                        self.labels.append(label)

                #Cache the tensor representation of the labels
                self.labels_uniq = list(labels_set)
                for idx in range(len(self.labels)):
                    temp_tensor = torch.tensor([self.labels_uniq.index(self.labels[idx])], dtype=torch.long)  # noqa: E501
                    self.labels_tensors.append(temp_tensor)

            def __len__(self):
                return len(self.data)

            def __getitem__(self, idx):
                data_item = self.data[idx]
                data_label = self.labels[idx]
                data_tensor = self.data_tensors[idx]
                label_tensor = self.labels_tensors[idx]

                return label_tensor, data_tensor, data_label, data_item

        alldata = NamesDataset("data/names")
        print(f"loaded {len(alldata)} items of data")
        print(f"example = {alldata[0]}")
        results["len(alldata)"] = len(alldata)
        results["alldata.labels_uniq"] = alldata.labels_uniq

        # (minigrad has no Generator objects: an int seed stands in for one)
        generator = (torch.Generator(device=device).manual_seed(2024)
                     if hasattr(torch, "Generator") else 2024)  # fmt: skip
        train_set, test_set = torch.utils.data.random_split(alldata, [.85, .15], generator=generator)  # noqa: E501
        # (the same split in both libraries: one NumPy permutation)
        order = _permutation(len(alldata), seed=2024)
        train_set.indices, test_set.indices = order[:len(train_set)], order[len(train_set):]

        print(f"train examples = {len(train_set)}, validation examples = {len(test_set)}")
        results["len(train_set), len(test_set)"] = f"{len(train_set)}, {len(test_set)}"

        # Creating the Network
        nn = torch.nn
        F = torch.nn.functional

        class CharRNN(nn.Module):
            def __init__(self, input_size, hidden_size, output_size):
                super(CharRNN, self).__init__()

                self.rnn = nn.RNN(input_size, hidden_size)
                self.h2o = nn.Linear(hidden_size, output_size)
                self.softmax = nn.LogSoftmax(dim=1)

            def forward(self, line_tensor):
                rnn_out, hidden = self.rnn(line_tensor)
                output = self.h2o(hidden[0])
                output = self.softmax(output)

                return output

        n_hidden = 128
        rnn = CharRNN(n_letters, n_hidden, len(alldata.labels_uniq))
        _same_parameters(torch, rnn, 2024)  # (the same start in both libraries)
        print(rnn)
        results["print(rnn)"] = repr(rnn)

        def label_from_output(output, output_labels):
            top_n, top_i = output.topk(1)
            label_i = top_i[0].item()
            return output_labels[label_i], label_i

        input = lineToTensor('Albert')
        output = rnn(input) #this is equivalent to ``output = rnn.forward(input)``
        print(output)
        print(label_from_output(output, alldata.labels_uniq))
        results["output for 'Albert'"] = _np(output)
        results["label for 'Albert'"] = label_from_output(output, alldata.labels_uniq)[0]

        # Training the Network
        import random
        import numpy as np

        def train(rnn, training_data, n_epoch = 10, n_batch_size = 64, report_every = 50, learning_rate = 0.2, criterion = nn.NLLLoss()):  # noqa: E501
            """
            Learn on a batch of training_data for a specified number of iterations and reporting thresholds
            """  # noqa: E501
            # Keep track of losses for plotting
            current_loss = 0
            all_losses = []
            rnn.train()
            optimizer = torch.optim.SGD(rnn.parameters(), lr=learning_rate)

            start = time.time()
            print(f"training on data set with n = {len(training_data)}")

            for iter in range(1, n_epoch + 1):
                rnn.zero_grad() # clear the gradients

                # create some minibatches
                # we cannot use dataloaders because each of our names is a different length
                batches = list(range(len(training_data)))
                random.shuffle(batches)
                batches = np.array_split(batches, len(batches) //n_batch_size )

                for idx, batch in enumerate(batches):
                    batch_loss = 0
                    for i in batch: #for each example in this batch
                        (label_tensor, text_tensor, label, text) = training_data[i]
                        output = rnn.forward(text_tensor)
                        loss = criterion(output, label_tensor)
                        batch_loss += loss

                    # optimize parameters
                    batch_loss.backward()
                    nn.utils.clip_grad_norm_(rnn.parameters(), 3)
                    optimizer.step()
                    optimizer.zero_grad()

                    current_loss += batch_loss.item() / len(batch)

                all_losses.append(current_loss / len(batches) )
                if iter % report_every == 0:
                    print(f"{iter} ({iter / n_epoch:.0%}): \t average batch loss = {all_losses[-1]}")  # noqa: E501
                current_loss = 0

            return all_losses

        random.seed(2024)  # (the same shuffles in both libraries)
        start = time.time()
        # (3 epochs of batches of 16 instead of n_epoch=27 with the default batches of 64)
        all_losses = train(rnn, train_set, n_epoch=3, n_batch_size=16, learning_rate=0.15, report_every=1)  # noqa: E501
        end = time.time()
        print(f"training took {end-start}s")
        results["all_losses"] = np.array(all_losses)
        results["rnn.weight_hh_l0 after training"] = _np(rnn.rnn.weight_hh_l0)
        results["h2o.bias after training"] = _np(rnn.h2o.bias)

        # Evaluating the Results (the figure left out)
        def evaluate(rnn, testing_data, classes):
            confusion = torch.zeros(len(classes), len(classes))

            rnn.eval() #set to eval mode
            with torch.no_grad(): # do not record the gradients during eval phase
                for i in range(len(testing_data)):
                    (label_tensor, text_tensor, label, text) = testing_data[i]
                    output = rnn(text_tensor)
                    guess, guess_i = label_from_output(output, classes)
                    label_i = classes.index(label)
                    confusion[label_i][guess_i] += 1

            # Normalize by dividing every row by its sum
            for i in range(len(classes)):
                denom = confusion[i].sum()
                if denom > 0:
                    confusion[i] = confusion[i] / denom

            return confusion  # (instead of the figure drawn from confusion.cpu().numpy())

        confusion = evaluate(rnn, test_set, classes=alldata.labels_uniq)
        results["confusion"] = confusion.cpu().numpy()
    return results


# --------------------------------------------------------------------------------------
# The tests.


(
    test_every_example_checks_something,
    test_example_runs_with_minigrad,
    test_example_matches_pytorch,
) = EXAMPLES.tests(torch)


@pytest.mark.parametrize("name", EXAMPLES.params())
def test_example_matches_pytorch_in_float64(name, real_torch):
    """The same comparison with PyTorch computing in float64 (set_default_dtype), as
    minigrad does: equal to float64 precision."""
    fn = EXAMPLES[name][0]
    default = real_torch.get_default_dtype()
    real_torch.set_default_dtype(real_torch.float64)
    try:
        expected = fn(real_torch)
    finally:
        real_torch.set_default_dtype(default)
    compare(fn(torch), expected, rtol=1e-9, atol=1e-11)


def test_the_names_are_the_ones_shipped():
    """Five languages of twenty common given names each, read as the tutorial reads them."""
    folder = os.path.join(HERE, "data", "names")
    files = sorted(name for name in os.listdir(folder) if name.endswith(".txt"))
    assert files == ["English.txt", "French.txt", "German.txt", "Italian.txt", "Spanish.txt"]
    for name in files:
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            lines = handle.read().strip().split("\n")
        assert len(lines) == len(set(lines)) == 20, name
