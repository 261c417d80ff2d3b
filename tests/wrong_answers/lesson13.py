"""Deliberately wrong answers for lesson 13's exercises (tests/test_lessons_run_on.py)."""

WRONG = {
    # Every saved reference counted with its own .nbytes: a shared buffer twice, the
    # weights' views as activations (what the lesson's first sum does).
    "Exercise 13.1": ["return sum(array.nbytes for array in arrays), 0"],
    # Backward recomputes from the saved inputs themselves, without detach: the inner
    # backward runs on into the graph before the block.
    "Exercise 13.2": [
        "ctx.block = block\nctx.save_for_backward(*inputs)\nreturn block(*inputs)",
        "inputs = ctx.saved_tensors\n"
        "with minigrad.enable_grad():\n"
        "    output = ctx.block(*inputs)\n"
        "output.backward(grad_output)\n"
        "return (None, *[x.grad for x in inputs])",
    ],
}
