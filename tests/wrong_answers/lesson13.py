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
    # Checkpoints around the two halves only, plain blocks inside (a flat schedule of two
    # segments, which holds n/2 outputs while a half is recomputed), and a prediction that
    # forgets the output of the block being recomputed.
    "Exercise 13.3": [
        "if len(blocks) == 1:\n"
        "    return blocks[0](h)\n"
        "middle = len(blocks) // 2\n"
        "h = checkpoint(lambda v: run_blocks(blocks[:middle], v), h)\n"
        "return checkpoint(lambda v: run_blocks(blocks[middle:], v), h)",
        "return int(np.log2(n)) + 1",
    ],
}
