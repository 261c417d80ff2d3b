"""Andrej Karpathy's "Building makemore Part 4: Becoming a Backprop Ninja" (the
nn-zero-to-hero lectures) run with `import minigrad as torch`: the manual backward pass
through every intermediate of a character-level MLP, checked against autograd.

Source: github.com/karpathy/nn-zero-to-hero, lectures/makemore/makemore_part4_backprop.ipynb
(commit 73c3fcc of 2024-02-20; the notebook there has the exercises solved, so the manual
backward is Karpathy's own). Its code cells are kept below in `CELLS`, keyed by
their position in the notebook, as written there; each runs with `exec` in one namespace,
in the notebook's order, as a Jupyter kernel would (a cell ending in an expression gives
its value, as Jupyter shows it). What runs:

- cells 3-5: the words, the vocabulary, the dataset (block_size 3, an 80/10/10 split);
- cell 7: `cmp(s, dt, t)`, which prints whether a manual gradient `dt` equals `t.grad`
  exactly (`torch.all(dt == t.grad)`), approximately (`torch.allclose`), and the largest
  difference. The tests read what it prints;
- cells 8-10: the parameters (drawn with `torch.Generator().manual_seed` and
  `generator=g`), a minibatch, the forward pass "chunkated into smaller steps" with
  `retain_grad()` on every intermediate, and `loss.backward()`;
- cell 11, exercise 1: the backward pass by hand through all of them, dlogprobs to dC;
- cells 12-17, exercise 2: F.cross_entropy, and its backward in one go from F.softmax;
- cells 19-21, exercise 3: the batchnorm forward and backward, each in one expression;
- cells 22-23, exercise 4: training with the manual backward under `torch.no_grad()`;
  cells 24, 25 and 27: the batchnorm calibration, the train/val losses and sampling.

What changed, and only this:
- The import cell: `import minigrad as torch` and `import minigrad.nn.functional as F`
  (`import torch` for the PyTorch runs); matplotlib is not imported and the cell that
  draws (18) is left out, as are the cells of comments only (1, 6, 26) or empty (28).
- The data: cell 3 reads `names.txt` from the working directory; the tests write one in a
  temporary directory, the 100 given names of tests/data/names/*.txt in lower case (as
  makemore's names.txt is), instead of its 32,033 names. No download.
- Trailing spaces at the ends of lines are dropped.
- Exercise 4 runs 20 steps (`max_steps = 20`, not 200000), and, for the check of its
  first step, once in the way the notebook says to check it: `loss.backward()`
  uncommented ("use this for correctness comparisons"), the loop not under
  `torch.no_grad()` (that is for "once your backward pass is written"; here
  `torch.enable_grad()` takes its place), then cell 23's commented-out `cmp` loop. Each
  edit is made by `_edited`, which fails if the line it changes is not there.

The comparisons: in each library (minigrad; PyTorch where installed, through conftest's
`real_torch`), every `cmp` line of exercises 1-4 must say approximately equal, with a
maxdiff under 1e-6 (b1, whose gradient is 0 but for rounding, the maxdiff only), and the
exercise-1 lines down to b2 (the cross entropy and the second layer, which the notebook
writes to be bit exact) exactly equal; exercise 2's loss equals the chunked one, exercise
3's batchnorm the chunked one, exercise 4's loss falls over its 20 steps, the split losses
are printed and the 20 samples are words of the vocabulary. `test_gradients_match_pytorch`
runs exercises 1-3 in both libraries from the same values (PyTorch's parameters and batch
copied into minigrad right after cells 8 and 9), in float32 and in float64 (PyTorch's
default dtype is float32, minigrad's float64; the copies give minigrad the dtype compared,
and PyTorch runs under `torch.set_default_dtype` for float64), and compares every manual
gradient and autograd's. The notebook's code does not lean on float32: minigrad runs it in
float64, its default, where every exercise-1 line is bit exact (in float32 PyTorch, only
those down to b2 are).

The notebook's own idioms run as written: `torch.Generator().manual_seed(...)` with
`generator=g`, `counts.sum(1, keepdims=True)`, and `p.data += -lr * grad` (the array's
numbers updated in place, nothing recorded, as PyTorch's .data is).
"""

# The notebook's lines are up to 136 columns long; they are kept as written.
# ruff: noqa: E501

from __future__ import annotations

import ast
import contextlib
import io
import linecache
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

NOTEBOOK = "karpathy/nn-zero-to-hero lectures/makemore/makemore_part4_backprop.ipynb"
NAMES = Path(__file__).parent / "data" / "names"

