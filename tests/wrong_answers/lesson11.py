"""Deliberately wrong answers for lesson 11's exercises (tests/test_lessons_run_on.py)."""

WRONG = {
    # grad is the data array itself: adding a gradient into it would change the value.
    "Exercise 11.1": [
        """
if len(parents) != len(backward_fns):
    raise ValueError("one backward function per parent")
self.data = np.asarray(data, dtype=float)
self.grad = self.data
self.parents = tuple(parents)
self.backward_fns = tuple(backward_fns)
"""
    ],
    # sub and div right; sigmoid's derivative by the quotient rule, e^-a / (1 + e^-a)²,
    # computing exp(-a) again: right near 0, nan at a = -800, which the visible check tries.
    # (The other slips, tanh's rule and the sign errors, are in tests/test_course_lesson11.py.)
    "Exercise 11.2": [
        "backward_fns = (lambda grad_output: grad_output, lambda grad_output: -grad_output)",
        """
backward_fns = (
    lambda grad_output: grad_output / b.data,
    lambda grad_output: -grad_output * a.data / b.data**2,
)
""",
        """
backward_fns = (
    lambda grad_output: grad_output * np.exp(-a.data) / (1 + np.exp(-a.data)) ** 2,
)
""",
    ],
    # The walk overwrites .grad instead of adding the shares into it.
    "Exercise 11.3": [
        """
consumers = {}
seen = {output}
stack = [output]
while stack:
    node = stack.pop()
    for parent in node.parents:
        consumers[parent] = consumers.get(parent, 0) + 1
        if parent not in seen:
            seen.add(parent)
            stack.append(parent)
output.grad = np.ones_like(output.data)
ready = [output]
while ready:
    node = ready.pop()
    for parent, backward_fn in zip(node.parents, node.backward_fns):
        parent.grad = backward_fn(node.grad)
        consumers[parent] -= 1
        if consumers[parent] == 0:
            ready.append(parent)
"""
    ],
    # What minigrad with retain_graph=True would give: only the leaf accumulating.
    "Exercise 11.4": ["predicted_a_grad = 4.0\npredicted_x_grad = 24.0"],
    # The loss summed over the batch: every gradient N times too large (no 1/N).
    "Exercise 11.5": [
        """
n = x.shape[0]
z1 = x @ W1.T + b1
h = np.maximum(z1, 0)
logits = h @ W2.T + b2
shifted = logits - logits.max(axis=1, keepdims=True)
log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
loss = -log_probs[np.arange(n), labels].mean()
d_logits = np.exp(log_probs)
d_logits[np.arange(n), labels] -= 1
d_h = d_logits @ W2
d_z1 = d_h * (z1 > 0)
grads = {"loss": loss, "logits": d_logits, "W2": d_logits.T @ h, "b2": d_logits.sum(axis=0)}
grads.update({"h": d_h, "z1": d_z1, "W1": d_z1.T @ x, "b1": d_z1.sum(axis=0)})
grads["x"] = d_z1 @ W1
return grads
"""
    ],
    # Updates the caller's arrays in place (no copies), then raises (a typo in a key): the
    # cells after it must still train from the starting weights and draw minigrad's curve,
    # since they call the course's solutions on a copy of `start`, never this function.
    "Exercise 11.6": [
        """
losses = []
for _ in range(steps):
    grads = grad_fn(x, labels, **params)
    for name in params:
        params[name] -= lr * grads[name]
    losses.append(grads["losses"])
return params, losses
"""
    ],
    # The naive backward, e^a / (1 + e^a): right near 0, inf/inf = nan at a = 800.
    "Exercise 11.7": [
        """
out = np.maximum(a.data, 0) + np.log1p(np.exp(-np.abs(a.data)))
backward_fns = (lambda grad_output: grad_output * np.exp(a.data) / (1 + np.exp(a.data)),)
"""
    ],
}
