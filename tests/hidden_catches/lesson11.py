"""Answers that pass lesson 11's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not."""

CAUGHT = {
    # A NumPy array is stored as given, unconverted: right for the check's float arrays, but
    # an int array stays int (and so does its grad, into which 0.5 cannot be added).
    "Exercise 11.1": [
        "if len(parents) != len(backward_fns):\n"
        "    raise ValueError('one backward function per parent')\n"
        "if isinstance(data, np.ndarray):\n"
        "    self.data = data\n"
        "else:\n"
        "    self.data = np.asarray(data, dtype=float)\n"
        "self.grad = np.zeros_like(self.data)\n"
        "self.parents = tuple(parents)\n"
        "self.backward_fns = tuple(backward_fns)",
    ],
    # The recursive walk the exercise rules out, micrograd's depth-first search, made to
    # pass the visible check's 10,000-node chain by raising Python's recursion limit: the
    # hidden tests refuse that while backward runs, on a chain of 100,000 nodes.
    "Exercise 11.3": [
        "import sys\n"
        "sys.setrecursionlimit(100_000)\n"
        "order, seen = [], set()\n"
        "def visit(node):\n"
        "    if node not in seen:\n"
        "        seen.add(node)\n"
        "        for parent in node.parents:\n"
        "            visit(parent)\n"
        "        order.append(node)\n"
        "visit(output)\n"
        "output.grad = np.ones_like(output.data)\n"
        "for node in reversed(order):\n"
        "    for parent, backward_fn in zip(node.parents, node.backward_fns):\n"
        "        parent.grad = parent.grad + backward_fn(node.grad)",
    ],
    # The one-hot has labels.max() + 1 columns: right while the batch's labels reach the last
    # class (they do in every visible case), a shape error when they do not.
    "Exercise 11.5": [
        "n = x.shape[0]\n"
        "z1 = x @ W1.T + b1\n"
        "h = np.maximum(z1, 0)\n"
        "logits = h @ W2.T + b2\n"
        "shifted = logits - logits.max(axis=1, keepdims=True)\n"
        "log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))\n"
        "loss = -log_probs[np.arange(n), labels].mean()\n"
        "one_hot = np.eye(labels.max() + 1)[labels]\n"
        "d_logits = (np.exp(log_probs) - one_hot) / n\n"
        "d_h = d_logits @ W2\n"
        "d_z1 = d_h * (z1 > 0)\n"
        "grads = {'loss': loss, 'logits': d_logits, 'W2': d_logits.T @ h}\n"
        "grads.update({'b2': d_logits.sum(axis=0), 'h': d_h, 'z1': d_z1})\n"
        "grads.update({'W1': d_z1.T @ x, 'b1': d_z1.sum(axis=0), 'x': d_z1 @ W1})\n"
        "return grads",
    ],
    # The forward with np.log(1 + e^-|a|) instead of np.log1p: finite everywhere and right to
    # 1e-8, but 0 where softplus(a) ≈ e^a is tiny (a = -40): the grade checks the relative
    # error there.
    "Exercise 11.7": [
        "out = np.maximum(a.data, 0) + np.log(1 + np.exp(-np.abs(a.data)))\n"
        "backward_fns = (lambda grad_output: grad_output * np.exp(a.data - out),)",
    ],
}

# More answers only the hidden tests catch, for exercises that already have one above (a
# lesson run takes one answer per exercise): tests/test_grading_rules.py runs each through
# its check cell, hidden tests included.
ALSO_CAUGHT = {
    # The seed is added to output.grad instead of set: right for a fresh output, wrong when
    # the output already holds a gradient from an earlier backward in which it was inside.
    "Exercise 11.3": [
        "consumers = {}\n"
        "seen = {output}\n"
        "stack = [output]\n"
        "while stack:\n"
        "    node = stack.pop()\n"
        "    for parent in node.parents:\n"
        "        consumers[parent] = consumers.get(parent, 0) + 1\n"
        "        if parent not in seen:\n"
        "            seen.add(parent)\n"
        "            stack.append(parent)\n"
        "output.grad = output.grad + np.ones_like(output.data)\n"
        "ready = [output]\n"
        "while ready:\n"
        "    node = ready.pop()\n"
        "    for parent, backward_fn in zip(node.parents, node.backward_fns):\n"
        "        parent.grad = parent.grad + backward_fn(node.grad)\n"
        "        consumers[parent] -= 1\n"
        "        if consumers[parent] == 0:\n"
        "            ready.append(parent)",
    ],
}