# The notebook's cell 2 (`import torch`, `import torch.nn.functional as F`, matplotlib),
# with the library each test runs.
IMPORTS = {
    "minigrad": "import minigrad as torch\nimport minigrad.nn.functional as F\n",
    "torch": "import torch\nimport torch.nn.functional as F\n",
}

# The notebook's code cells, by their index in the notebook, as written there.
CELLS = {
    3: """\
# read in all the words
words = open('names.txt', 'r').read().splitlines()
print(len(words))
print(max(len(w) for w in words))
print(words[:8])
""",
    4: """\
# build the vocabulary of characters and mappings to/from integers
chars = sorted(list(set(''.join(words))))
stoi = {s:i+1 for i,s in enumerate(chars)}
stoi['.'] = 0
itos = {i:s for s,i in stoi.items()}
vocab_size = len(itos)
print(itos)
print(vocab_size)
""",
    5: """\
# build the dataset
block_size = 3 # context length: how many characters do we take to predict the next one?

def build_dataset(words):
  X, Y = [], []

  for w in words:
    context = [0] * block_size
    for ch in w + '.':
      ix = stoi[ch]
      X.append(context)
      Y.append(ix)
      context = context[1:] + [ix] # crop and append

  X = torch.tensor(X)
  Y = torch.tensor(Y)
  print(X.shape, Y.shape)
  return X, Y

import random
random.seed(42)
random.shuffle(words)
n1 = int(0.8*len(words))
n2 = int(0.9*len(words))

Xtr,  Ytr  = build_dataset(words[:n1])     # 80%
Xdev, Ydev = build_dataset(words[n1:n2])   # 10%
Xte,  Yte  = build_dataset(words[n2:])     # 10%
""",
    7: """\
# utility function we will use later when comparing manual gradients to PyTorch gradients
def cmp(s, dt, t):
  ex = torch.all(dt == t.grad).item()
  app = torch.allclose(dt, t.grad)
  maxdiff = (dt - t.grad).abs().max().item()
  print(f'{s:15s} | exact: {str(ex):5s} | approximate: {str(app):5s} | maxdiff: {maxdiff}')
""",
    8: """\
n_embd = 10 # the dimensionality of the character embedding vectors
n_hidden = 64 # the number of neurons in the hidden layer of the MLP

g = torch.Generator().manual_seed(2147483647) # for reproducibility
C  = torch.randn((vocab_size, n_embd),            generator=g)
# Layer 1
W1 = torch.randn((n_embd * block_size, n_hidden), generator=g) * (5/3)/((n_embd * block_size)**0.5)
b1 = torch.randn(n_hidden,                        generator=g) * 0.1 # using b1 just for fun, it's useless because of BN
# Layer 2
W2 = torch.randn((n_hidden, vocab_size),          generator=g) * 0.1
b2 = torch.randn(vocab_size,                      generator=g) * 0.1
# BatchNorm parameters
bngain = torch.randn((1, n_hidden))*0.1 + 1.0
bnbias = torch.randn((1, n_hidden))*0.1

# Note: I am initializating many of these parameters in non-standard ways
# because sometimes initializating with e.g. all zeros could mask an incorrect
# implementation of the backward pass.

parameters = [C, W1, b1, W2, b2, bngain, bnbias]
print(sum(p.nelement() for p in parameters)) # number of parameters in total
for p in parameters:
  p.requires_grad = True
""",
    9: """\
batch_size = 32
n = batch_size # a shorter variable also, for convenience
# construct a minibatch
ix = torch.randint(0, Xtr.shape[0], (batch_size,), generator=g)
Xb, Yb = Xtr[ix], Ytr[ix] # batch X,Y
""",
    10: """\
# forward pass, "chunkated" into smaller steps that are possible to backward one at a time

emb = C[Xb] # embed the characters into vectors
embcat = emb.view(emb.shape[0], -1) # concatenate the vectors
# Linear layer 1
hprebn = embcat @ W1 + b1 # hidden layer pre-activation
# BatchNorm layer
bnmeani = 1/n*hprebn.sum(0, keepdim=True)
bndiff = hprebn - bnmeani
bndiff2 = bndiff**2
bnvar = 1/(n-1)*(bndiff2).sum(0, keepdim=True) # note: Bessel's correction (dividing by n-1, not n)
bnvar_inv = (bnvar + 1e-5)**-0.5
bnraw = bndiff * bnvar_inv
hpreact = bngain * bnraw + bnbias
# Non-linearity
h = torch.tanh(hpreact) # hidden layer
# Linear layer 2
logits = h @ W2 + b2 # output layer
# cross entropy loss (same as F.cross_entropy(logits, Yb))
logit_maxes = logits.max(1, keepdim=True).values
norm_logits = logits - logit_maxes # subtract max for numerical stability
counts = norm_logits.exp()
counts_sum = counts.sum(1, keepdims=True)
counts_sum_inv = counts_sum**-1 # if I use (1.0 / counts_sum) instead then I can't get backprop to be bit exact...
probs = counts * counts_sum_inv
logprobs = probs.log()
loss = -logprobs[range(n), Yb].mean()

# PyTorch backward pass
for p in parameters:
  p.grad = None
for t in [logprobs, probs, counts, counts_sum, counts_sum_inv, # afaik there is no cleaner way
          norm_logits, logit_maxes, logits, h, hpreact, bnraw,
         bnvar_inv, bnvar, bndiff2, bndiff, hprebn, bnmeani,
         embcat, emb]:
  t.retain_grad()
loss.backward()
loss
""",
    11: """\
# Exercise 1: backprop through the whole thing manually,
# backpropagating through exactly all of the variables
# as they are defined in the forward pass above, one by one

dlogprobs = torch.zeros_like(logprobs)
dlogprobs[range(n), Yb] = -1.0/n
dprobs = (1.0 / probs) * dlogprobs
dcounts_sum_inv = (counts * dprobs).sum(1, keepdim=True)
dcounts = counts_sum_inv * dprobs
dcounts_sum = (-counts_sum**-2) * dcounts_sum_inv
dcounts += torch.ones_like(counts) * dcounts_sum
dnorm_logits = counts * dcounts
dlogits = dnorm_logits.clone()
dlogit_maxes = (-dnorm_logits).sum(1, keepdim=True)
dlogits += F.one_hot(logits.max(1).indices, num_classes=logits.shape[1]) * dlogit_maxes
dh = dlogits @ W2.T
dW2 = h.T @ dlogits
db2 = dlogits.sum(0)
dhpreact = (1.0 - h**2) * dh
dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
dbnraw = bngain * dhpreact
dbnbias = dhpreact.sum(0, keepdim=True)
dbndiff = bnvar_inv * dbnraw
dbnvar_inv = (bndiff * dbnraw).sum(0, keepdim=True)
dbnvar = (-0.5*(bnvar + 1e-5)**-1.5) * dbnvar_inv
dbndiff2 = (1.0/(n-1))*torch.ones_like(bndiff2) * dbnvar
dbndiff += (2*bndiff) * dbndiff2
dhprebn = dbndiff.clone()
dbnmeani = (-dbndiff).sum(0)
dhprebn += 1.0/n * (torch.ones_like(hprebn) * dbnmeani)
dembcat = dhprebn @ W1.T
dW1 = embcat.T @ dhprebn
db1 = dhprebn.sum(0)
demb = dembcat.view(emb.shape)
dC = torch.zeros_like(C)
for k in range(Xb.shape[0]):
  for j in range(Xb.shape[1]):
    ix = Xb[k,j]
    dC[ix] += demb[k,j]

cmp('logprobs', dlogprobs, logprobs)
cmp('probs', dprobs, probs)
cmp('counts_sum_inv', dcounts_sum_inv, counts_sum_inv)
cmp('counts_sum', dcounts_sum, counts_sum)
cmp('counts', dcounts, counts)
cmp('norm_logits', dnorm_logits, norm_logits)
cmp('logit_maxes', dlogit_maxes, logit_maxes)
cmp('logits', dlogits, logits)
cmp('h', dh, h)
cmp('W2', dW2, W2)
cmp('b2', db2, b2)
cmp('hpreact', dhpreact, hpreact)
cmp('bngain', dbngain, bngain)
cmp('bnbias', dbnbias, bnbias)
cmp('bnraw', dbnraw, bnraw)
cmp('bnvar_inv', dbnvar_inv, bnvar_inv)
cmp('bnvar', dbnvar, bnvar)
cmp('bndiff2', dbndiff2, bndiff2)
cmp('bndiff', dbndiff, bndiff)
cmp('bnmeani', dbnmeani, bnmeani)
cmp('hprebn', dhprebn, hprebn)
cmp('embcat', dembcat, embcat)
cmp('W1', dW1, W1)
cmp('b1', db1, b1)
cmp('emb', demb, emb)
cmp('C', dC, C)
""",
    12: """\
# Exercise 2: backprop through cross_entropy but all in one go
# to complete this challenge look at the mathematical expression of the loss,
# take the derivative, simplify the expression, and just write it out

# forward pass

# before:
# logit_maxes = logits.max(1, keepdim=True).values
# norm_logits = logits - logit_maxes # subtract max for numerical stability
# counts = norm_logits.exp()
# counts_sum = counts.sum(1, keepdims=True)
# counts_sum_inv = counts_sum**-1 # if I use (1.0 / counts_sum) instead then I can't get backprop to be bit exact...
# probs = counts * counts_sum_inv
# logprobs = probs.log()
# loss = -logprobs[range(n), Yb].mean()

# now:
loss_fast = F.cross_entropy(logits, Yb)
print(loss_fast.item(), 'diff:', (loss_fast - loss).item())
""",
    13: """\
# backward pass

dlogits = F.softmax(logits, 1)
dlogits[range(n), Yb] -= 1
dlogits /= n

cmp('logits', dlogits, logits) # I can only get approximate to be true, my maxdiff is 6e-9
""",
    14: """\
logits.shape, Yb.shape
""",
    15: """\
F.softmax(logits, 1)[0]
""",
    16: """\
dlogits[0] * n
""",
    17: """\
dlogits[0].sum()
""",
    19: """\
# Exercise 3: backprop through batchnorm but all in one go
# to complete this challenge look at the mathematical expression of the output of batchnorm,
# take the derivative w.r.t. its input, simplify the expression, and just write it out

# forward pass

# before:
# bnmeani = 1/n*hprebn.sum(0, keepdim=True)
# bndiff = hprebn - bnmeani
# bndiff2 = bndiff**2
# bnvar = 1/(n-1)*(bndiff2).sum(0, keepdim=True) # note: Bessel's correction (dividing by n-1, not n)
# bnvar_inv = (bnvar + 1e-5)**-0.5
# bnraw = bndiff * bnvar_inv
# hpreact = bngain * bnraw + bnbias

# now:
hpreact_fast = bngain * (hprebn - hprebn.mean(0, keepdim=True)) / torch.sqrt(hprebn.var(0, keepdim=True, unbiased=True) + 1e-5) + bnbias
print('max diff:', (hpreact_fast - hpreact).abs().max())
""",
    20: """\
# backward pass

# before we had:
# dbnraw = bngain * dhpreact
# dbndiff = bnvar_inv * dbnraw
# dbnvar_inv = (bndiff * dbnraw).sum(0, keepdim=True)
# dbnvar = (-0.5*(bnvar + 1e-5)**-1.5) * dbnvar_inv
# dbndiff2 = (1.0/(n-1))*torch.ones_like(bndiff2) * dbnvar
# dbndiff += (2*bndiff) * dbndiff2
# dhprebn = dbndiff.clone()
# dbnmeani = (-dbndiff).sum(0)
# dhprebn += 1.0/n * (torch.ones_like(hprebn) * dbnmeani)

# calculate dhprebn given dhpreact (i.e. backprop through the batchnorm)
# (you'll also need to use some of the variables from the forward pass up above)

dhprebn = bngain*bnvar_inv/n * (n*dhpreact - dhpreact.sum(0) - n/(n-1)*bnraw*(dhpreact*bnraw).sum(0))

cmp('hprebn', dhprebn, hprebn) # I can only get approximate to be true, my maxdiff is 9e-10
""",
    21: """\
dhprebn.shape, bngain.shape, bnvar_inv.shape, dbnraw.shape, dbnraw.sum(0).shape
""",
    22: """\
# Exercise 4: putting it all together!
# Train the MLP neural net with your own backward pass

# init
n_embd = 10 # the dimensionality of the character embedding vectors
n_hidden = 200 # the number of neurons in the hidden layer of the MLP

g = torch.Generator().manual_seed(2147483647) # for reproducibility
C  = torch.randn((vocab_size, n_embd),            generator=g)
# Layer 1
W1 = torch.randn((n_embd * block_size, n_hidden), generator=g) * (5/3)/((n_embd * block_size)**0.5)
b1 = torch.randn(n_hidden,                        generator=g) * 0.1
# Layer 2
W2 = torch.randn((n_hidden, vocab_size),          generator=g) * 0.1
b2 = torch.randn(vocab_size,                      generator=g) * 0.1
# BatchNorm parameters
bngain = torch.randn((1, n_hidden))*0.1 + 1.0
bnbias = torch.randn((1, n_hidden))*0.1

parameters = [C, W1, b1, W2, b2, bngain, bnbias]
print(sum(p.nelement() for p in parameters)) # number of parameters in total
for p in parameters:
  p.requires_grad = True

# same optimization as last time
max_steps = 200000
batch_size = 32
n = batch_size # convenience
lossi = []

# use this context manager for efficiency once your backward pass is written (TODO)
with torch.no_grad():

  # kick off optimization
  for i in range(max_steps):

    # minibatch construct
    ix = torch.randint(0, Xtr.shape[0], (batch_size,), generator=g)
    Xb, Yb = Xtr[ix], Ytr[ix] # batch X,Y

    # forward pass
    emb = C[Xb] # embed the characters into vectors
    embcat = emb.view(emb.shape[0], -1) # concatenate the vectors
    # Linear layer
    hprebn = embcat @ W1 + b1 # hidden layer pre-activation
    # BatchNorm layer
    # -------------------------------------------------------------
    bnmean = hprebn.mean(0, keepdim=True)
    bnvar = hprebn.var(0, keepdim=True, unbiased=True)
    bnvar_inv = (bnvar + 1e-5)**-0.5
    bnraw = (hprebn - bnmean) * bnvar_inv
    hpreact = bngain * bnraw + bnbias
    # -------------------------------------------------------------
    # Non-linearity
    h = torch.tanh(hpreact) # hidden layer
    logits = h @ W2 + b2 # output layer
    loss = F.cross_entropy(logits, Yb) # loss function

    # backward pass
    for p in parameters:
      p.grad = None
    #loss.backward() # use this for correctness comparisons, delete it later!

    # manual backprop! #swole_doge_meme
    # -----------------
    dlogits = F.softmax(logits, 1)
    dlogits[range(n), Yb] -= 1
    dlogits /= n
    # 2nd layer backprop
    dh = dlogits @ W2.T
    dW2 = h.T @ dlogits
    db2 = dlogits.sum(0)
    # tanh
    dhpreact = (1.0 - h**2) * dh
    # batchnorm backprop
    dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
    dbnbias = dhpreact.sum(0, keepdim=True)
    dhprebn = bngain*bnvar_inv/n * (n*dhpreact - dhpreact.sum(0) - n/(n-1)*bnraw*(dhpreact*bnraw).sum(0))
    # 1st layer
    dembcat = dhprebn @ W1.T
    dW1 = embcat.T @ dhprebn
    db1 = dhprebn.sum(0)
    # embedding
    demb = dembcat.view(emb.shape)
    dC = torch.zeros_like(C)
    for k in range(Xb.shape[0]):
      for j in range(Xb.shape[1]):
        ix = Xb[k,j]
        dC[ix] += demb[k,j]
    grads = [dC, dW1, db1, dW2, db2, dbngain, dbnbias]
    # -----------------

    # update
    lr = 0.1 if i < 100000 else 0.01 # step learning rate decay
    for p, grad in zip(parameters, grads):
      #p.data += -lr * p.grad # old way of cheems doge (using PyTorch grad from .backward())
      p.data += -lr * grad # new way of swole doge TODO: enable

    # track stats
    if i % 10000 == 0: # print every once in a while
      print(f'{i:7d}/{max_steps:7d}: {loss.item():.4f}')
    lossi.append(loss.log10().item())

  #   if i >= 100: # TODO: delete early breaking when you're ready to train the full net
  #     break
""",
    23: """\
# useful for checking your gradients
# for p,g in zip(parameters, grads):
#   cmp(str(tuple(p.shape)), g, p)
""",
    24: """\
# calibrate the batch norm at the end of training

with torch.no_grad():
  # pass the training set through
  emb = C[Xtr]
  embcat = emb.view(emb.shape[0], -1)
  hpreact = embcat @ W1 + b1
  # measure the mean/std over the entire training set
  bnmean = hpreact.mean(0, keepdim=True)
  bnvar = hpreact.var(0, keepdim=True, unbiased=True)
""",
    25: """\
# evaluate train and val loss

@torch.no_grad() # this decorator disables gradient tracking
def split_loss(split):
  x,y = {
    'train': (Xtr, Ytr),
    'val': (Xdev, Ydev),
    'test': (Xte, Yte),
  }[split]
  emb = C[x] # (N, block_size, n_embd)
  embcat = emb.view(emb.shape[0], -1) # concat into (N, block_size * n_embd)
  hpreact = embcat @ W1 + b1
  hpreact = bngain * (hpreact - bnmean) * (bnvar + 1e-5)**-0.5 + bnbias
  h = torch.tanh(hpreact) # (N, n_hidden)
  logits = h @ W2 + b2 # (N, vocab_size)
  loss = F.cross_entropy(logits, y)
  print(split, loss.item())

split_loss('train')
split_loss('val')
""",
    27: """\
# sample from the model
g = torch.Generator().manual_seed(2147483647 + 10)

for _ in range(20):

    out = []
    context = [0] * block_size # initialize with all ...
    while True:
      # ------------
      # forward pass:
      # Embedding
      emb = C[torch.tensor([context])] # (1,block_size,d)
      embcat = emb.view(emb.shape[0], -1) # concat into (N, block_size * n_embd)
      hpreact = embcat @ W1 + b1
      hpreact = bngain * (hpreact - bnmean) * (bnvar + 1e-5)**-0.5 + bnbias
      h = torch.tanh(hpreact) # (N, n_hidden)
      logits = h @ W2 + b2 # (N, vocab_size)
      # ------------
      # Sample
      probs = F.softmax(logits, dim=1)
      ix = torch.multinomial(probs, num_samples=1, generator=g).item()
      context = context[1:] + [ix]
      out.append(ix)
      if ix == 0:
        break

    print(''.join(itos[i] for i in out))
""",
}

