"""Answers that pass lesson 13's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not."""

CAUGHT = {
    # Parameters compared by their own id, not their owner's: right while every parameter
    # owns its memory, wrong for parameters that are views into one flat buffer.
    "Exercise 13.1": [
        """
def owner(array):
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array

weights = {id(p) for p in parameters}
buffers = {id(owner(a)): owner(a) for a in arrays}
activations = sum(b.nbytes for key, b in buffers.items() if key not in weights)
kept_weights = sum(b.nbytes for key, b in buffers.items() if key in weights)
return activations, kept_weights
""",
    ],
}