# Exercise 1's cmp lines, in the notebook's order; down to b2 the notebook's backward is
# bit exact (the cross entropy and the second layer), after it approximately equal.
EXERCISE_1 = [
    "logprobs", "probs", "counts_sum_inv", "counts_sum", "counts", "norm_logits",
    "logit_maxes", "logits", "h", "W2", "b2", "hpreact", "bngain", "bnbias", "bnraw",
    "bnvar_inv", "bnvar", "bndiff2", "bndiff", "bnmeani", "hprebn", "embcat", "W1", "b1",
    "emb", "C",
]  # fmt: skip
BIT_EXACT = EXERCISE_1[: EXERCISE_1.index("b2") + 1]
# b1's gradient is 0 (the batchnorm after it subtracts the batch mean: "it's useless because
# of BN", cell 8), so both sides are rounding errors, and allclose's relative test says
# nothing of them (in float32 PyTorch's first step of exercise 4 prints approximate: False
# for it, maxdiff ~1e-8); it is held to the absolute bound only.
ROUNDING_ONLY = {"b1"}
PARAMETERS = ["C", "W1", "b1", "W2", "b2", "bngain", "bnbias"]  # cell 8's `parameters`

# One line that cell 7's cmp prints: name, exact, approximate, maxdiff.
CMP_LINE = re.compile(
    r"^(.*?)\s*\| exact: (True|False)\s*\| approximate: (True|False)\s*\| maxdiff: (\S+)$",
    re.MULTILINE,
)


class Kernel:
    """The notebook's cells run in order in one namespace, as Jupyter runs them."""

    def __init__(self, library: str) -> None:
        self.namespace: dict[str, Any] = {"__name__": "__main__"}
        self.run("imports", IMPORTS[library])

    def __getitem__(self, name: str) -> Any:
        return self.namespace[name]

    def run(self, cell: int | str, source: str | None = None) -> tuple[str, Any]:
        """Run cell `cell` (or `source` in its place): what it printed (printed again here)
        and the value of its last line when that is an expression, as Jupyter's Out[]."""
        source = CELLS[cell] if source is None else source
        filename = f"<{NOTEBOOK} cell {cell}>"
        # Tracebacks show the notebook's lines.
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        module = ast.parse(source, filename)
        last = module.body[-1] if module.body else None
        if isinstance(last, ast.Expr):
            module.body.pop()
        value = None
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                exec(compile(module, filename, "exec"), self.namespace)
                if isinstance(last, ast.Expr):
                    expression = compile(ast.Expression(last.value), filename, "eval")
                    value = eval(expression, self.namespace)
        finally:
            print(printed.getvalue(), end="")
        return printed.getvalue(), value

    def run_cells(self, *cells: int) -> None:
        for cell in cells:
            self.run(cell)


def _edited(source: str, old: str, new: str) -> str:
    """`source` with its one `old` replaced by `new` (fails if `old` is not there once)."""
    assert source.count(old) == 1, f"the notebook's {old!r} is not there once"
    return source.replace(old, new)


def _exercise_4(max_steps: int, check: bool = False) -> str:
    """Cell 22 for `max_steps` steps; with `check`, as the notebook says to check the manual
    backward against autograd: `loss.backward()` uncommented, the loop not under no_grad."""
    source = _edited(CELLS[22], "max_steps = 200000", f"max_steps = {max_steps}")
    if check:
        source = _edited(source, "with torch.no_grad():", "with torch.enable_grad():")
        source = _edited(source, "#loss.backward()", "loss.backward()")
    return source


def _cell_23_uncommented() -> str:
    source = _edited(CELLS[23], "# for p,g in", "for p,g in")
    return _edited(source, "#   cmp(", "  cmp(")


def _compared(printed: str) -> list[tuple[str, bool, bool, float]]:
    """The lines cmp printed: (name, exact, approximate, maxdiff)."""
    return [
        (name, exact == "True", close == "True", float(maxdiff))
        for name, exact, close, maxdiff in CMP_LINE.findall(printed)
    ]


def _np(t: Any) -> np.ndarray:
    return np.array(t.detach().numpy())


LIBRARIES = ["minigrad", "torch"]  # the `kernel` parameters


@pytest.fixture
def names_txt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """names.txt in a temporary working directory, where cell 3 reads it."""
    words = [
        line.strip().lower()
        for path in sorted(NAMES.glob("*.txt"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    (tmp_path / "names.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return words


@pytest.fixture
def kernel(request: pytest.FixtureRequest, names_txt: list[str]) -> Kernel:
    """A fresh kernel with the library of the parameter ("torch" is skipped without it)."""
    if request.param == "torch":
        request.getfixturevalue("real_torch")
    return Kernel(request.param)


# --------------------------------------------------------------------------------------
# The notebook in each library.


@pytest.mark.parametrize("kernel", LIBRARIES, indirect=True)
def test_exercise_1_backprop_through_every_intermediate(kernel: Kernel) -> None:
    kernel.run_cells(3, 4, 5)
    assert tuple(kernel["Xtr"].shape) == (tuple(kernel["Ytr"].shape)[0], 3)
    kernel.run_cells(7, 8, 9)
    _, loss = kernel.run(10)
    # The starting loss is near that of a uniform guess over the vocabulary.
    assert abs(loss.item() - math.log(kernel["vocab_size"])) < 1.0
    printed, _ = kernel.run(11)
    compared = _compared(printed)
    assert [name for name, *_ in compared] == EXERCISE_1
    for name, exact, close, maxdiff in compared:
        assert maxdiff < 1e-6, name
        assert close or name in ROUNDING_ONLY, f"{name}: not allclose to autograd's"
        if name in BIT_EXACT:
            assert exact, f"{name}: the manual gradient is not bit-exact"


@pytest.mark.parametrize("kernel", LIBRARIES, indirect=True)
def test_exercises_2_and_3_backprop_in_one_go(kernel: Kernel) -> None:
    kernel.run_cells(3, 4, 5, 7, 8, 9, 10, 11)
    n, n_hidden, vocab_size = kernel["n"], kernel["n_hidden"], kernel["vocab_size"]
    first_label = kernel["Yb"][0].item()

    # Exercise 2: F.cross_entropy gives the chunked loss; its backward in one go.
    printed, _ = kernel.run(12)
    loss_fast, word, diff = printed.split()
    assert word == "diff:" and abs(float(diff)) < 1e-5 * float(loss_fast)
    printed, _ = kernel.run(13)
    [(name, _, close, maxdiff)] = _compared(printed)
    assert name == "logits" and close and maxdiff < 1e-7
    _, shapes = kernel.run(14)
    assert [tuple(shape) for shape in shapes] == [(n, vocab_size), (n,)]
    _, probs_0 = kernel.run(15)
    np.testing.assert_allclose(_np(probs_0).sum(), 1.0, rtol=1e-6)
    _, dlogits_0 = kernel.run(16)  # the probabilities, less 1 at the right label
    expected = _np(probs_0) - np.eye(vocab_size)[first_label]
    np.testing.assert_allclose(_np(dlogits_0), expected, rtol=1e-5, atol=1e-7)
    _, total = kernel.run(17)
    assert abs(total.item()) < 1e-6

    # Exercise 3: batchnorm's forward and backward, each in one expression.
    printed, _ = kernel.run(19)  # max diff: tensor(4.7684e-07, grad_fn=<MaxBackward1>)
    match = re.fullmatch(r"max diff: \w+\(([-+.e\d]+).*\)\n", printed)
    assert match, printed
    assert float(match[1]) < 1e-5
    printed, _ = kernel.run(20)
    [(name, _, close, maxdiff)] = _compared(printed)
    assert name == "hprebn" and close and maxdiff < 1e-7
    _, shapes = kernel.run(21)
    assert [tuple(shape) for shape in shapes] == [
        (n, n_hidden), (1, n_hidden), (1, n_hidden), (n, n_hidden), (n_hidden,)
    ]  # fmt: skip


@pytest.mark.parametrize("kernel", LIBRARIES, indirect=True)
def test_exercise_4_first_step_by_hand_equals_autograd(kernel: Kernel) -> None:
    kernel.run_cells(3, 4, 5, 7)
    kernel.run("22, one step with loss.backward()", _exercise_4(max_steps=1, check=True))
    printed, _ = kernel.run("23, uncommented", _cell_23_uncommented())
    compared = _compared(printed)  # one line a parameter, named by its shape
    assert [shape for shape, *_ in compared] == [str(tuple(p.shape)) for p in kernel["parameters"]]
    for name, (shape, _, close, maxdiff) in zip(PARAMETERS, compared):
        assert maxdiff < 1e-6, (name, shape)
        assert close or name in ROUNDING_ONLY, f"{name} {shape}: not allclose to autograd's"


@pytest.mark.parametrize("kernel", LIBRARIES, indirect=True)
def test_exercise_4_trains_with_the_manual_backward(kernel: Kernel) -> None:
    kernel.run_cells(3, 4, 5, 7)
    printed, _ = kernel.run("22, 20 steps", _exercise_4(max_steps=20))
    assert printed.splitlines()[-1].startswith("      0/     20: ")
    lossi = np.asarray(kernel["lossi"])  # log10 of each step's loss
    assert lossi.shape == (20,) and np.all(np.isfinite(lossi))
    assert lossi[-5:].mean() < lossi[:5].mean() - 0.02, lossi

    kernel.run(24)  # the batchnorm calibrated on the training set
    printed, _ = kernel.run(25)
    losses = {split: float(value) for split, value in map(str.split, printed.splitlines())}
    assert sorted(losses) == ["train", "val"]
    assert losses["train"] < 10 ** lossi[0] and math.isfinite(losses["val"])

    printed, _ = kernel.run(27)
    samples = printed.splitlines()
    assert len(samples) == 20
    letters = set(kernel["itos"].values())
    assert all(s.endswith(".") and set(s) <= letters for s in samples), samples


# --------------------------------------------------------------------------------------
# minigrad against PyTorch, from the same parameters and batch.


def _exercises_1_to_3(kernel: Kernel, start: dict | None = None, dtype: str = "") -> tuple:
    """Run cells 3-13 and 19-20 and return (results, start): the values and gradients as
    NumPy arrays, and the parameters (after cell 8) and batch (after cell 9). Given a
    `start`, its values are copied in right after those cells instead, in `dtype`."""
    torch = kernel["torch"]
    kernel.run_cells(3, 4, 5, 7, 8)
    if start is None:
        start = {name: _np(kernel[name]) for name in PARAMETERS}
    else:
        for name in PARAMETERS:
            values = torch.tensor(start[name], dtype=getattr(torch, dtype))
            kernel.namespace[name] = values.requires_grad_()
        kernel.namespace["parameters"] = [kernel[name] for name in PARAMETERS]
    kernel.run(9)
    if "Xb" not in start:
        start.update(Xb=_np(kernel["Xb"]), Yb=_np(kernel["Yb"]))
    else:
        kernel.namespace.update(Xb=torch.tensor(start["Xb"]), Yb=torch.tensor(start["Yb"]))
    kernel.run_cells(10, 11)
    results = {"Xtr": _np(kernel["Xtr"]), "loss": _np(kernel["loss"])}
    for name in EXERCISE_1:
        results[f"d{name} (exercise 1)"] = _np(kernel[f"d{name}"])
        results[f"{name}.grad"] = _np(kernel[name].grad)
    kernel.run_cells(12, 13)
    results["loss_fast"] = _np(kernel["loss_fast"])
    results["dlogits (exercise 2)"] = _np(kernel["dlogits"])
    kernel.run_cells(19, 20)
    results["hpreact_fast"] = _np(kernel["hpreact_fast"])
    results["dhprebn (exercise 3)"] = _np(kernel["dhprebn"])
    return results, start


@pytest.mark.parametrize(
    ("dtype", "rtol", "atol"), [("float32", 1e-4, 1e-7), ("float64", 1e-10, 1e-14)]
)
def test_gradients_match_pytorch(
    real_torch: Any, names_txt: list[str], dtype: str, rtol: float, atol: float
) -> None:
    default = real_torch.get_default_dtype()
    real_torch.set_default_dtype(getattr(real_torch, dtype))
    try:
        expected, start = _exercises_1_to_3(Kernel("torch"))
    finally:
        real_torch.set_default_dtype(default)
    got, _ = _exercises_1_to_3(Kernel("minigrad"), start, dtype)
    # atol is for the gradients that are 0 but for rounding: b1's, and logit_maxes' (the
    # loss does not depend on the shift); the libraries' roundings differ by ~1e-8 in
    # float32 and ~2e-17 in float64 there. Elsewhere they agree to ~4e-7 and ~1e-15.
    assert sorted(got) == sorted(expected)
    np.testing.assert_array_equal(got["Xtr"], expected["Xtr"])
    for key, want in expected.items():
        if want.dtype.kind == "f":
            assert got[key].dtype == want.dtype == np.dtype(dtype), key
            np.testing.assert_allclose(got[key], want, rtol=rtol, atol=atol, err_msg=key)
